// `n` choices (docs/contract.md, "Several choices") through the official `openai` client against the
// edge on Node and a real sidecar: chat and completions, streamed and not, each choice exactly the
// reply one choice would get (temperature 0; at temperature 1 the one-choice reply with seed + i),
// chunks indexed and interleaved, a finish per choice, usage once with the completions summed;
// more choices than sequences is a 400 naming `n`; a client that leaves stops every choice.
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ensureModels, modelPath } from "../../gguf/models.js";
import { startStack, type Stack } from "../support/edge.js";
import {
  CHAT_REPLY,
  CHAT_REPLY_TOKENS,
  STORY,
  TOOL_ARGUMENT_FRAGMENTS,
  chatPromptTokens,
} from "../support/scripted.js";

type ChatChunk = OpenAI.Chat.Completions.ChatCompletionChunk;
type CompletionChunk = OpenAI.Completions.Completion;

const SEQUENCES = 3;
const hello = [{ role: "user" as const, content: "Hello!" }];

/** Each index's concatenated chunk texts, and where in the stream each index's chunks are. */
function perIndex<C extends { choices: readonly { index: number }[] }>(
  chunks: readonly C[],
  text: (choice: C["choices"][number]) => string | null | undefined,
) {
  const texts: string[] = [];
  const positions: number[][] = [];
  for (const [at, chunk] of chunks.entries()) {
    for (const choice of chunk.choices) {
      texts[choice.index] = (texts[choice.index] ?? "") + (text(choice) ?? "");
      positions[choice.index] = [...(positions[choice.index] ?? []), at];
    }
  }
  return { texts, positions };
}

async function readAll<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of stream) out.push(item);
  return out;
}

