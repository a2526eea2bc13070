// Chat completions with tools and reasoning, against the fake sidecar: how a request maps onto
// the proto's Chat (tools, tool_choice, parallel_tool_calls, tool-call history, tool results,
// reasoning), every request refused before the sidecar is called, and what comes back, streamed
// (checked with the stream contract) and whole. Completions get no tools and must not be
// disturbed by the new finish reason or reasoning.
//
// A tool call streams as delta.tool_calls fragments and ends with finish_reason "tool_calls"
// (docs/contract.md, "Chat completions: tools and reasoning").
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { ChatSchema, Role, ToolChoice, type Chat } from "../../proto/gen/inference/v1/inference_pb.js";
import { post, testApp } from "../support/app.js";
import { checkChatStream, checkCompletionStream } from "../support/contract.js";
import { finish, reasoning, start, token, toolCall, type Step } from "../support/fake-sidecar.js";
import { parseText } from "../support/sse.js";

const CHAT = "/v1/chat/completions";
const user = { role: "user", content: "Weather in Tokyo?" };
const WEATHER_SCHEMA = { type: "object", properties: { city: { type: "string" } }, required: ["city"] };
const weatherTool = {
  type: "function",
  function: { name: "get_weather", description: "Get weather for a city", parameters: WEATHER_SCHEMA, strict: true },
};
const timeTool = { type: "function", function: { name: "get_time" } };
const TOKYO = ['{"', "city", '":"Tokyo"}'];

/** The Chat the sidecar received for `body` (which must be accepted). */
async function chatSent(body: Record<string, unknown>): Promise<Chat> {
  const { app, sidecar } = testApp();
  const response = await post(app, CHAT, { model: "local-model", ...body });
  expect(response.status, await response.clone().text()).toBe(200);
  const request = sidecar.lastCall?.request;
  if (request?.input.case !== "chat") throw new Error("no chat request reached the sidecar");
  return request.input.value;
}

describe("chat request → proto Chat", () => {
  it("passes tools with their parameters as JSON text; strict is accepted (the grammar always holds)", async () => {
    const chat = await chatSent({ messages: [user], tools: [weatherTool, timeTool] });
    expect(chat.tools.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters }))).toEqual([
      { name: "get_weather", description: "Get weather for a city", parameters: JSON.stringify(WEATHER_SCHEMA) },
      // no parameters: empty text, "no arguments" in the proto
      { name: "get_time", description: "", parameters: "" },
    ]);
    expect(JSON.parse(chat.tools[0]?.parameters ?? "")).toEqual(WEATHER_SCHEMA);
    // Neither tool_choice nor parallel_tool_calls sent: both unset (auto, parallel by default).
    expect(chat.toolChoice).toBe(ToolChoice.UNSPECIFIED);
    expect(chat.toolName).toBe("");
    expect(chat.parallelToolCalls).toBeUndefined();
  });

  it.each([
    ["auto", ToolChoice.AUTO, ""],
    ["none", ToolChoice.NONE, ""],
    ["required", ToolChoice.REQUIRED, ""],
    [{ type: "function", function: { name: "get_time" } }, ToolChoice.FUNCTION, "get_time"],
  ] as const)("tool_choice %j", async (choice, expected, name) => {
    const chat = await chatSent({ messages: [user], tools: [weatherTool, timeTool], tool_choice: choice });
    expect(chat.toolChoice).toBe(expected);
    expect(chat.toolName).toBe(name);
  });

  it("tool_choice auto or none without tools is accepted (nothing to call either way)", async () => {
    expect((await chatSent({ messages: [user], tool_choice: "none" })).toolChoice).toBe(ToolChoice.NONE);
    expect((await chatSent({ messages: [user], tools: [], tool_choice: "auto" })).tools).toEqual([]);
  });

  it.each([true, false])("parallel_tool_calls %s", async (parallel) => {
    const chat = await chatSent({ messages: [user], tools: [weatherTool], parallel_tool_calls: parallel });
    expect(chat.parallelToolCalls).toBe(parallel);
  });

  it("maps a history of calls, results and reasoning", async () => {
    const chat = await chatSent({
      messages: [
        { role: "system", content: "Use tools." },
        user,
        {
          role: "assistant",
          content: null,
          reasoning_content: "The user wants Tokyo's weather.",
          tool_calls: [
            { id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Tokyo"}' } },
            { id: "call_2", type: "function", function: { name: "get_time", arguments: "{}" } },
          ],
        },
        { role: "tool", tool_call_id: "call_1", content: '{"sky":"sunny"}' },
        {
          role: "tool",
          tool_call_id: "call_2",
          content: [
            { type: "text", text: "10:00" },
            { type: "text", text: "JST" },
          ],
        },
        // `reasoning` is the other spelling; an assistant turn may omit content
        {
          role: "assistant",
          reasoning: "Both answered.",
          tool_calls: [{ id: "call_3", function: { name: "get_time", arguments: "" } }],
        },
        { role: "tool", tool_call_id: "call_3", content: "10:01" },
        { role: "assistant", content: "Sunny, 10:01." },
        { role: "user", content: "Thanks!" },
      ],
      tools: [weatherTool, timeTool],
    });
    expect(chat.messages).toEqual(
      create(ChatSchema, {
        messages: [
          { role: Role.SYSTEM, content: "Use tools." },
          { role: Role.USER, content: "Weather in Tokyo?" },
          {
            role: Role.ASSISTANT,
            content: "",
            reasoning: "The user wants Tokyo's weather.",
            toolCalls: [
              { id: "call_1", name: "get_weather", arguments: '{"city":"Tokyo"}' },
              { id: "call_2", name: "get_time", arguments: "{}" },
            ],
          },
          { role: Role.TOOL, content: '{"sky":"sunny"}', toolCallId: "call_1" },
          { role: Role.TOOL, content: "10:00\nJST", toolCallId: "call_2" },
          {
            role: Role.ASSISTANT,
            content: "",
            reasoning: "Both answered.",
            toolCalls: [{ id: "call_3", name: "get_time", arguments: "" }],
          },
          { role: Role.TOOL, content: "10:01", toolCallId: "call_3" },
          { role: Role.ASSISTANT, content: "Sunny, 10:01." },
          { role: Role.USER, content: "Thanks!" },
        ],
      }).messages,
    );
  });

  it("passes response_format and tools both (the sidecar decides)", async () => {
    const { app, sidecar } = testApp();
    const response = await post(app, CHAT, {
      messages: [user],
      tools: [weatherTool],
      response_format: { type: "json_object" },
    });
    expect(response.status).toBe(200);
    const request = sidecar.lastCall?.request;
    expect(request?.constraint?.kind).toEqual({ case: "jsonObject", value: true });
    expect(request?.input.case === "chat" ? request.input.value.tools.length : 0).toBe(1);
  });
});

