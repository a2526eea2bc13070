// Golden chat transcripts with tools and reasoning, beyond the ones in golden.test.ts
// (chat-tools, chat-parallel-tools, chat-reasoning): every delta kind of the contract in one
// stream (reasoning, content, a call) and a tool call with logprobs. Same mechanism: exact bytes
// with a fixed id and clock, regenerated with UPDATE_GOLDEN=1 (read the diff), checked with the
// chat contract (test/support/contract.ts) whole and at hostile chunk boundaries;
// golden-order.test.ts checks them again with every other transcript. Then the chat checker is
// shown to reject broken copies of these transcripts, one tool-call rule at a time.
//
// A call's arguments stream as fragments that concatenate to valid JSON (`{"`, `city`,
// `":"Tokyo"}` → `{"city":"Tokyo"}`), escaped once, which is what clients parse
// (docs/contract.md, "Chat completions: tools and reasoning").
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { formatEvent } from "../../edge/sse/frame.js";
import { post, testApp } from "../support/app.js";
import { checkChatStream, type ContractSummary } from "../support/contract.js";
import { finish, reasoning, start, token, toolCall, type Step } from "../support/fake-sidecar.js";
import { chatWeatherTool } from "../support/tool-scripts.js";
import { hostileSplits, parseChunks, parseText, type ParsedEvent } from "../support/sse.js";

const weatherTool = chatWeatherTool;
const body = {
  model: "local-model",
  messages: [{ role: "user", content: "Weather in Tokyo?" }],
  tools: [weatherTool],
  tool_choice: "auto",
  stream: true,
};
const TOKYO = ['{"', "city", '":"Tokyo"}'];

interface Scenario {
  name: string;
  body: Record<string, unknown>;
  script: Step[];
  expected: Partial<ContractSummary>;
}

const scenarios: Scenario[] = [
  {
    // Every kind in one reply, in the contract's order: role, reasoning_content, content, a call.
    name: "chat-reasoning-text-tool",
    body,
    script: [
      start("tiny-llama", 40),
      token("", { piece: "<think>" }),
      ...reasoning("The user", " asks about Tokyo."),
      token("Let me", { piece: "</think>Let me" }),
      token(" check."),
      ...toolCall(0, "call_weather", "get_weather", TOKYO),
      finish("tool_calls", { promptTokens: 40, completionTokens: 9 }),
    ],
    expected: {
      reasoning: "The user asks about Tokyo.",
      text: "Let me check.",
      finishReason: "tool_calls",
      done: true,
      toolCalls: [{ id: "call_weather", name: "get_weather", arguments: '{"city":"Tokyo"}' }],
    },
  },
  {
    // With logprobs every token has a chunk carrying its logprobs, tool-call tokens included.
    name: "chat-tools-logprobs",
    body: { ...body, logprobs: true, top_logprobs: 1 },
    script: [
      start("tiny-llama", 40),
      token("", { piece: "<tool_call>", logprob: -0.25, top: [["<tool_call>", -0.25]] }),
      token("", {
        piece: "get_weather",
        logprob: -0.5,
        top: [["get_weather", -0.5]],
        toolCalls: [{ index: 0, id: "call_weather", name: "get_weather" }],
      }),
      token("", {
        piece: '{"city":"Tokyo"}',
        logprob: -1,
        top: [['{"city":"Tokyo"}', -1]],
        toolCalls: [{ index: 0, arguments: '{"city":"Tokyo"}' }],
      }),
      finish("tool_calls", { promptTokens: 40, completionTokens: 3 }),
    ],
    expected: {
      text: "",
      finishReason: "tool_calls",
      done: true,
      toolCalls: [{ id: "call_weather", name: "get_weather", arguments: '{"city":"Tokyo"}' }],
    },
  },
];

const goldenPath = (name: string) => fileURLToPath(new URL(`../golden/${name}.txt`, import.meta.url));
const update = process.env["UPDATE_GOLDEN"] === "1";

describe.each(scenarios)("golden transcript $name", (scenario) => {
  it("matches test/golden byte for byte", async () => {
    const { app } = testApp(scenario.script);
    const response = await post(app, "/v1/chat/completions", scenario.body);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    const text = await response.text();
    if (update) writeFileSync(goldenPath(scenario.name), text);
    expect(text).toBe(readFileSync(goldenPath(scenario.name), "utf8"));
  });

  it("keeps the chat contract, whole and at hostile chunk boundaries", () => {
    const bytes = new Uint8Array(readFileSync(goldenPath(scenario.name)));
    const reference = parseChunks([bytes]).events;
    expect(checkChatStream(reference)).toMatchObject(scenario.expected);
    for (const [how, chunks] of hostileSplits(bytes)) {
      const { events } = parseChunks(chunks);
      expect(events, how).toEqual(reference);
      checkChatStream(events);
    }
  });
});

it("the logprobs transcript has logprobs on every token's chunk", () => {
  const chunks = parseText(readFileSync(goldenPath("chat-tools-logprobs"), "utf8"))
    .filter((e) => e.data !== "[DONE]")
    .map((e) => (JSON.parse(e.data) as { choices: { logprobs?: { content: { token: string }[] } }[] }).choices[0]);
  expect(chunks.flatMap((c) => c?.logprobs?.content.map((entry) => entry.token) ?? [])).toEqual([
    "<tool_call>",
    "get_weather",
    '{"city":"Tokyo"}',
  ]);
});