describe("n choices of the scripted model", () => {
  let stack: Stack;
  let client: OpenAI;
  beforeAll(async () => {
    stack = await startStack({ sequences: SEQUENCES, contextSize: 512 });
    client = new OpenAI({ baseURL: stack.baseURL, apiKey: "not-needed", maxRetries: 0 });
  });
  afterAll(() => stack?.stop());

  it("answers a chat with its choices in index order, and usage with the completions summed", async () => {
    const completion = await client.chat.completions.create({ model: "m", messages: hello, n: 3, temperature: 0 });
    expect(completion.choices.map((c) => [c.index, c.message.content, c.finish_reason])).toEqual(
      [0, 1, 2].map((i) => [i, CHAT_REPLY, "stop"]),
    );
    const promptTokens = await chatPromptTokens(stack.sidecar.url, "Hello!");
    expect(completion.usage).toMatchObject({
      prompt_tokens: promptTokens,
      completion_tokens: 3 * CHAT_REPLY_TOKENS,
      total_tokens: promptTokens + 3 * CHAT_REPLY_TOKENS,
    });
  });

  it(
    "streams a chat's choices interleaved, each with its role frame and finish_reason chunk, then one usage " + "chunk",
    async () => {
      const stream = await client.chat.completions.create({
        model: "m",
        messages: hello,
        n: 3,
        temperature: 0,
        stream: true,
        stream_options: { include_usage: true },
      });
      const chunks = await readAll<ChatChunk>(stream);
      // Every chunk holds one choice, but the usage chunk: none.
      const usage = chunks.at(-1);
      expect(usage?.choices).toEqual([]);
      const promptTokens = await chatPromptTokens(stack.sidecar.url, "Hello!");
      expect(usage?.usage).toMatchObject({ prompt_tokens: promptTokens, completion_tokens: 3 * CHAT_REPLY_TOKENS });
      const body = chunks.slice(0, -1);
      expect(body.every((c) => c.choices.length === 1 && (c.usage ?? undefined) === undefined)).toBe(true);
      expect(body.slice(0, 3).map((c) => [c.choices[0]?.index, c.choices[0]?.delta])).toEqual(
        [0, 1, 2].map((i) => [i, { role: "assistant" }]),
      );
      const { texts, positions } = perIndex(body, (c) => c.delta.content);
      expect(texts).toEqual([CHAT_REPLY, CHAT_REPLY, CHAT_REPLY]);
      for (const [index, at] of positions.entries()) {
        const finishes = at.filter((p) => body[p]?.choices[0]?.finish_reason !== null);
        // One finish_reason chunk per choice, its last, with an empty delta.
        expect(finishes).toEqual([at.at(-1)]);
        expect(body[at.at(-1) as number]?.choices[0]).toMatchObject({ index, delta: {}, finish_reason: "stop" });
      }
      // Interleaved: the last choice begins its text before the first has ended it.
      expect(positions[2]?.[1]).toBeLessThan(positions[0]?.at(-1) as number);
    },
  );

  it("accumulates every choice through the SDK's stream helper", async () => {
    const final = await client.chat.completions
      .stream({ model: "m", messages: hello, n: 2, temperature: 0 })
      .finalChatCompletion();
    expect(final.choices.map((c) => [c.index, c.message.content, c.finish_reason])).toEqual([
      [0, CHAT_REPLY, "stop"],
      [1, CHAT_REPLY, "stop"],
    ]);
  });

  it("applies stop sequences and logprobs to each choice", async () => {
    const one = await client.chat.completions.create({
      model: "m",
      messages: hello,
      temperature: 0,
      logprobs: true,
      top_logprobs: 2,
      stop: ["Tokyo"],
    });
    const many = await client.chat.completions.create({
      model: "m",
      messages: hello,
      n: 2,
      temperature: 0,
      logprobs: true,
      top_logprobs: 2,
      stop: ["Tokyo"],
    });
    for (const choice of many.choices) {
      expect(choice).toMatchObject({ message: { content: "It is sunny in " }, finish_reason: "stop" });
      expect(choice.logprobs).toEqual(one.choices[0]?.logprobs);
    }
  });

  it("streams and answers completions, each choice the one-choice text, with legacy logprobs of its own", async () => {
    const one = await client.completions.create({
      model: "m",
      prompt: "Once upon a time",
      temperature: 0,
      logprobs: 1,
    });
    const many = await client.completions.create({
      model: "m",
      prompt: "Once upon a time",
      temperature: 0,
      logprobs: 1,
      n: 2,
    });
    expect(many.choices.map((c) => [c.index, c.text, c.finish_reason])).toEqual([
      [0, STORY, "stop"],
      [1, STORY, "stop"],
    ]);
    for (const choice of many.choices) expect(choice.logprobs).toEqual(one.choices[0]?.logprobs);
    // " there lived a tiny llama (🦙)." is 11 tokens, after the 5 of the prompt.
    expect(many.usage).toMatchObject({ prompt_tokens: 5, completion_tokens: 22, total_tokens: 27 });
    // The prompt scored once (echo with logprobs), then copied: every choice echoes it with its logprobs.
    const scored = { model: "m", prompt: "Once upon a time", temperature: 0, logprobs: 1, echo: true };
    const oneScored = await client.completions.create(scored);
    const manyScored = await client.completions.create({ ...scored, n: 2 });
    for (const choice of manyScored.choices)
      expect([choice.text, choice.logprobs]).toEqual([oneScored.choices[0]?.text, oneScored.choices[0]?.logprobs]);
    const stream = await client.completions.create({
      model: "m",
      prompt: "Once upon a time",
      temperature: 0,
      n: 2,
      stream: true,
      echo: true,
    });
    const chunks = await readAll<CompletionChunk>(stream);
    const { texts, positions } = perIndex(chunks, (c) => c.text);
    expect(texts).toEqual([`Once upon a time${STORY}`, `Once upon a time${STORY}`]);
    for (const [index, at] of positions.entries())
      expect(chunks[at.at(-1) as number]?.choices[0]).toMatchObject({ index, text: "", finish_reason: "stop" });
  });

  it("refuses more choices than the model has sequences with a 400 naming n, streamed or not", async () => {
    for (const stream of [false, true]) {
      const error = await client.chat.completions
        .create({ model: "m", messages: hello, n: SEQUENCES + 1, stream })
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect(error).toMatchObject({ status: 400, param: "n", code: "integer_above_max_value" });
      expect((error as Error).message).toContain(`at most ${SEQUENCES} choices`);
    }
    const completions = await client.completions
      .create({ model: "m", prompt: "Once upon a time", n: SEQUENCES + 1 })
      .catch((e: unknown) => e);
    expect(completions).toMatchObject({ status: 400, param: "n" });
  });

  it("refuses several choices where the answer holds one: a resumable stream, a stored /c1 turn", async () => {
    const resumable = await client.chat.completions
      .create({ model: "m", messages: hello, n: 2, stream: true }, { headers: { "x-resumable": "true" } })
      .catch((e: unknown) => e);
    expect(resumable).toMatchObject({ status: 400, param: "n" });
    const turn = await fetch(`${stack.edge.url}/c1/chat`, {
      method: "POST",
      body: JSON.stringify({ messages: hello, n: 2 }),
    });
    expect(turn.status).toBe(400);
    expect(((await turn.json()) as { error: { param: string } }).error.param).toBe("n");
  });
});

