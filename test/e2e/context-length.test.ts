// A prompt that does not fit the context, through the real sidecar: OpenAI's
// `context_length_exceeded` code and wording (with the counts) on every OpenAI endpoint, streaming
// or not, raised by the official client; Anthropic's "prompt is too long: N tokens > M maximum".
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type Stack } from "../support/edge.js";

const long = "word ".repeat(400);

describe("a prompt longer than the context", () => {
  let stack: Stack;
  let openai: OpenAI;
  let anthropic: Anthropic;
  let context = 0;
  beforeAll(async () => {
    stack = await startStack({ contextSize: 64 });
    context = stack.sidecar.models[0]!.contextSize; // llama.cpp rounds the context up (to 256)
    openai = new OpenAI({ baseURL: stack.baseURL, apiKey: "x", maxRetries: 0 });
    anthropic = new Anthropic({ baseURL: stack.edge.url, apiKey: "x", maxRetries: 0 });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const openAiMessage = () =>
    new RegExp(
      `^This model's maximum context length is ${context} tokens\\. However, your messages resulted in \\d+ ` +
        `tokens\\. Please ` +
        `reduce the length of the messages\\.$`,
    );

  it("chat completions: 400 context_length_exceeded, and on a stream the SDK raises it", async () => {
    const refused = await openai.chat.completions
      .create({ model: "m", messages: [{ role: "user", content: long }] })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect((refused as InstanceType<typeof OpenAI.BadRequestError>).code).toBe("context_length_exceeded");
    expect((refused as Error).message).toContain(`maximum context length is ${context} tokens`);
    const stream = await openai.chat.completions.create({
      model: "m",
      messages: [{ role: "user", content: long }],
      stream: true,
    });
    const inStream = await (async () => {
      for await (const _chunk of stream) void _chunk;
    })().catch((e: unknown) => e);
    expect(inStream).toBeInstanceOf(OpenAI.APIError);
    expect((inStream as Error).message).toContain(`maximum context length is ${context} tokens`);
  });

  it("completions and Responses: the same code and wording", async () => {
    for (const call of [
      () => openai.completions.create({ model: "m", prompt: long }),
      () => openai.responses.create({ model: "m", input: long }),
    ]) {
      const refused = (await call().catch((e: unknown) => e)) as InstanceType<typeof OpenAI.BadRequestError>;
      expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
      expect(refused.code).toBe("context_length_exceeded");
      expect((refused.error as { message: string }).message).toMatch(openAiMessage());
    }
  });

  it("Anthropic Messages: 400 with Anthropic's wording and the counts", async () => {
    const refused = (await anthropic.messages
      .create({ model: "m", max_tokens: 8, messages: [{ role: "user", content: long }] })
      .catch((e: unknown) => e)) as InstanceType<typeof Anthropic.BadRequestError>;
    expect(refused).toBeInstanceOf(Anthropic.BadRequestError);
    expect(refused.error).toMatchObject({
      type: "error",
      error: {
        type: "invalid_request_error",
        message: expect.stringMatching(new RegExp(`^prompt is too long: \\d+ tokens > ${context} maximum$`)),
      },
    });
  });
});
