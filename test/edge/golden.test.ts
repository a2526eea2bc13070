// Golden SSE transcripts: the exact bytes of each stream, with a fixed id and clock.
// Regenerate with UPDATE_GOLDEN=1 npx vitest run test/edge/golden.test.ts (and read the diff).
//
// The rules these transcripts show are written in docs/contract.md ("Every stream" and the
// protocol sections): chat's role frame first, content chunks without role, the terminal chunk
// with `delta: {}` and `finish_reason`, `data: [DONE]`, and one `event: error` with no role frame
// for a refused request; Anthropic's named events in order; Responses' typed events with
// `sequence_number` and one terminal event, then `data: [DONE]`.
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { testApp, post } from "../support/app.js";
import {
  checkAnthropicStream,
  checkChatStream,
  checkCompletionStream,
  checkResponsesStream,
} from "../support/contract.js";
import { fail, finish, start, token, type Step } from "../support/fake-sidecar.js";
import { chatWeatherTool } from "../support/tool-scripts.js";
import { hostileSplits, parseChunks, parseText } from "../support/sse.js";

type Path = "/v1/chat/completions" | "/v1/completions" | "/v1/messages" | "/v1/responses";

interface Scenario {
  name: string;
  path: Path;
  body: Record<string, unknown>;
  script: Step[];
  expected: Record<string, unknown>;
}

const llama = new Uint8Array([0xf0, 0x9f, 0xa6, 0x99]); // 🦙, split over two tokens below
const chat = { model: "local-model", messages: [{ role: "user", content: "Hello!" }], stream: true };
const completion = { prompt: "Once upon a time", max_tokens: 32, stream: true };
const messages = {
  model: "claude-sonnet-4-5",
  max_tokens: 1024,
  messages: [{ role: "user", content: "Hello!" }],
  stream: true,
};
const responses = { model: "local-model", input: "Hello!", stream: true };
/** "Hi there 🦙" with the emoji split over two tokens, the first of which has no text yet. */
const plainTokens = (): Step[] => [
  token("Hi"),
  token(" there"),
  token("", { piece: llama.subarray(0, 2) }),
  token(" 🦙", { piece: new Uint8Array([0x20, ...llama.subarray(2)]) }),
];

/** The contract's tool call: get_weather(city: "Tokyo"), its arguments in three fragments. */
const weatherCall = (id = "call_weather", index = 0, city = "Tokyo"): Step[] => [
  token("", { piece: "<tool_call>" }),
  token("", { piece: '", "arguments": ', toolCalls: [{ index, id, name: "get_weather" }] }),
  token("", { piece: '{"', toolCalls: [{ index, arguments: '{"' }] }),
  token("", { piece: "city", toolCalls: [{ index, arguments: "city" }] }),
  token("", { piece: `":"${city}"}`, toolCalls: [{ index, arguments: `":"${city}"}` }] }),
  token("", { piece: "</tool_call>" }),
];
const weatherTool = chatWeatherTool;
/**
 * Reasoning, then the answer: "<think>Checking the forecast.</think>It is sunny." (4 reasoning tokens, both markers
 * counted).
 */
const thinkingTokens = (): Step[] => [
  token("", { piece: "<think>" }),
  token("", { piece: "Checking", reasoning: "Checking" }),
  token("", { piece: " the forecast.", reasoning: " the forecast." }),
  token("It", { piece: "</think>It" }),
  token(" is sunny."),
];

