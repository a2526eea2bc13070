// Golden SSE transcripts: the exact bytes of each stream, with a fixed id and clock.
// Regenerate with UPDATE_GOLDEN=1 npx vitest run test/edge/golden.test.ts (and read the diff).
//
// Seed 000 (the primary wire contract), "Chat stream contract":
//   1. A first chunk with choices[0].delta containing {"role": "assistant"} and no content.
//   2. Zero or more content chunks with choices[0].delta.content set to the text decoded in
//      that step and choices[0].delta.role omitted.
//   3. A terminal chunk with choices[0].delta equal to {} and choices[0].finish_reason set to
//      "stop", "length", or "tool_calls".
//   4. A final data: [DONE] SSE frame.
//   "If validation fails before generation, the stream ends with an error SSE event carrying
//    the validation message and no role frame is emitted."
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { testApp, post } from "../support/app.js";
import { checkChatStream, checkCompletionStream, type ContractSummary } from "../support/contract.js";
import { fail, finish, start, token, type Step } from "../support/fake-sidecar.js";
import { hostileSplits, parseChunks, parseText } from "../support/sse.js";

interface Scenario {
  name: string;
  path: "/v1/chat/completions" | "/v1/completions";
  body: Record<string, unknown>;
  script: Step[];
  expected: Partial<ContractSummary>;
}

const llama = new Uint8Array([0xf0, 0x9f, 0xa6, 0x99]); // 🦙, split over two tokens below
const chat = { model: "local-model", messages: [{ role: "user", content: "Hello!" }], stream: true };
const completion = { prompt: "Once upon a time", max_tokens: 32, stream: true };

const scenarios: Scenario[] = [
  {
    name: "chat-plain",
    path: "/v1/chat/completions",
    body: chat,
    script: [
      start("tiny-llama", 9),
      token("Hi"),
      token(" there"),
      // a token ending mid-character has no text yet; the next one completes the emoji
      token("", { piece: llama.subarray(0, 2) }),
      token(" 🦙", { piece: new Uint8Array([0x20, ...llama.subarray(2)]) }),
      finish("stop", { promptTokens: 9, completionTokens: 4 }),
    ],
    expected: { text: "Hi there 🦙", finishReason: "stop", done: true },
  },
  {
    name: "chat-usage",
    path: "/v1/chat/completions",
    body: { ...chat, max_tokens: 2, stream_options: { include_usage: true } },
    script: [
      start("tiny-llama", 9, 4),
      token("Hi"),
      token(" there"),
      finish("length", { promptTokens: 9, completionTokens: 2, cachedTokens: 4 }),
    ],
    expected: {
      text: "Hi there",
      finishReason: "length",
      done: true,
      usage: { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11, prompt_tokens_details: { cached_tokens: 4 } },
    },
  },
  {
    name: "chat-logprobs",
    path: "/v1/chat/completions",
    body: { ...chat, logprobs: true, top_logprobs: 2 },
    script: [
      start("tiny-llama", 9),
      token("Hi", { logprob: Math.fround(-0.25), top: [["Hi", Math.fround(-0.25)], ["Hello", Math.fround(-1.5)]] }),
      token("", { piece: llama.subarray(0, 2), logprob: -0.5, top: [[llama.subarray(0, 2), -0.5], ["!", -2]] }),
      token("🦙", { piece: llama.subarray(2), logprob: 0, top: [[llama.subarray(2), 0]] }),
      finish("stop", { promptTokens: 9, completionTokens: 3 }),
    ],
    expected: { text: "Hi🦙", finishReason: "stop", done: true },
  },
  {
    name: "chat-validation-error",
    path: "/v1/chat/completions",
    body: chat,
    script: [fail(Code.InvalidArgument, "the prompt does not fit the context (5000 tokens, context 4096)")],
    expected: { text: "", done: false },
  },
  {
    name: "chat-mid-stream-error",
    path: "/v1/chat/completions",
    body: chat,
    script: [start("tiny-llama", 9), token("Hi"), fail(Code.Internal, "the engine failed while generating")],
    expected: { text: "Hi", done: false },
  },
  {
    name: "completions-plain",
    path: "/v1/completions",
    body: completion,
    script: [
      start("tiny-llama", 4),
      token(" there"),
      token(" lived"),
      token(""), // held back (could begin a stop sequence), then released with the next token
      token(" a tiny llama"),
      finish("stop", { promptTokens: 4, completionTokens: 4 }),
    ],
    expected: { text: " there lived a tiny llama", finishReason: "stop", done: true },
  },
  {
    name: "completions-usage",
    path: "/v1/completions",
    body: { ...completion, max_tokens: 1, stream_options: { include_usage: true } },
    script: [start("tiny-llama", 4), token(" there"), finish("length", { promptTokens: 4, completionTokens: 1 })],
    expected: {
      text: " there",
      finishReason: "length",
      done: true,
      usage: { prompt_tokens: 4, completion_tokens: 1, total_tokens: 5, prompt_tokens_details: { cached_tokens: 0 } },
    },
  },
  {
    name: "completions-logprobs",
    path: "/v1/completions",
    body: { ...completion, logprobs: 2 },
    script: [
      start("tiny-llama", 4),
      token(" there", { logprob: -0.125, top: [[" there", -0.125], [" was", -2.25], [" is", -3]] }),
      token("", { piece: llama.subarray(0, 2), logprob: -1, top: [[llama.subarray(0, 2), -1]] }),
      token("🦙", { piece: llama.subarray(2), logprob: -0.0625, top: [[llama.subarray(2), -0.0625]] }),
      finish("stop", { promptTokens: 4, completionTokens: 3 }),
    ],
    expected: { text: " there🦙", finishReason: "stop", done: true },
  },
  {
    name: "completions-validation-error",
    path: "/v1/completions",
    body: completion,
    script: [fail(Code.InvalidArgument, "the prompt does not fit the context (5000 tokens, context 4096)")],
    expected: { text: "", done: false },
  },
];

