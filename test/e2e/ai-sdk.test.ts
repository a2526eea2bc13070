// The Vercel AI SDK's OpenAI-compatible provider (@ai-sdk/openai-compatible with `ai`) against
// the edge on Node and a real sidecar running the `tools` scripted model: a whole agent loop —
// the model calls get_weather, the SDK runs the tool, the model answers with reasoning — with
// generateText and streamText, and no error parts in the stream.
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateText, stepCountIs, streamText, tool } from "ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { modelPath } from "../../gguf/models.js";
import { startStack, type Stack } from "../support/edge.js";
import { TOOL_RESULT_REASONING, TOOLS_ANSWER } from "../support/scripted.js";

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ model: modelPath("tools"), contextSize: 2048 });
});
afterAll(async () => {
  await stack?.stop();
});

function setup() {
  const provider = createOpenAICompatible({ name: "local", baseURL: stack.baseURL, apiKey: "not-needed" });
  const calls: unknown[] = [];
  const tools = {
    get_weather: tool({
      description: "Get weather for a city",
      inputSchema: z.object({ city: z.string() }),
      execute: async (input) => {
        calls.push(input);
        return { temperature: 22, sky: "sunny" };
      },
    }),
  };
  return { model: provider.chatModel("local-model"), tools, calls };
}

describe("the AI SDK's OpenAI-compatible provider", () => {
  it("generateText runs the agent loop: call, tool result, reasoned answer", async () => {
    const { model, tools, calls } = setup();
    const result = await generateText({ model, tools, prompt: "Weather in Tokyo?", stopWhen: stepCountIs(3) });
    expect(calls).toEqual([{ city: "Tokyo" }]);
    expect(result.steps).toHaveLength(2);
    expect(result.steps[0]?.finishReason).toBe("tool-calls");
    expect(result.steps[0]?.toolCalls).toMatchObject([{ toolName: "get_weather", input: { city: "Tokyo" } }]);
    expect(result.text).toBe(TOOLS_ANSWER);
    expect(result.reasoningText).toBe(TOOL_RESULT_REASONING);
    expect(result.finishReason).toBe("stop");
  });

  it("streamText: the same loop streamed, reasoning and text parts apart, no error parts", async () => {
    const { model, tools, calls } = setup();
    const result = streamText({ model, tools, prompt: "Weather in Tokyo?", stopWhen: stepCountIs(3) });
    const kinds: string[] = [];
    let text = "";
    let reasoning = "";
    const errors: unknown[] = [];
    for await (const part of result.fullStream) {
      kinds.push(part.type);
      if (part.type === "text-delta") text += part.text;
      if (part.type === "reasoning-delta") reasoning += part.text;
      if (part.type === "error") errors.push(part.error);
    }
    expect(errors).toEqual([]);
    expect(calls).toEqual([{ city: "Tokyo" }]);
    expect(kinds).toContain("tool-call");
    expect(kinds).toContain("tool-result");
    expect(text).toBe(TOOLS_ANSWER);
    expect(reasoning).toBe(TOOL_RESULT_REASONING);
    expect(await result.finishReason).toBe("stop");
  });
});