// ---- the checker rejects broken transcripts ------------------------------------------

/** Re-serialises events (after a mutation) as SSE text and parses them back. */
function rebuild(events: readonly ParsedEvent[]): ParsedEvent[] {
  return parseText(
    events
      .map((e) => formatEvent(e.event === "message" ? { data: e.data } : { event: e.event, data: e.data }))
      .join(""),
  );
}

type ToolCallDelta = Record<string, unknown> & { function?: Record<string, unknown> };

/** Changes the first tool-call delta of chunk `at`. */
function mutateCall(events: readonly ParsedEvent[], at: number, change: (call: ToolCallDelta) => void): ParsedEvent[] {
  return events.map((event, i) => {
    if (i !== at) return event;
    const data = JSON.parse(event.data) as { choices: { delta: { tool_calls: ToolCallDelta[] } }[] };
    const call = data.choices[0]?.delta.tool_calls[0];
    if (call === undefined) throw new Error(`event ${i} has no tool call`);
    change(call);
    return { ...event, data: JSON.stringify(data) };
  });
}

const read = (name: string) => parseText(readFileSync(goldenPath(name), "utf8"));
/** The index of the event whose data contains `text`. */
const at = (events: readonly ParsedEvent[], text: string, from = 0) =>
  events.findIndex((e, i) => i >= from && e.data.includes(text));

describe("the chat checker rejects", () => {
  // Read when the tests run (not when they are collected), so UPDATE_GOLDEN can write them first.
  let parallel: ParsedEvent[] = [];
  let full: ParsedEvent[] = [];
  let secondCall = -1;
  let secondFragment = -1;
  beforeAll(() => {
    parallel = read("chat-parallel-tools");
    full = read("chat-reasoning-text-tool");
    secondCall = at(parallel, '"id":"call_2"');
    secondFragment = at(parallel, '"index":1,"function":{"arguments"');
  });
  const cases: [string, () => ParsedEvent[], RegExp][] = [
    [
      "a name repeated on a later delta",
      () => mutateCall(parallel, secondFragment, (c) => (c.function = { ...c.function, name: "get_weather" })),
      /index and arguments only/,
    ],
    [
      "a type repeated on a later delta",
      () => mutateCall(parallel, secondFragment, (c) => (c.type = "function")),
      /index and arguments only/,
    ],
    [
      "an id repeated on a later delta",
      () => mutateCall(parallel, secondFragment, (c) => (c.id = "call_2")),
      /index and arguments only/,
    ],
    [
      "a second call's first delta without its id",
      () => mutateCall(parallel, secondCall, (c) => delete c.id),
      /the first delta of a call/,
    ],
    [
      "a second call's first delta without its type",
      () => mutateCall(parallel, secondCall, (c) => delete c.type),
      /the first delta of a call/,
    ],
    [
      "a first delta that already carries arguments",
      () => mutateCall(parallel, secondCall, (c) => (c.function = { name: "get_weather", arguments: "{" })),
      /the first delta of a call/,
    ],
    [
      "two calls with the same id",
      () => mutateCall(parallel, secondCall, (c) => (c.id = "call_1")),
      /each call has its own id/,
    ],
    [
      "a call's fragment after the next call began",
      () => mutateCall(parallel, secondFragment, (c) => (c.index = 0)),
      /latest call/,
    ],
    [
      "a role on a tool-call chunk",
      () =>
        full.map((e, i) =>
          i === at(full, "tool_calls")
            ? { ...e, data: e.data.replace('"delta":{', '"delta":{"role":"assistant",') }
            : e,
        ),
      /no role after the first chunk/,
    ],
    [
      "reasoning_content and content in one delta",
      () =>
        full.map((e, i) =>
          i === at(full, "reasoning_content")
            ? { ...e, data: e.data.replace('"delta":{', '"delta":{"content":"x",') }
            : e,
        ),
      /one kind of content per delta/,
    ],
    [
      "finish_reason stop after a call was sent",
      () => full.map((e) => ({ ...e, data: e.data.replace('"finish_reason":"tool_calls"', '"finish_reason":"stop"') })),
      /to include 'stop'/,
    ],
    [
      "finish_reason tool_calls with the call removed",
      () => full.filter((e) => !e.data.includes('tool_calls":[')),
      /tool_calls finish without a call/,
    ],
    [
      "a tool-call chunk after the terminal chunk",
      () => [...full.slice(0, -1), full[at(full, '"arguments":"city"')]!, full.at(-1)!],
      /the usage chunk has empty choices/,
    ],
  ];
  it("accepts the unmutated transcripts", () => {
    expect(() => checkChatStream(rebuild(parallel))).not.toThrow();
    expect(() => checkChatStream(rebuild(full))).not.toThrow();
  });
  it.each(cases)("%s", (_, mutate, rule) => {
    expect(() => checkChatStream(rebuild(mutate()))).toThrow(rule);
  });
});