interface Refusal {
  name: string;
  body: Record<string, unknown>;
  param: string;
  message: RegExp;
}

const call1 = { id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Tokyo"}' } };
const refusals: Refusal[] = [
  {
    name: "a non-function tool",
    body: { tools: [{ type: "web_search" }] },
    param: "tools[0].type",
    message: /only "function" tools/,
  },
  {
    name: "a custom tool",
    body: { tools: [{ type: "custom", custom: { name: "x" } }] },
    param: "tools[0].type",
    message: /only "function" tools/,
  },
  {
    name: "a function tool without its function",
    body: { tools: [{ type: "function" }] },
    param: "tools[0].function",
    message: /Missing required parameter/,
  },
  {
    name: "a tool name with a space",
    body: { tools: [{ type: "function", function: { name: "get weather" } }] },
    param: "tools[0].function.name",
    message: /1 to 64 characters/,
  },
  {
    name: "a tool name of 65 characters",
    body: { tools: [{ type: "function", function: { name: "x".repeat(65) } }] },
    param: "tools[0].function.name",
    message: /1 to 64 characters/,
  },
  {
    name: "an empty tool name",
    body: { tools: [{ type: "function", function: { name: "" } }] },
    param: "tools[0].function.name",
    message: /1 to 64 characters/,
  },
  {
    name: "a tool name twice",
    body: { tools: [weatherTool, timeTool, weatherTool] },
    param: "tools[2].function.name",
    message: /"get_weather" is used twice/,
  },
  {
    name: "parameters an array",
    body: { tools: [{ type: "function", function: { name: "f", parameters: [1] } }] },
    param: "tools[0].function.parameters",
    message: /JSON schema object/,
  },
  {
    name: "parameters a string",
    body: { tools: [{ type: "function", function: { name: "f", parameters: '{"type":"object"}' } }] },
    param: "tools[0].function.parameters",
    message: /JSON schema object/,
  },
  {
    name: "a tool choice naming no given tool",
    body: { tools: [weatherTool], tool_choice: { type: "function", function: { name: "get_time" } } },
    param: "tool_choice",
    message: /"get_time", which is not among the tools/,
  },
  {
    name: "a named tool choice without tools",
    body: { tool_choice: { type: "function", function: { name: "get_weather" } } },
    param: "tool_choice",
    message: /not among the tools/,
  },
  {
    name: "tool choice required without tools",
    body: { tool_choice: "required" },
    param: "tool_choice",
    message: /needs at least one tool/,
  },
  {
    name: "an unknown tool choice mode",
    body: { tools: [weatherTool], tool_choice: "any" },
    param: "tool_choice",
    message: /expected one of "none"\|"auto"\|"required"/,
  },
  {
    name: "parallel_tool_calls not a boolean",
    body: { tools: [weatherTool], parallel_tool_calls: "yes" },
    param: "parallel_tool_calls",
    message: /boolean/,
  },
  {
    name: "a tool message without tool_call_id",
    body: { messages: [user, { role: "tool", content: "x" }] },
    param: "messages[1].tool_call_id",
    message: /Missing required parameter/,
  },
  {
    name: "a tool message without content",
    body: { messages: [user, { role: "assistant", tool_calls: [call1] }, { role: "tool", tool_call_id: "call_1" }] },
    param: "messages[2].content",
    message: /Missing required parameter: 'messages\[2\]\.content'/,
  },
  {
    name: "a tool result answering no call",
    body: {
      messages: [
        user,
        { role: "assistant", tool_calls: [call1] },
        { role: "tool", tool_call_id: "call_9", content: "x" },
      ],
    },
    param: "messages[2].tool_call_id",
    message: /"call_9" answers no tool call made earlier/,
  },
  {
    name: "a tool result before its call",
    body: {
      messages: [
        user,
        { role: "tool", tool_call_id: "call_1", content: "x" },
        { role: "assistant", tool_calls: [call1] },
      ],
    },
    param: "messages[1].tool_call_id",
    message: /answers no tool call made earlier/,
  },
  {
    name: "tool_calls on a user message",
    body: { messages: [{ ...user, tool_calls: [call1] }] },
    param: "messages[0].tool_calls",
    message: /only assistant messages carry tool_calls/,
  },
  {
    name: "a history call of another type",
    body: { messages: [user, { role: "assistant", tool_calls: [{ ...call1, type: "custom" }] }] },
    param: "messages[1].tool_calls[0].type",
    message: /only "function" tool calls/,
  },
  {
    name: "a history call with a bad name",
    body: {
      messages: [user, { role: "assistant", tool_calls: [{ ...call1, function: { name: "a.b", arguments: "{}" } }] }],
    },
    param: "messages[1].tool_calls[0].function.name",
    message: /1 to 64 characters/,
  },
  {
    name: "a history call without an id",
    body: { messages: [user, { role: "assistant", tool_calls: [{ type: "function", function: call1.function }] }] },
    param: "messages[1].tool_calls[0].id",
    message: /Missing required parameter/,
  },
  {
    name: "history arguments as an object",
    body: {
      messages: [
        user,
        {
          role: "assistant",
          tool_calls: [{ ...call1, function: { name: "get_weather", arguments: { city: "Tokyo" } } }],
        },
      ],
    },
    param: "messages[1].tool_calls[0].function.arguments",
    message: /expected string/,
  },
  {
    name: "the legacy functions",
    body: { functions: [{ name: "get_weather", parameters: WEATHER_SCHEMA }] },
    param: "functions",
    message: /legacy "functions" \/ "function_call" are not supported: send "tools"/,
  },
  {
    name: "the legacy function_call",
    body: { tools: [weatherTool], function_call: "auto" },
    param: "function_call",
    message: /not supported/,
  },
  {
    name: "tools and legacy functions together",
    body: { tools: [weatherTool], functions: [{ name: "f" }] },
    param: "functions",
    message: /not both/,
  },
  {
    name: "a legacy function_call in history",
    body: { messages: [user, { role: "assistant", content: null, function_call: { name: "f", arguments: "{}" } }] },
    param: "messages[1].function_call",
    message: /not supported/,
  },
  {
    name: "a legacy function message",
    body: { messages: [user, { role: "function", name: "f", content: "x" }] },
    param: "messages[1].role",
    message: /'tool'/,
  },
];

describe("refused with a 400 in OpenAI's error shape, before the sidecar is called", () => {
  it.each(refusals)("$name", async ({ body, param, message }) => {
    const { app, sidecar } = testApp();
    for (const stream of [false, true]) {
      const response = await post(app, CHAT, { messages: [user], stream, ...body });
      expect(response.status).toBe(400);
      expect(response.headers.get("content-type")).toBe("application/json");
      const error = ((await response.json()) as { error: Record<string, unknown> }).error;
      expect(error).toEqual({
        message: expect.stringMatching(message),
        type: "invalid_request_error",
        param,
        code: null,
      });
    }
    expect(sidecar.calls).toHaveLength(0);
  });
});

async function stream(script: Step[], body: Record<string, unknown> = {}) {
  const { app } = testApp(script);
  const response = await post(app, CHAT, { messages: [user], tools: [weatherTool], stream: true, ...body });
  expect(response.status).toBe(200);
  const events = parseText(await response.text());
  const deltas = events
    .filter((e) => e.data !== "[DONE]")
    .map(
      (e) =>
        (
          JSON.parse(e.data) as {
            choices: { delta: Record<string, unknown>; finish_reason: string | null; logprobs?: unknown }[];
          }
        ).choices[0],
    );
  return { events, deltas, summary: checkChatStream(events) };
}

async function whole(script: Step[], body: Record<string, unknown> = {}) {
  const { app } = testApp(script);
  const response = await post(app, CHAT, { messages: [user], tools: [weatherTool], ...body });
  expect(response.status).toBe(200);
  return ((await response.json()) as { choices: Record<string, unknown>[] }).choices[0];
}

const weather = (index = 0, id = "call_weather", fragments = TOKYO) => toolCall(index, id, "get_weather", fragments);

describe("streamed", () => {
  it(
    "keeps the contract's order: role, reasoning_content, content, then each call's first delta and fragments, then " +
      "the terminal chunk",
    async () => {
      const script = [
        start("tiny-llama", 40),
        ...reasoning("Tokyo", " weather."),
        token("Let me check."),
        ...weather(),
        finish("tool_calls", { completionTokens: 7 }),
      ];
      const { deltas, summary } = await stream(script);
      expect(deltas.map((c) => c?.delta)).toEqual([
        { role: "assistant" },
        { reasoning_content: "Tokyo" },
        { reasoning_content: " weather." },
        { content: "Let me check." },
        {
          tool_calls: [
            { index: 0, id: "call_weather", type: "function", function: { name: "get_weather", arguments: "" } },
          ],
        },
        { tool_calls: [{ index: 0, function: { arguments: '{"' } }] },
        { tool_calls: [{ index: 0, function: { arguments: "city" } }] },
        { tool_calls: [{ index: 0, function: { arguments: '":"Tokyo"}' } }] },
        {},
      ]);
      expect(deltas.at(-1)?.finish_reason).toBe("tool_calls");
      expect(summary).toMatchObject({ text: "Let me check.", reasoning: "Tokyo weather.", finishReason: "tool_calls" });
      expect(JSON.parse(summary.toolCalls?.[0]?.arguments ?? "")).toEqual({ city: "Tokyo" });
    },
  );

  it('says "stop" for a TOOL_CALLS finish when no call was sent', async () => {
    const { summary } = await stream([start(), token("No tool needed."), finish("tool_calls")]);
    expect(summary).toMatchObject({ finishReason: "stop", toolCalls: [] });
  });

  it('says "tool_calls" when a call was sent and the reply then stopped (a stop sequence)', async () => {
    const { summary } = await stream([start(), ...weather(), finish("stop", { stopSequence: "\n\n" })]);
    expect(summary.finishReason).toBe("tool_calls");
  });

  it('says "length" when the reply was cut inside a call', async () => {
    const { summary } = await stream([start(), ...weather(0, "call_weather", ['{"', "ci"]), finish("length")]);
    expect(summary).toMatchObject({
      finishReason: "length",
      toolCalls: [{ id: "call_weather", name: "get_weather", arguments: '{"ci' }],
    });
  });

  it(
    "a call whose first delta carries arguments too gets them in a second chunk (the first has empty " + "arguments)",
    async () => {
      const script = [
        start(),
        token("", { toolCalls: [{ index: 0, id: "call_a", name: "get_weather", arguments: '{"city":"Oslo"}' }] }),
        finish("tool_calls"),
      ];
      const { deltas, summary } = await stream(script);
      expect(deltas.slice(1, 3).map((c) => c?.delta)).toEqual([
        {
          tool_calls: [{ index: 0, id: "call_a", type: "function", function: { name: "get_weather", arguments: "" } }],
        },
        { tool_calls: [{ index: 0, function: { arguments: '{"city":"Oslo"}' } }] },
      ]);
      expect(summary.finishReason).toBe("tool_calls");
    },
  );

  it("sends reasoning and text held back to the end before the terminal chunk", async () => {
    const { deltas, summary } = await stream(
      [start(), ...reasoning("Hm"), token("Su"), finish("stop", { reasoning: "m.", text: "nny" })],
      {
        tools: undefined,
      },
    );
    expect(summary).toMatchObject({ reasoning: "Hmm.", text: "Sunny", finishReason: "stop" });
    expect(deltas.slice(-3).map((c) => c?.delta)).toEqual([{ reasoning_content: "m." }, { content: "nny" }, {}]);
  });

  it("keeps logprobs on every token, tool-call tokens included", async () => {
    const lp = { logprob: -0.5, top: [["x", -0.5]] as const };
    const script = [
      start(),
      token("", { ...lp, piece: "<tool_call>" }), // the call's syntax: no content yet
      token("", { ...lp, toolCalls: [{ index: 0, id: "call_lp", name: "get_weather" }] }),
      token("", { ...lp, toolCalls: [{ index: 0, arguments: '{"city":"Rome"}' }] }),
      finish("tool_calls", { completionTokens: 3 }),
    ];
    const { deltas, summary } = await stream(script, { logprobs: true, top_logprobs: 1 });
    const withLogprobs = deltas.filter((c) => c?.logprobs !== undefined);
    expect(withLogprobs).toHaveLength(3);
    expect(withLogprobs.map((c) => c?.delta)).toEqual([
      { content: "" },
      { tool_calls: [{ index: 0, id: "call_lp", type: "function", function: { name: "get_weather", arguments: "" } }] },
      { tool_calls: [{ index: 0, function: { arguments: '{"city":"Rome"}' } }] },
    ]);
    expect(withLogprobs[1]?.logprobs).toEqual({
      content: [{ token: "", logprob: -0.5, bytes: [], top_logprobs: [{ token: "x", logprob: -0.5, bytes: [120] }] }],
      refusal: null,
    });
    expect(summary).toMatchObject({
      finishReason: "tool_calls",
      toolCalls: [{ id: "call_lp", arguments: '{"city":"Rome"}' }],
    });
  });
});

describe("whole (stream off)", () => {
  it("a reply of calls only: content null, tool_calls, finish_reason tool_calls, no reasoning_content", async () => {
    const choice = await whole([
      start(),
      ...weather(0, "call_1"),
      ...toolCall(1, "call_2", "get_weather", ['{"city":"Paris"}']),
      finish("tool_calls"),
    ]);
    expect(choice).toEqual({
      index: 0,
      message: {
        role: "assistant",
        content: null,
        refusal: null,
        tool_calls: [
          { id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Tokyo"}' } },
          { id: "call_2", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } },
        ],
      },
      logprobs: null,
      finish_reason: "tool_calls",
    });
  });

  it("reasoning and text: reasoning_content and content, no tool_calls", async () => {
    const choice = await whole([
      start(),
      ...reasoning("Checking", " the forecast."),
      token("It is sunny."),
      finish("stop", { reasoning: "" }),
    ]);
    expect(choice?.["message"]).toEqual({
      role: "assistant",
      content: "It is sunny.",
      refusal: null,
      reasoning_content: "Checking the forecast.",
    });
    expect(choice?.["finish_reason"]).toBe("stop");
  });

  it("text, then a call: content is the text", async () => {
    const choice = await whole([start(), token("Let me check."), ...weather(), finish("tool_calls")]);
    expect(choice?.["message"]).toMatchObject({ content: "Let me check.", tool_calls: [{ id: "call_weather" }] });
    expect(choice?.["finish_reason"]).toBe("tool_calls");
  });

  it('TOOL_CALLS without a call: "stop" and content ""', async () => {
    const choice = await whole([start(), finish("tool_calls")]);
    expect(choice).toMatchObject({ message: { role: "assistant", content: "" }, finish_reason: "stop" });
    expect(choice?.["message"]).not.toHaveProperty("tool_calls");
  });
});

describe("completions are untouched by tools and reasoning", () => {
  it('a TOOL_CALLS finish is "stop", streamed and whole; held-back reasoning is not text', async () => {
    const script = [start(), token(" there"), finish("tool_calls", { text: " now", reasoning: "hidden" })];
    const { app } = testApp(script);
    const streamed = await post(app, "/v1/completions", { prompt: "Once", stream: true, tools: [weatherTool] });
    expect(checkCompletionStream(parseText(await streamed.text()))).toMatchObject({
      text: " there now",
      finishReason: "stop",
    });
    const collected = (await (await post(app, "/v1/completions", { prompt: "Once" })).json()) as {
      choices: { text: string; finish_reason: string }[];
    };
    expect(collected.choices[0]).toMatchObject({ text: " there now", finish_reason: "stop" });
  });
});
