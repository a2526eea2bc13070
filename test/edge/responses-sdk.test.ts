// The official OpenAI client (openai 6.49.0) on /v1/responses, in process, with the fake
// sidecar; and its Responses stream helper reading the golden transcripts at hostile
// chunk boundaries.
import { Code } from "@connectrpc/connect";
import OpenAI, { type APIError } from "openai";
import { describe, expect, it } from "vitest";
import { FIXED_ID, inProcessFetch, testApp } from "../support/app.js";
import { delay, fail, finish, start, token, type Step } from "../support/fake-sidecar.js";
import { goldenBytes, hostileSplits } from "../support/sse.js";
import { openaiReplaying } from "../support/replay.js";

const script: Step[] = [
  start("tiny-llama", 9, 3),
  token("Hi"),
  token(" there"),
  finish("stop", { promptTokens: 9, completionTokens: 2, cachedTokens: 3 }),
];
const usage = {
  input_tokens: 9,
  input_tokens_details: { cached_tokens: 3 },
  output_tokens: 2,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: 11,
};

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

describe("responses.create", () => {
  it("non-streaming: the Response, output_text", async () => {
    const { openai } = client();
    const response = await openai.responses.create({ model: "local-model", input: "Hello!" });
    expect(response).toMatchObject({
      id: `resp_${FIXED_ID}`,
      object: "response",
      status: "completed",
      model: "tiny-llama",
      usage,
    });
    expect(response.output_text).toBe("Hi there");
    expect(response.output).toEqual([
      {
        id: `msg_${FIXED_ID}`,
        type: "message",
        status: "completed",
        role: "assistant",
        content: [{ type: "output_text", text: "Hi there", annotations: [], logprobs: [] }],
      },
    ]);
  });

  it("streaming: typed events with increasing sequence numbers; deltas add up to output_text", async () => {
    const { openai } = client();
    const stream = await openai.responses.create({ model: "local-model", input: "Hello!", stream: true });
    const types: string[] = [];
    const numbers: number[] = [];
    let deltas = "";
    let final: OpenAI.Responses.Response | undefined;
    for await (const event of stream) {
      types.push(event.type);
      numbers.push(event.sequence_number);
      if (event.type === "response.output_text.delta") deltas += event.delta;
      if (event.type === "response.completed") final = event.response;
    }
    expect(types).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed",
    ]);
    expect(numbers).toEqual(types.map((_, i) => i));
    expect(deltas).toBe("Hi there");
    expect(final?.usage).toEqual(usage);
  });
});

describe("responses.stream()", () => {
  it("accumulates the final response, with snapshots on every delta", async () => {
    const { openai } = client();
    const stream = openai.responses.stream({ model: "local-model", input: "Hello!" });
    const snapshots: string[] = [];
    stream.on("response.output_text.delta", (event) => snapshots.push(event.snapshot));
    const final = await stream.finalResponse();
    expect(snapshots).toEqual(["Hi", "Hi there"]);
    expect(final.output_text).toBe("Hi there");
    expect(final.status).toBe("completed");
    expect(final.usage).toEqual(usage);
  });

  it("max_output_tokens: an incomplete response", async () => {
    const { openai } = client([start(), token("It"), token(" is"), finish("length", { completionTokens: 2 })]);
    const final = await openai.responses.stream({ model: "m", input: "x", max_output_tokens: 2 }).finalResponse();
    expect(final).toMatchObject({
      status: "incomplete",
      incomplete_details: { reason: "max_output_tokens" },
      output_text: "It is",
    });
  });

  it("a mid-stream failure: response.failed with error, the text so far kept", async () => {
    const { openai } = client([start(), token("Hi"), fail(Code.Internal, "engine failed")]);
    const final = await openai.responses.stream({ model: "m", input: "x" }).finalResponse();
    expect(final).toMatchObject({
      status: "failed",
      error: { code: "server_error", message: "engine failed" },
      output_text: "Hi",
    });
  });

  it("breaking out of the loop aborts the sidecar call", async () => {
    const { openai, sidecar } = client([start(), token("Hi"), delay(60_000), token("never"), finish()]);
    const stream = await openai.responses.create({ model: "m", input: "x", stream: true });
    for await (const event of stream) {
      if (event.type === "response.output_text.delta") break;
    }
    const deadline = Date.now() + 2000;
    while (sidecar.lastCall?.signal?.aborted !== true && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 5));
    expect(sidecar.lastCall?.signal?.aborted).toBe(true);
  });
});

describe("HTTP errors become the SDK's typed errors", () => {
  it(
    "400 for previous_response_id (nothing is stored) and for a prompt the sidecar refuses, streaming " + "too",
    async () => {
      const { openai } = client();
      const stored = await openai.responses
        .create({ model: "m", input: "x", previous_response_id: "resp_1" })
        .catch((e: unknown) => e);
      expect(stored).toBeInstanceOf(OpenAI.BadRequestError);
      expect((stored as APIError).param).toBe("previous_response_id");
      // Nothing is stored here, so no previous response is found: the code proxies recover from.
      expect((stored as APIError).code).toBe("previous_response_not_found");
      const refused = client([fail(Code.InvalidArgument, "the prompt does not fit the context")]);
      const error = await refused.openai.responses
        .stream({ model: "m", input: "x" })
        .finalResponse()
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect((error as APIError).message).toContain("the prompt does not fit the context");
    },
  );

  it("429 with Retry-After when the sidecar is busy", async () => {
    const { openai } = client([fail(Code.ResourceExhausted, "all sequences are busy")]);
    const error = await openai.responses.create({ model: "m", input: "x", stream: true }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    expect((error as APIError).headers?.get("retry-after")).toBe("1");
  });
});

describe("the stream helper reads the golden transcripts at hostile chunk boundaries", () => {
  it.each([
    ["responses-plain", "Hi there 🦙", "completed"],
    ["responses-max-tokens", "Hi there", "incomplete"],
    ["responses-held-back", "It is sunny in Tok", "completed"],
    ["responses-mid-stream-error", "Hi", "failed"],
  ] as const)("%s", async (name, text, status) => {
    for (const [how, chunks] of hostileSplits(goldenBytes(name))) {
      const openai = openaiReplaying(chunks);
      const final = await openai.responses.stream({ model: "m", input: "x" }).finalResponse();
      expect(final.output_text, how).toBe(text);
      expect(final.status, how).toBe(status);
    }
  });
});
