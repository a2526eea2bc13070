// The official OpenAI client (openai 6.49.0) against the edge, in process.
import { Code } from "@connectrpc/connect";
import OpenAI, { APIError } from "openai";
import { describe, expect, it } from "vitest";
import { FIXED_CREATED, inProcessFetch, testApp } from "../support/app.js";
import { catalogued, delay, fail, finish, start, token, type Step } from "../support/fake-sidecar.js";
import { goldenBytes, hostileSplits } from "../support/sse.js";
import { openaiReplaying } from "../support/replay.js";

const script: Step[] = [
  start("tiny-llama", 9),
  token("Hi", { logprob: -0.25, top: [["Hi", -0.25]] }),
  token(" there", { logprob: -0.5, top: [[" there", -0.5]] }),
  finish("stop", { promptTokens: 9, completionTokens: 2 }),
];

function client(steps: Step[] = script) {
  const { app, sidecar } = testApp(steps);
  const openai = new OpenAI({
    baseURL: "http://edge.test/v1",
    apiKey: "not-needed",
    fetch: inProcessFetch(app),
    maxRetries: 0,
  });
  return { openai, sidecar };
}

describe("chat.completions", () => {
  it("streams (the README's client loop)", async () => {
    const { openai } = client();
    const stream = await openai.chat.completions.create({
      model: "local-model",
      messages: [{ role: "user", content: "Hello!" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = "";
    const reasons: (string | null | undefined)[] = [];
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? "";
      if (chunk.choices[0] !== undefined) reasons.push(chunk.choices[0].finish_reason);
      if (chunk.usage) usage = chunk.usage;
      expect(chunk.id).toBe("chatcmpl-test0000000000000000id01");
    }
    expect(text).toBe("Hi there");
    expect(reasons).toEqual([null, null, null, "stop"]);
    expect(usage).toEqual({
      prompt_tokens: 9,
      completion_tokens: 2,
      total_tokens: 11,
      prompt_tokens_details: { cached_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0 },
    });
  });

  it("non-streaming, with logprobs", async () => {
    const { openai } = client();
    const completion = await openai.chat.completions.create({
      model: "local-model",
      messages: [{ role: "user", content: "Hello!" }],
      logprobs: true,
      top_logprobs: 1,
    });
    expect(completion.choices[0]?.message.content).toBe("Hi there");
    expect(completion.choices[0]?.finish_reason).toBe("stop");
    expect(completion.choices[0]?.logprobs?.content?.map((c) => c.token)).toEqual(["Hi", " there"]);
    expect(completion.created).toBe(FIXED_CREATED);
    expect(completion.model).toBe("tiny-llama");
  });

  it("the stream helper accumulates the same message", async () => {
    const { openai } = client();
    const runner = openai.chat.completions.stream({ model: "m", messages: [{ role: "user", content: "Hello!" }] });
    const final = await runner.finalChatCompletion();
    expect(final.choices[0]?.message.content).toBe("Hi there");
    expect(final.choices[0]?.finish_reason).toBe("stop");
  });

  it("raises APIError on the in-stream `event: error` (request refused after the stream began)", async () => {
    const { openai } = client([fail(Code.InvalidArgument, "the prompt does not fit the context")]);
    const stream = await openai.chat.completions.create({
      model: "m",
      messages: [{ role: "user", content: "x" }],
      stream: true,
    });
    const seen: unknown[] = [];
    const error = await (async () => {
      try {
        for await (const chunk of stream) seen.push(chunk);
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    expect(seen).toEqual([]);
    expect(error).toBeInstanceOf(APIError);
    expect((error as APIError).message).toContain("the prompt does not fit the context");
    expect((error as APIError).type).toBe("invalid_request_error");
  });

  it("raises APIError on a mid-stream failure after some text", async () => {
    const { openai } = client([start(), token("Hi"), fail(Code.Internal, "engine failed")]);
    const stream = await openai.chat.completions.create({
      model: "m",
      messages: [{ role: "user", content: "x" }],
      stream: true,
    });
    let text = "";
    await expect(
      (async () => {
        for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? "";
      })(),
    ).rejects.toThrow(/engine failed/);
    expect(text).toBe("Hi");
  });

  it("HTTP errors become the SDK's typed errors", async () => {
    const bad = client();
    await expect(bad.openai.chat.completions.create({ model: "m", messages: [], stream: true })).rejects.toBeInstanceOf(
      OpenAI.BadRequestError,
    );
    const busy = client([fail(Code.ResourceExhausted, "all sequences are busy")]);
    const error = await busy.openai.chat.completions
      .create({ model: "m", messages: [{ role: "user", content: "x" }], stream: true })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    expect((error as APIError).headers?.get("retry-after")).toBe("1");
    const down = client([fail(Code.Unavailable, "loading the model")]);
    await expect(
      down.openai.chat.completions.create({ model: "m", messages: [{ role: "user", content: "x" }] }),
    ).rejects.toBeInstanceOf(OpenAI.InternalServerError);
  });

  it("breaking out of the loop aborts the sidecar call", async () => {
    const { openai, sidecar } = client([start(), token("Hi"), delay(60_000), token("never"), finish()]);
    const stream = await openai.chat.completions.create({
      model: "m",
      messages: [{ role: "user", content: "x" }],
      stream: true,
    });
    for await (const chunk of stream) {
      if (chunk.choices[0]?.delta?.content === "Hi") break;
    }
    const deadline = Date.now() + 2000;
    while (sidecar.lastCall?.signal?.aborted !== true && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 5));
    expect(sidecar.lastCall?.signal?.aborted).toBe(true);
  });
});

describe("completions", () => {
  it("streams", async () => {
    const { openai } = client();
    const stream = await openai.completions.create({
      model: "m",
      prompt: "Once upon a time",
      max_tokens: 32,
      stream: true,
    });
    let text = "";
    let reason: string | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.text ?? "";
      reason = chunk.choices[0]?.finish_reason ?? reason;
    }
    expect(text).toBe("Hi there");
    expect(reason).toBe("stop");
  });

  it("non-streaming, with legacy logprobs", async () => {
    const { openai } = client();
    const completion = await openai.completions.create({ model: "m", prompt: "Once upon a time", logprobs: 1 });
    expect(completion.choices[0]?.text).toBe("Hi there");
    expect(completion.choices[0]?.logprobs?.tokens).toEqual(["Hi", " there"]);
    // From the start of the prompt (16 characters), as OpenAI counts.
    expect(completion.choices[0]?.logprobs?.text_offset).toEqual([16, 18]);
    expect(completion.usage?.total_tokens).toBe(11);
  });

  it("raises APIError on the in-stream error event", async () => {
    const { openai } = client([fail(Code.InvalidArgument, "the prompt does not fit the context")]);
    const stream = await openai.completions.create({ model: "m", prompt: "x", stream: true });
    await expect(
      (async () => {
        for await (const _ of stream);
      })(),
    ).rejects.toBeInstanceOf(APIError);
  });
});

describe("models", () => {
  it("lists and retrieves", async () => {
    const { openai } = client();
    const list = [];
    for await (const model of openai.models.list()) list.push(model.id);
    expect(list).toEqual(["fake-model"]);
    expect((await openai.models.retrieve("fake-model")).owned_by).toBe("local");
    await expect(openai.models.retrieve("nope")).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });

  it("lists a catalogue with each model's status, and retrieves one by an alias", async () => {
    const { openai, sidecar } = client();
    sidecar.models = [
      catalogued("demo", { created: FIXED_CREATED, memoryBytes: 1024 }),
      catalogued("coder", { status: "loading", progress: 0.5, aliases: ["code"] }),
      catalogued("broken", { status: "failed", failure: "not a GGUF file" }),
    ];
    const list: OpenAI.Model[] = [];
    for await (const model of openai.models.list()) list.push(model);
    expect(list).toEqual([
      {
        id: "demo",
        object: "model",
        created: FIXED_CREATED,
        owned_by: "local",
        status: { value: "loaded" },
        context_length: 4096,
        memory_bytes: 1024,
        aliases: [],
        kind: "generate",
      },
      {
        id: "coder",
        object: "model",
        created: 0,
        owned_by: "local",
        status: { value: "loading", progress: 0.5 },
        context_length: 4096,
        aliases: ["code"],
        kind: "generate",
      },
      {
        id: "broken",
        object: "model",
        created: 0,
        owned_by: "local",
        status: { value: "failed", reason: "not a GGUF file" },
        context_length: 4096,
        aliases: [],
        kind: "generate",
      },
    ]);
    const coder = await openai.models.retrieve("code");
    expect([coder.id, (coder as unknown as { status: unknown }).status]).toEqual([
      "coder",
      { value: "loading", progress: 0.5 },
    ]);
  });
});

describe("the SDK reads the golden transcripts at hostile chunk boundaries", () => {
  const goldens = [
    ["chat-plain", "Hi there 🦙"],
    ["chat-usage", "Hi there"],
    ["chat-logprobs", "Hi🦙"],
  ] as const;

  it.each(goldens)("%s", async (name, expected) => {
    const bytes = goldenBytes(name);
    for (const [how, chunks] of hostileSplits(bytes)) {
      const openai = openaiReplaying(chunks);
      const stream = await openai.chat.completions.create({
        model: "m",
        messages: [{ role: "user", content: "x" }],
        stream: true,
      });
      let text = "";
      for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? "";
      expect(text, how).toBe(expected);
    }
  });

  it("chat-validation-error raises at every split", async () => {
    const bytes = goldenBytes("chat-validation-error");
    for (const [how, chunks] of hostileSplits(bytes)) {
      const openai = openaiReplaying(chunks);
      const stream = await openai.chat.completions.create({
        model: "m",
        messages: [{ role: "user", content: "x" }],
        stream: true,
      });
      await expect(
        (async () => {
          for await (const _ of stream);
        })(),
        how,
      ).rejects.toBeInstanceOf(APIError);
    }
  });
});
