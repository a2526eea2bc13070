// The official Anthropic client (@anthropic-ai/sdk 1.12.0) against the edge, in process,
// with the fake sidecar; and the SDK reading the golden transcripts at hostile chunk
// boundaries.
import Anthropic, { APIError } from "@anthropic-ai/sdk";
import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { FIXED_ID, inProcessFetch, testApp } from "../support/app.js";
import { delay, fail, finish, start, token, type Step } from "../support/fake-sidecar.js";
import { goldenBytes, hostileSplits } from "../support/sse.js";
import { anthropicReplaying } from "../support/replay.js";

const script: Step[] = [
  start("tiny-llama", 9, 3),
  token("Hi"),
  token(" there"),
  finish("stop", { promptTokens: 9, completionTokens: 2, cachedTokens: 3 }),
];
const params = { model: "local-model", max_tokens: 64, messages: [{ role: "user" as const, content: "Hello!" }] };
const usage = { input_tokens: 6, cache_creation_input_tokens: 0, cache_read_input_tokens: 3, output_tokens: 2 };

function client(steps: Step[] = script) {
  const { app, sidecar } = testApp(steps);
  const anthropic = new Anthropic({
    baseURL: "http://edge.test",
    apiKey: "sk-ant-x",
    fetch: inProcessFetch(app),
    maxRetries: 0,
  });
  return { anthropic, sidecar };
}

describe("messages.create", () => {
  it("non-streaming: the Message with the request id", async () => {
    const { anthropic } = client();
    const message = await anthropic.messages.create(params);
    expect(message).toMatchObject({
      id: `msg_${FIXED_ID}`,
      type: "message",
      role: "assistant",
      model: "tiny-llama",
      content: [{ type: "text", text: "Hi there" }],
      stop_reason: "end_turn",
      stop_sequence: null,
      usage,
    });
    expect(message._request_id).toBe(`req_${FIXED_ID}`);
  });

  it("streaming: the raw events in order", async () => {
    const { anthropic } = client();
    const stream = await anthropic.messages.create({ ...params, stream: true });
    const events = [];
    for await (const event of stream) events.push(event);
    expect(events).toEqual([
      {
        type: "message_start",
        message: {
          id: `msg_${FIXED_ID}`,
          type: "message",
          role: "assistant",
          model: "tiny-llama",
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { ...usage, output_tokens: 0 },
        },
      },
      { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
      { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Hi" } },
      { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: " there" } },
      { type: "content_block_stop", index: 0 },
      { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 2 } },
      { type: "message_stop" },
    ]);
  });
});

describe("messages.stream()", () => {
  it("accumulates the final message and emits text", async () => {
    const { anthropic } = client();
    const stream = anthropic.messages.stream(params);
    const texts: string[] = [];
    stream.on("text", (text) => texts.push(text));
    const message = await stream.finalMessage();
    expect(texts).toEqual(["Hi", " there"]);
    expect(message.content).toEqual([{ type: "text", text: "Hi there" }]);
    expect(message.stop_reason).toBe("end_turn");
    expect(message.usage).toMatchObject(usage);
    expect(await stream.finalText()).toBe("Hi there");
  });

  it("max_tokens and stop_sequence endings", async () => {
    const cut = client([start(), token("It"), token(" is"), finish("length", { completionTokens: 2 })]);
    const short = await cut.anthropic.messages.stream({ ...params, max_tokens: 2 }).finalMessage();
    expect(short).toMatchObject({
      stop_reason: "max_tokens",
      stop_sequence: null,
      content: [{ type: "text", text: "It is" }],
    });
    const stopped = client([
      start(),
      token("It is sunny in "),
      token("", { piece: "Tokyo" }),
      finish("stop", { completionTokens: 2, stopSequence: "Tokyo" }),
    ]);
    const message = await stopped.anthropic.messages.stream({ ...params, stop_sequences: ["Tokyo"] }).finalMessage();
    expect(message).toMatchObject({
      stop_reason: "stop_sequence",
      stop_sequence: "Tokyo",
      content: [{ type: "text", text: "It is sunny in " }],
    });
  });

  it("a mid-stream failure rejects with the SDK's APIError of type api_error", async () => {
    const { anthropic } = client([start(), token("Hi"), fail(Code.Internal, "engine failed")]);
    const stream = anthropic.messages.stream(params);
    const texts: string[] = [];
    stream.on("text", (text) => texts.push(text));
    const error = await stream.finalMessage().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APIError);
    expect((error as APIError).type).toBe("api_error");
    expect((error as APIError).message).toContain("engine failed");
    expect(texts).toEqual(["Hi"]);
  });

  it("breaking out of the loop aborts the sidecar call", async () => {
    const { anthropic, sidecar } = client([start(), token("Hi"), delay(60_000), token("never"), finish()]);
    const stream = await anthropic.messages.create({ ...params, stream: true });
    for await (const event of stream) {
      if (event.type === "content_block_delta") break;
    }
    const deadline = Date.now() + 2000;
    while (sidecar.lastCall?.signal?.aborted !== true && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 5));
    expect(sidecar.lastCall?.signal?.aborted).toBe(true);
  });
});

