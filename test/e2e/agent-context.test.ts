// The default context takes a coding agent's prompt: with CONTEXT_SIZE left at `auto` the
// sidecar sizes each sequence to the model's trained context (memory permitting), so the demo
// model answers a 40,000-token first request, through the edge, with the official client.
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { modelPath } from "../../gguf/models.js";
import { startStack, type Stack } from "../support/edge.js";

describe("the default context", () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ model: modelPath("demo"), contextSize: "auto", sequences: 4 });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it("is the demo model's trained context, for every sequence", () => {
    const [model] = stack.sidecar.models;
    expect(model?.trainedContextSize).toBe(131_072);
    expect(model?.contextSize).toBe(131_072);
  });

  it("takes a 40,000-token agent prompt out of the box", async () => {
    const client = new OpenAI({ baseURL: stack.baseURL, apiKey: "x", maxRetries: 0 });
    const system = "You are a coding agent working in a repository. ".repeat(920);
    const chat = await client.chat.completions.create({
      model: "demo",
      messages: [
        { role: "system", content: system },
        { role: "user", content: "Say hi" },
      ],
    });
    expect(chat.usage?.prompt_tokens).toBeGreaterThan(40_000);
    expect(chat.choices[0]?.message.content).toBe("Hi there");
  });
});