const scenarios: Scenario[] = [
  {
    // The contract's tool-call frames, with arguments that concatenate to
    // valid JSON `{"city":"Tokyo"}` (docs/contract.md, "Chat completions: tools and reasoning").
    name: "chat-tools",
    path: "/v1/chat/completions",
    body: {
      messages: [{ role: "user", content: "Weather in Tokyo?" }],
      tools: [weatherTool],
      tool_choice: "auto",
      stream: true,
    },
    script: [
      start("tiny-llama", 40),
      ...weatherCall(),
      finish("tool_calls", { promptTokens: 40, completionTokens: 6 }),
    ],
    expected: {
      text: "",
      finishReason: "tool_calls",
      done: true,
      toolCalls: [{ id: "call_weather", name: "get_weather", arguments: '{"city":"Tokyo"}' }],
    },
  },
  {
    name: "chat-parallel-tools",
    path: "/v1/chat/completions",
    body: { ...chat, tools: [weatherTool] },
    script: [
      start("tiny-llama", 40),
      ...weatherCall("call_1", 0, "Tokyo"),
      ...weatherCall("call_2", 1, "Paris"),
      finish("tool_calls", { promptTokens: 40, completionTokens: 12 }),
    ],
    expected: {
      finishReason: "tool_calls",
      toolCalls: [
        { id: "call_1", name: "get_weather", arguments: '{"city":"Tokyo"}' },
        { id: "call_2", name: "get_weather", arguments: '{"city":"Paris"}' },
      ],
    },
  },
  {
    name: "chat-reasoning",
    path: "/v1/chat/completions",
    body: { ...chat, stream_options: { include_usage: true } },
    script: [
      start("tiny-llama", 9),
      ...thinkingTokens(),
      finish("stop", { promptTokens: 9, completionTokens: 5, reasoningTokens: 4 }),
    ],
    expected: {
      text: "It is sunny.",
      reasoning: "Checking the forecast.",
      finishReason: "stop",
      done: true,
      toolCalls: [],
      usage: {
        prompt_tokens: 9,
        completion_tokens: 5,
        total_tokens: 14,
        prompt_tokens_details: { cached_tokens: 0 },
        completion_tokens_details: { reasoning_tokens: 4 },
      },
    },
  },
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
      usage: {
        prompt_tokens: 9,
        completion_tokens: 2,
        total_tokens: 11,
        prompt_tokens_details: { cached_tokens: 4 },
        completion_tokens_details: { reasoning_tokens: 0 },
      },
    },
  },
  {
    name: "chat-logprobs",
    path: "/v1/chat/completions",
    body: { ...chat, logprobs: true, top_logprobs: 2 },
    script: [
      start("tiny-llama", 9),
      token("Hi", {
        logprob: Math.fround(-0.25),
        top: [
          ["Hi", Math.fround(-0.25)],
          ["Hello", Math.fround(-1.5)],
        ],
      }),
      token("", {
        piece: llama.subarray(0, 2),
        logprob: -0.5,
        top: [
          [llama.subarray(0, 2), -0.5],
          ["!", -2],
        ],
      }),
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
      usage: {
        prompt_tokens: 4,
        completion_tokens: 1,
        total_tokens: 5,
        prompt_tokens_details: { cached_tokens: 0 },
        completion_tokens_details: { reasoning_tokens: 0 },
      },
    },
  },
  {
    name: "completions-logprobs",
    path: "/v1/completions",
    body: { ...completion, logprobs: 2 },
    script: [
      start("tiny-llama", 4),
      token(" there", {
        logprob: -0.125,
        top: [
          [" there", -0.125],
          [" was", -2.25],
          [" is", -3],
        ],
      }),
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
  {
    name: "anthropic-tools",
    path: "/v1/messages",
    body: {
      ...messages,
      tools: [
        { name: "get_weather", description: "Get weather for a city", input_schema: weatherTool.function.parameters },
      ],
    },
    script: [
      start("tiny-llama", 40),
      ...weatherCall("call_weather"),
      finish("tool_calls", { promptTokens: 40, completionTokens: 6 }),
    ],
    expected: {
      text: "",
      stopReason: "tool_use",
      done: true,
      blocks: [{ type: "tool_use", text: '{"city":"Tokyo"}' }],
    },
  },
  {
    name: "anthropic-thinking",
    path: "/v1/messages",
    body: { ...messages, thinking: { type: "enabled", budget_tokens: 1024 } },
    script: [start("tiny-llama", 9), ...thinkingTokens(), finish("stop", { promptTokens: 9, completionTokens: 5 })],
    expected: {
      text: "It is sunny.",
      stopReason: "end_turn",
      done: true,
      blocks: [
        { type: "thinking", text: "Checking the forecast." },
        { type: "text", text: "It is sunny." },
      ],
    },
  },
  {
    // Without thinking enabled the reasoning is not shown (output_tokens still count it).
    name: "anthropic-thinking-hidden",
    path: "/v1/messages",
    body: messages,
    script: [start("tiny-llama", 9), ...thinkingTokens(), finish("stop", { promptTokens: 9, completionTokens: 5 })],
    expected: {
      text: "It is sunny.",
      stopReason: "end_turn",
      done: true,
      blocks: [{ type: "text", text: "It is sunny." }],
    },
  },
  {
    name: "anthropic-plain",
    path: "/v1/messages",
    body: messages,
    script: [start("tiny-llama", 9), ...plainTokens(), finish("stop", { promptTokens: 9, completionTokens: 4 })],
    expected: {
      text: "Hi there 🦙",
      stopReason: "end_turn",
      stopSequence: null,
      done: true,
      usage: { input_tokens: 9, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 4 },
    },
  },
  {
    name: "anthropic-max-tokens",
    path: "/v1/messages",
    body: { ...messages, max_tokens: 2 },
    script: [
      start("tiny-llama", 9, 4),
      token("Hi"),
      token(" there"),
      finish("length", { promptTokens: 9, completionTokens: 2, cachedTokens: 4 }),
    ],
    expected: {
      text: "Hi there",
      stopReason: "max_tokens",
      done: true,
      usage: { input_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 4, output_tokens: 2 },
    },
  },
  {
    name: "anthropic-stop-sequence",
    path: "/v1/messages",
    body: { ...messages, stop_sequences: ["Tokyo"] },
    script: [
      start("tiny-llama", 9),
      token("It is sunny in "),
      token("", { piece: "Tok" }), // might begin the stop sequence: held back
      token("", { piece: "yo" }), // it did: never sent
      finish("stop", { promptTokens: 9, completionTokens: 3, stopSequence: "Tokyo" }),
    ],
    expected: { text: "It is sunny in ", stopReason: "stop_sequence", stopSequence: "Tokyo", done: true },
  },
  {
    name: "anthropic-mid-stream-error",
    path: "/v1/messages",
    body: messages,
    script: [start("tiny-llama", 9), token("Hi"), fail(Code.Internal, "the engine failed while generating")],
    expected: {
      text: "Hi",
      done: false,
      error: { type: "error", error: { type: "api_error", message: "the engine failed while generating" } },
    },
  },
  {
    name: "responses-tools",
    path: "/v1/responses",
    body: {
      ...responses,
      input: "Weather in Tokyo?",
      tools: [
        {
          type: "function",
          name: "get_weather",
          description: "Get weather for a city",
          parameters: weatherTool.function.parameters,
        },
      ],
    },
    script: [
      start("tiny-llama", 40),
      ...weatherCall("call_weather"),
      finish("tool_calls", { promptTokens: 40, completionTokens: 6 }),
    ],
    expected: { text: "", terminal: "response.completed", done: true },
  },
  {
    name: "responses-reasoning",
    path: "/v1/responses",
    body: responses,
    script: [
      start("tiny-llama", 9),
      ...thinkingTokens(),
      finish("stop", { promptTokens: 9, completionTokens: 5, reasoningTokens: 4 }),
    ],
    expected: {
      text: "It is sunny.",
      reasoning: "Checking the forecast.",
      terminal: "response.completed",
      done: true,
      usage: {
        input_tokens: 9,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: 5,
        output_tokens_details: { reasoning_tokens: 4 },
        total_tokens: 14,
      },
    },
  },
  {
    name: "responses-plain",
    path: "/v1/responses",
    body: responses,
    script: [start("tiny-llama", 9), ...plainTokens(), finish("stop", { promptTokens: 9, completionTokens: 4 })],
    expected: {
      text: "Hi there 🦙",
      terminal: "response.completed",
      done: true,
      usage: {
        input_tokens: 9,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: 4,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: 13,
      },
    },
  },
  {
    name: "responses-max-tokens",
    path: "/v1/responses",
    body: { ...responses, max_output_tokens: 2 },
    script: [
      start("tiny-llama", 9, 4),
      token("Hi"),
      token(" there"),
      finish("length", { promptTokens: 9, completionTokens: 2, cachedTokens: 4 }),
    ],
    expected: {
      text: "Hi there",
      terminal: "response.incomplete",
      done: true,
      usage: {
        input_tokens: 9,
        input_tokens_details: { cached_tokens: 4 },
        output_tokens: 2,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: 11,
      },
    },
  },
  {
    name: "responses-held-back",
    path: "/v1/responses",
    body: { ...responses, instructions: "Be brief.", metadata: { session: "s-1" } },
    script: [
      start("tiny-llama", 12),
      token("It is sunny in "),
      token("", { piece: "Tok" }), // held back: might begin a stop sequence; the reply ends first
      finish("stop", { promptTokens: 12, completionTokens: 2, text: "Tok" }),
    ],
    expected: { text: "It is sunny in Tok", terminal: "response.completed", done: true },
  },
  {
    name: "responses-mid-stream-error",
    path: "/v1/responses",
    body: responses,
    script: [start("tiny-llama", 9), token("Hi"), fail(Code.Internal, "the engine failed while generating")],
    expected: {
      text: "Hi",
      terminal: "response.failed",
      done: true,
      error: { code: "server_error", message: "the engine failed while generating" },
    },
  },
];

const goldenPath = (name: string) => fileURLToPath(new URL(`../golden/${name}.txt`, import.meta.url));
const update = process.env["UPDATE_GOLDEN"] === "1";

async function transcript(scenario: Scenario): Promise<{ response: Response; text: string }> {
  const { app } = testApp(scenario.script);
  const response = await post(app, scenario.path, scenario.body);
  return { response, text: await response.text() };
}

const checkers: Record<Path, (events: ReturnType<typeof parseText>) => object> = {
  "/v1/chat/completions": checkChatStream,
  "/v1/completions": checkCompletionStream,
  "/v1/messages": checkAnthropicStream,
  "/v1/responses": checkResponsesStream,
};

function check(scenario: Scenario, events: ReturnType<typeof parseText>): object {
  return checkers[scenario.path](events);
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
  it("a sidecar validation failure gives one error event and no role frame", () => {
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
        token: "bytes:\\xf0\\x9f",
        logprob: -0.5,
        bytes: [0xf0, 0x9f],
        top_logprobs: [
          { token: "bytes:\\xf0\\x9f", logprob: -0.5, bytes: [0xf0, 0x9f] },
          { token: "!", logprob: -2, bytes: [33] },
        ],
      },
      {
        token: "bytes:\\xa6\\x99",
        logprob: 0,
        bytes: [0xa6, 0x99],
        top_logprobs: [{ token: "bytes:\\xa6\\x99", logprob: 0, bytes: [0xa6, 0x99] }],
      },
    ]);
  });

  it("legacy completion logprobs carry tokens, offsets and top alternatives", () => {
    const events = parseText(readFileSync(goldenPath("completions-logprobs"), "utf8"));
    const logprobs = events
      .filter((e) => e.data !== "[DONE]")
      .map((e) => (JSON.parse(e.data) as { choices: { logprobs: unknown }[] }).choices[0]?.logprobs);
    expect(logprobs).toEqual([
      {
        tokens: [" there"],
        token_logprobs: [-0.125],
        top_logprobs: [{ " there": -0.125, " was": -2.25 }],
        text_offset: [16],
      },
      {
        tokens: ["bytes:\\xf0\\x9f"],
        token_logprobs: [-1],
        top_logprobs: [{ "bytes:\\xf0\\x9f": -1 }],
        text_offset: [22],
      },
      {
        tokens: ["bytes:\\xa6\\x99"],
        token_logprobs: [-0.0625],
        top_logprobs: [{ "bytes:\\xa6\\x99": -0.0625 }],
        text_offset: [22],
      },
      null,
    ]);
  });
});