describe("HTTP errors become the SDK's typed errors", () => {
  it("400 invalid_request_error, for a bad body and for a prompt the sidecar refuses, streaming too", async () => {
    const { anthropic } = client();
    const missing = await anthropic.messages.create({ ...params, max_tokens: 0 }).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(Anthropic.BadRequestError);
    expect((missing as APIError).type).toBe("invalid_request_error");
    expect((missing as APIError).requestID).toBe(`req_${FIXED_ID}`);
    const refused = client([fail(Code.InvalidArgument, "the prompt does not fit the context")]);
    const error = await refused.anthropic.messages
      .stream(params)
      .finalMessage()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    expect((error as APIError).message).toContain("the prompt does not fit the context");
  });

  it("529 overloaded_error with Retry-After when the sidecar is busy", async () => {
    const { anthropic } = client([fail(Code.ResourceExhausted, "all sequences are busy")]);
    const error = await anthropic.messages.create({ ...params, stream: true }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.OverloadedError);
    expect((error as APIError).type).toBe("overloaded_error");
    expect((error as APIError).headers?.get("retry-after")).toBe("1");
  });

  it("404 not_found_error for an unknown model", async () => {
    const { anthropic } = client([fail(Code.NotFound, 'model "x" is not served here')]);
    await expect(anthropic.messages.create(params)).rejects.toBeInstanceOf(Anthropic.NotFoundError);
  });
});

describe("messages.countTokens", () => {
  it("returns the sidecar's count", async () => {
    const { anthropic, sidecar } = client();
    sidecar.tokenizeResult = Array.from({ length: 12 }, (_, i) => i);
    expect(
      await anthropic.messages.countTokens({ model: "local-model", system: "Be brief.", messages: params.messages }),
    ).toMatchObject({
      input_tokens: 12,
    });
  });
});

describe("the SDK reads the golden transcripts at hostile chunk boundaries", () => {
  it.each([
    ["anthropic-plain", "Hi there 🦙", "end_turn"],
    ["anthropic-max-tokens", "Hi there", "max_tokens"],
    ["anthropic-stop-sequence", "It is sunny in ", "stop_sequence"],
  ] as const)("%s", async (name, text, reason) => {
    for (const [how, chunks] of hostileSplits(goldenBytes(name))) {
      const message = await anthropicReplaying(chunks).messages.stream(params).finalMessage();
      expect(message.content, how).toEqual([{ type: "text", text }]);
      expect(message.stop_reason, how).toBe(reason);
    }
  });

  it("anthropic-mid-stream-error rejects at every split", async () => {
    for (const [how, chunks] of hostileSplits(goldenBytes("anthropic-mid-stream-error"))) {
      await expect(anthropicReplaying(chunks).messages.stream(params).finalMessage(), how).rejects.toBeInstanceOf(
        APIError,
      );
    }
  });
});
