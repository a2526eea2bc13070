// The official `openai` client against the edge on Node and a real sidecar running the scripted
// model: the chat stream contract end to end, through real llama.cpp inference.
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkChatStream, checkCompletionStream } from "../support/contract.js";
import { startStack, type Stack } from "../support/edge.js";
import { DRAFT_MODEL_MAX } from "../../sidecar/engine/llama/draft-model.js";
import { readMetrics } from "../support/sidecar.js";
import { readEvents } from "../support/sse.js";
import { CHAT_REPLY, STORY, chatPromptTokens } from "../support/scripted.js";
import { DEFAULT_LOOKUP_DRAFT } from "../../sidecar/engine/llama/prompt-lookup.js";

let stack: Stack;
let client: OpenAI;
beforeAll(async () => {
  stack = await startStack();
  client = new OpenAI({ baseURL: stack.baseURL, apiKey: "not-needed", maxRetries: 0 });
});
afterAll(async () => {
  await stack?.stop();
});

describe("chat completions", () => {
  it("streams the role frame, content chunks without role, the terminal chunk", async () => {
    const stream = await client.chat.completions.create({
      model: "local-model",
      messages: [{ role: "user", content: "Hello!" }],
      stream: true,
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    // "A first chunk with choices[0].delta containing {"role": "assistant"} and no content."
    expect(chunks[0]?.choices[0]?.delta).toEqual({ role: "assistant" });
    const middle = chunks.slice(1, -1);
    for (const c of middle) {
      expect(c.choices[0]?.delta.role).toBeUndefined();
      expect(c.choices[0]?.finish_reason).toBeNull();
    }
    expect(middle.map((c) => c.choices[0]?.delta.content).join("")).toBe(CHAT_REPLY);
    // "A terminal chunk with choices[0].delta equal to {} and choices[0].finish_reason set to "stop""
    expect(chunks.at(-1)?.choices[0]).toMatchObject({ delta: {}, finish_reason: "stop" });
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
    expect(chunks.every((c) => c.object === "chat.completion.chunk" && c.model === "scripted")).toBe(true);
  });

  it("answers without streaming, with usage equal to the sidecar's counts", async () => {
    const completion = await client.chat.completions.create({
      model: "local-model",
      messages: [{ role: "user", content: "Hello!" }],
    });
    expect(completion.object).toBe("chat.completion");
    expect(completion.choices[0]?.message).toMatchObject({ role: "assistant", content: CHAT_REPLY });
    expect(completion.choices[0]?.finish_reason).toBe("stop");
    const promptTokens = await chatPromptTokens(stack.sidecar.url, "Hello!");
    expect(completion.usage).toMatchObject({
      prompt_tokens: promptTokens,
      completion_tokens: 16,
      total_tokens: promptTokens + 16,
    });
  });

  it("adds one usage chunk with empty choices when stream_options.include_usage is set", async () => {
    const stream = await client.chat.completions.create({
      messages: [{ role: "user", content: "Hello!" }],
      model: "m",
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    const last = chunks.at(-1);
    expect(last?.choices).toEqual([]);
    expect(last?.usage).toMatchObject({
      prompt_tokens: await chatPromptTokens(stack.sidecar.url, "Hello!"),
      completion_tokens: 16,
    });
    expect(chunks.slice(0, -1).every((c) => c.usage === undefined || c.usage === null)).toBe(true);
  });

  it("accumulates through the SDK's stream helper", async () => {
    const runner = client.chat.completions.stream({ model: "m", messages: [{ role: "user", content: "Hello!" }] });
    const final = await runner.finalChatCompletion();
    expect(final.choices[0]?.message.content).toBe(CHAT_REPLY);
  });

  it("ends with finish_reason length at max_tokens and never leaks a stop sequence", async () => {
    const short = await client.chat.completions.create({
      model: "m",
      messages: [{ role: "user", content: "Hi" }],
      max_tokens: 3,
    });
    expect(short.choices[0]).toMatchObject({ message: { content: "It is sunny" }, finish_reason: "length" });
    const stopped = await client.chat.completions.create({
      model: "m",
      messages: [{ role: "user", content: "Hi" }],
      stop: ["Tokyo"],
    });
    expect(stopped.choices[0]).toMatchObject({ message: { content: "It is sunny in " }, finish_reason: "stop" });
  });

  it("reports chat logprobs with each token's bytes", async () => {
    const completion = await client.chat.completions.create({
      model: "m",
      messages: [{ role: "user", content: "Hi" }],
      logprobs: true,
      top_logprobs: 2,
      temperature: 0,
    });
    const content = completion.choices[0]?.logprobs?.content ?? [];
    expect(content).toHaveLength(16);
    expect(content.slice(0, 2).map((t) => t.token)).toEqual(["It", " is"]);
    // "°" is two byte tokens: each entry carries its own byte.
    expect(content.slice(6, 8).map((t) => t.bytes)).toEqual([[0xc2], [0xb0]]);
    for (const t of content) {
      expect(t.logprob).toBeLessThanOrEqual(0);
      expect(t.top_logprobs).toHaveLength(2);
    }
  });

  it("raises the SDK's error for a prompt the sidecar refuses, streaming and not", async () => {
    const huge = "word ".repeat(400);
    await expect(
      client.chat.completions.create({ model: "m", messages: [{ role: "user", content: huge }] }),
    ).rejects.toMatchObject({
      status: 400,
      error: { type: "invalid_request_error" },
    });
    const stream = await client.chat.completions.create({
      model: "m",
      messages: [{ role: "user", content: huge }],
      stream: true,
    });
    await expect(
      (async () => {
        for await (const _ of stream) expect.unreachable("no chunk may precede the error");
      })(),
    ).rejects.toThrow(/maximum context length is 256 tokens/);
  });
});

describe("completions", () => {
  it("streams the scripted story with whole characters only", async () => {
    const stream = await client.completions.create({
      model: "local-model",
      prompt: "Once upon a time",
      max_tokens: 32,
      stream: true,
    });
    const texts: string[] = [];
    let finish: string | null = null;
    for await (const chunk of stream) {
      expect(chunk.object).toBe("text_completion");
      texts.push(chunk.choices[0]?.text ?? "");
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(texts.join("")).toBe(STORY);
    for (const t of texts) expect(t).not.toContain("\uFFFD");
    expect(finish).toBe("stop");
  });

  it("answers without streaming, with usage", async () => {
    const completion = await client.completions.create({ model: "m", prompt: "Once upon a time" });
    expect(completion.choices[0]).toMatchObject({ text: STORY, finish_reason: "stop", index: 0 });
    expect(completion.usage).toMatchObject({ prompt_tokens: 5, completion_tokens: 11, total_tokens: 16 });
  });

  it("reports legacy logprobs with text offsets", async () => {
    const completion = await client.completions.create({
      model: "m",
      prompt: "Once upon a time",
      logprobs: 2,
      max_tokens: 3,
      temperature: 0,
    });
    const logprobs = completion.choices[0]?.logprobs;
    expect(logprobs?.tokens).toEqual([" there", " lived", " a"]);
    // Counted from the start of the prompt "Once upon a time" (16 characters), as OpenAI counts.
    expect(logprobs?.text_offset).toEqual([16, 22, 28]);
    expect(logprobs?.token_logprobs?.every((l) => l <= 0)).toBe(true);
    expect(logprobs?.top_logprobs?.map((t) => Object.keys(t ?? {}).length)).toEqual([2, 2, 2]);
  });
});

describe("streaming equals non-streaming", () => {
  it("gives the same text for the same seed on a random-weight model", async () => {
    const random = await startStack({ model: (await import("../../gguf/models.js")).modelPath("random-tiny") });
    try {
      const c = new OpenAI({ baseURL: random.baseURL, apiKey: "x", maxRetries: 0 });
      for (const seed of [1, 2, 3]) {
        const body = { model: "m", prompt: "Once upon a time", max_tokens: 40, temperature: 1, seed } as const;
        const whole = await c.completions.create(body);
        const stream = await c.completions.create({ ...body, stream: true });
        let text = "";
        for await (const chunk of stream) text += chunk.choices[0]?.text ?? "";
        expect(text).toBe(whole.choices[0]?.text);
        expect(whole.usage?.completion_tokens).toBe(40);
      }
    } finally {
      await random.stop();
    }
  });
});

describe("raw frames", () => {
  it("follow the chat contract byte for byte in order", async () => {
    const response = await fetch(`${stack.baseURL}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ messages: [{ role: "user", content: "Hello!" }], max_tokens: 32, stream: true }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const events = await readEvents(response.body);
    expect(checkChatStream(events)).toMatchObject({
      text: CHAT_REPLY,
      finishReason: "stop",
      done: true,
      error: undefined,
    });
  });

  it("follow the completions contract", async () => {
    const response = await fetch(`${stack.baseURL}/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ prompt: "Once upon a time", max_tokens: 32, stream: true }),
    });
    const events = await readEvents(response.body);
    expect(checkCompletionStream(events)).toMatchObject({
      text: STORY,
      finishReason: "stop",
      done: true,
      error: undefined,
    });
  });
});

describe("a client that leaves", () => {
  it("stops its generation in the sidecar", async () => {
    const long = await startStack({ sequences: 1, contextSize: 4096 });
    try {
      const controller = new AbortController();
      const response = await fetch(`${long.baseURL}/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ prompt: "Let us sing. Sing", stream: true }),
        signal: controller.signal,
      });
      const reader = response.body!.getReader();
      await reader.read();
      await reader.read();
      controller.abort();
      await expect
        .poll(async () => (await readMetrics(long.sidecar.url)).sidecar_generations_active, { timeout: 5000 })
        .toBe(0);
      const metrics = await readMetrics(long.sidecar.url);
      expect(metrics.sidecar_generations_aborted_total).toBe(1);
      expect(metrics.sidecar_tokens_generated_total).toBeLessThan(1000);
    } finally {
      await long.stop();
    }
  });
});

/** The first model's speculation in /v1/info. */
async function speculationAt(edgeUrl: string) {
  const body = (await (await fetch(`${edgeUrl}/v1/info`)).json()) as {
    models: {
      speculation: { type: string; draft_max: number; accepted_tokens: number; drafted_tokens: number } | null;
    }[];
  };
  return body.models[0]?.speculation;
}

/**
 * A streamed completion of the scripted model's song: 40 tokens of " la". Seeded: a seeded reply drafts by its own
 * tokens alone, so what it drafts hangs on no timing (sidecar/engine/llama/prompt-lookup.ts).
 */
async function sing(openai: OpenAI): Promise<string> {
  const stream = await openai.completions.create({
    model: "scripted",
    prompt: "Let us sing. Sing",
    max_tokens: 40,
    seed: 1,
    stream: true,
  });
  let text = "";
  for await (const chunk of stream) text += chunk.choices[0]?.text ?? "";
  return text;
}

describe("speculative decoding by prompt lookup", () => {
  it("streams the reply it gives without drafts, and /v1/info counts what it drafted and took", async () => {
    const before = await speculationAt(stack.edge.url);
    expect(await sing(client)).toBe(" la".repeat(40));
    const after = await speculationAt(stack.edge.url);
    expect(after).toMatchObject({ type: "lookup", draft_max: DEFAULT_LOOKUP_DRAFT });
    expect((after?.accepted_tokens ?? 0) - (before?.accepted_tokens ?? 0)).toBeGreaterThanOrEqual(30);
    expect(after?.drafted_tokens ?? 0).toBeGreaterThanOrEqual(after?.accepted_tokens ?? 0);
  });
});

describe("speculative decoding with a draft model (--model-draft)", () => {
  it("streams the reply it gives without drafts, and /v1/info says the draft model drafted and took", async () => {
    const { modelPath } = await import("../../gguf/models.js");
    const drafted = await startStack({ modelDraft: modelPath("scripted"), sequences: 1, contextSize: 4096 });
    try {
      expect(await sing(new OpenAI({ baseURL: drafted.baseURL, apiKey: "unused" }))).toBe(" la".repeat(40));
      const speculation = await speculationAt(drafted.edge.url);
      expect(speculation).toMatchObject({ type: "draft", draft_max: DRAFT_MODEL_MAX });
      expect(speculation?.accepted_tokens).toBeGreaterThanOrEqual(30);
    } finally {
      await drafted.stop();
    }
  });
});