describe("n choices of the tools model", () => {
  let stack: Stack;
  let client: OpenAI;
  beforeAll(async () => {
    stack = await startStack({ model: modelPath("tools"), sequences: 2, contextSize: 2048 });
    client = new OpenAI({ baseURL: stack.baseURL, apiKey: "not-needed", maxRetries: 0 });
  });
  afterAll(() => stack?.stop());

  it("gives each choice its own tool call, under its own index, streamed and not", async () => {
    const tools = [
      {
        type: "function" as const,
        function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } },
      },
    ];
    const request = {
      model: "m",
      messages: [{ role: "user" as const, content: "Weather in Tokyo?" }],
      tools,
      n: 2,
      temperature: 0,
    };
    const whole = await client.chat.completions.create(request);
    for (const choice of whole.choices) {
      expect(choice.finish_reason).toBe("tool_calls");
      expect(
        choice.message.tool_calls?.map((c) => (c.type === "function" ? [c.function.name, c.function.arguments] : [])),
      ).toEqual([["get_weather", TOOL_ARGUMENT_FRAGMENTS.join("")]]);
    }
    const ids = whole.choices.map((c) => c.message.tool_calls?.[0]?.id);
    expect(new Set(ids).size).toBe(2);
    const final = await client.chat.completions.stream(request).finalChatCompletion();
    expect(final.choices.map((c) => [c.index, c.finish_reason, c.message.tool_calls?.[0]?.function.arguments])).toEqual(
      [
        [0, "tool_calls", TOOL_ARGUMENT_FRAGMENTS.join("")],
        [1, "tool_calls", TOOL_ARGUMENT_FRAGMENTS.join("")],
      ],
    );
  });
});

describe("n choices of a random-weight model", () => {
  let stack: Stack;
  let client: OpenAI;
  beforeAll(async () => {
    const { "random-tiny": model } = await ensureModels("models", ["random-tiny"]);
    stack = await startStack({ model, sequences: SEQUENCES, contextSize: 512 });
    client = new OpenAI({ baseURL: stack.baseURL, apiKey: "not-needed", maxRetries: 0 });
  });
  afterAll(() => stack?.stop());

  it("samples choice i of a completion with seed + i, streamed and not", async () => {
    const request = { model: "m", prompt: "Once upon a time", temperature: 1, top_k: 0, max_tokens: 10, seed: 41 };
    const ones = await Promise.all(
      [41, 42, 43].map(async (seed) => (await client.completions.create({ ...request, seed })).choices[0]?.text),
    );
    expect(new Set(ones).size).toBeGreaterThan(1);
    const whole = await client.completions.create({ ...request, n: 3 });
    expect(whole.choices.map((c) => c.text)).toEqual(ones);
    const chunks = await readAll<CompletionChunk>(await client.completions.create({ ...request, n: 3, stream: true }));
    expect(perIndex(chunks, (c) => c.text).texts).toEqual(ones);
  });

  it("samples choice i of a chat with seed + i", async () => {
    const request = { model: "m", messages: hello, temperature: 1, top_k: 0, max_tokens: 10, seed: 7 };
    const ones = await Promise.all(
      [7, 8].map(
        async (seed) => (await client.chat.completions.create({ ...request, seed })).choices[0]?.message.content,
      ),
    );
    const chunks = await readAll<ChatChunk>(await client.chat.completions.create({ ...request, n: 2, stream: true }));
    expect(perIndex(chunks, (c) => c.delta.content).texts).toEqual(ones);
  });

  it("stops every choice when the client leaves", async () => {
    const metrics = stack.sidecar.metrics;
    const generated = metrics.tokensGenerated;
    const stream = await client.completions.create({
      model: "m",
      prompt: "Once upon a time",
      n: 3,
      max_tokens: 400,
      stream: true,
    });
    const seen = new Set<number>();
    for await (const chunk of stream) {
      for (const choice of chunk.choices) seen.add(choice.index);
      if (seen.size === 3) break;
    }
    await vi.waitFor(() => expect(metrics.generationsActive).toBe(0), { timeout: 10_000 });
    expect(stack.sidecar.models[0]?.pool.busy).toBe(0);
    expect(metrics.tokensGenerated - generated).toBeLessThan(3 * 400);
  });
});