const goldenPath = (name: string) => fileURLToPath(new URL(`../golden/${name}.txt`, import.meta.url));
const update = process.env["UPDATE_GOLDEN"] === "1";

async function transcript(scenario: Scenario): Promise<{ response: Response; text: string }> {
  const { app } = testApp(scenario.script);
  const response = await post(app, scenario.path, scenario.body);
  return { response, text: await response.text() };
}

function check(scenario: Scenario, events: ReturnType<typeof parseText>): ContractSummary {
  return scenario.path === "/v1/chat/completions" ? checkChatStream(events) : checkCompletionStream(events);
}

describe.each(scenarios)("golden transcript $name", (scenario) => {
  it("matches test/golden byte for byte", async () => {
    const { response, text } = await transcript(scenario);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    if (update) writeFileSync(goldenPath(scenario.name), text);
    expect(text).toBe(readFileSync(goldenPath(scenario.name), "utf8"));
  });

  it("keeps the stream contract", async () => {
    const summary = check(scenario, parseText(readFileSync(goldenPath(scenario.name), "utf8")));
    expect(summary).toMatchObject(scenario.expected);
  });

  it("parses to the same events at hostile chunk boundaries", () => {
    const bytes = new Uint8Array(readFileSync(goldenPath(scenario.name)));
    const reference = parseChunks([bytes]);
    expect(reference.events.length).toBeGreaterThan(0);
    for (const [how, chunks] of hostileSplits(bytes)) {
      const parsed = parseChunks(chunks);
      expect(parsed.events, how).toEqual(reference.events);
      check(scenario, parsed.events);
    }
  });
});

describe("golden transcripts, specific rules", () => {
  it("a sidecar validation failure gives one error event and no role frame (seed 000)", () => {
    const events = parseText(readFileSync(goldenPath("chat-validation-error"), "utf8"));
    expect(events).toHaveLength(1);
    expect(events[0]?.event).toBe("error");
    const data = JSON.parse(events[0]?.data ?? "") as Record<string, unknown>;
    expect(data).toEqual({
      message: "the prompt does not fit the context (5000 tokens, context 4096)",
      type: "invalid_request_error",
      param: null,
      code: null,
      error: {
        message: "the prompt does not fit the context (5000 tokens, context 4096)",
        type: "invalid_request_error",
        param: null,
        code: null,
      },
    });
  });

  it("a mid-stream failure ends with a server_error event and no [DONE]", () => {
    const events = parseText(readFileSync(goldenPath("chat-mid-stream-error"), "utf8"));
    const last = events.at(-1);
    expect(last?.event).toBe("error");
    expect(JSON.parse(last?.data ?? "")).toMatchObject({
      message: "the engine failed while generating",
      type: "server_error",
      error: { message: "the engine failed while generating", type: "server_error", param: null, code: null },
    });
  });

  it("logprobs cover every token, including one with no text yet", () => {
    const events = parseText(readFileSync(goldenPath("chat-logprobs"), "utf8"));
    const entries = events
      .filter((e) => e.data !== "[DONE]")
      .flatMap((e) => (JSON.parse(e.data) as { choices: { logprobs?: { content: unknown[] } }[] }).choices)
      .flatMap((c) => c.logprobs?.content ?? []);
    expect(entries).toEqual([
      {
        token: "Hi",
        logprob: -0.25,
        bytes: [72, 105],
        top_logprobs: [
          { token: "Hi", logprob: -0.25, bytes: [72, 105] },
          { token: "Hello", logprob: -1.5, bytes: [72, 101, 108, 108, 111] },
        ],
      },
      {
        token: "\uFFFD",
        logprob: -0.5,
        bytes: [0xf0, 0x9f],
        top_logprobs: [
          { token: "\uFFFD", logprob: -0.5, bytes: [0xf0, 0x9f] },
          { token: "!", logprob: -2, bytes: [33] },
        ],
      },
      {
        token: "\uFFFD\uFFFD",
        logprob: 0,
        bytes: [0xa6, 0x99],
        top_logprobs: [{ token: "\uFFFD\uFFFD", logprob: 0, bytes: [0xa6, 0x99] }],
      },
    ]);
  });

  it("legacy completion logprobs carry tokens, offsets and top alternatives", () => {
    const events = parseText(readFileSync(goldenPath("completions-logprobs"), "utf8"));
    const logprobs = events
      .filter((e) => e.data !== "[DONE]")
      .map((e) => (JSON.parse(e.data) as { choices: { logprobs: unknown }[] }).choices[0]?.logprobs);
    expect(logprobs).toEqual([
      { tokens: [" there"], token_logprobs: [-0.125], top_logprobs: [{ " there": -0.125, " was": -2.25 }], text_offset: [0] },
      { tokens: ["\uFFFD"], token_logprobs: [-1], top_logprobs: [{ "\uFFFD": -1 }], text_offset: [6] },
      { tokens: ["\uFFFD\uFFFD"], token_logprobs: [-0.0625], top_logprobs: [{ "\uFFFD\uFFFD": -0.0625 }], text_offset: [6] },
      null,
    ]);
  });
});
