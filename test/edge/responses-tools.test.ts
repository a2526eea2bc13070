// OpenAI Responses with tools and reasoning, against the fake sidecar: how function tools,
// tool_choice, parallel_tool_calls and a function_call / function_call_output / reasoning
// history become the sidecar's Chat; ignored non-function tools (`warnings`); the refusals
// with `param`; streamed and whole function_call and reasoning items; and the official client
// (`openai`): `responses.stream()` → `finalResponse()` and `responses.create`.
import OpenAI, { APIError } from "openai";
import { describe, expect, it } from "vitest";
import { Role, ToolChoice, type Chat } from "../../proto/gen/inference/v1/inference_pb.js";
import { FIXED_ID, inProcessFetch, post, sentChat, testApp } from "../support/app.js";
import { checkResponsesStream } from "../support/contract.js";
import { finish, start, token, toolCall, type Step } from "../support/fake-sidecar.js";
import { thinkingSteps } from "../support/tool-scripts.js";
import { goldenBytes, hostileSplits, parseText } from "../support/sse.js";
import { openaiReplaying } from "../support/replay.js";

const PATH = "/v1/responses";
const WEATHER_SCHEMA = { type: "object", properties: { city: { type: "string" } }, required: ["city"] };
const weatherTool = {
  type: "function",
  name: "get_weather",
  description: "Get weather for a city",
  parameters: WEATHER_SCHEMA,
  strict: true,
};
const base = { model: "local-model", input: "Weather in Tokyo?" };

const weatherCall = (id = "call_01", index = 0, city = "Tokyo") =>
  toolCall(index, id, "get_weather", ['{"city":', ` "${city}"}`]);
const thinking = thinkingSteps;
const toolScript = [
  start("tiny-llama", 40),
  ...weatherCall(),
  finish("tool_calls", { promptTokens: 40, completionTokens: 6 }),
];
const thinkingScript = [
  start("tiny-llama", 9),
  ...thinking(),
  finish("stop", { promptTokens: 9, completionTokens: 5 }),
];
/** Reasoning, a sentence, then two calls: every item kind in one reply. */
const everythingScript = [
  start("tiny-llama", 40),
  token("", { reasoning: "Two cities." }),
  token("Checking both."),
  ...weatherCall("call_a", 0, "Tokyo"),
  ...weatherCall("call_b", 1, "Paris"),
  finish("tool_calls", { promptTokens: 40, completionTokens: 14 }),
];

const chatOf = sentChat;

async function send(body: Record<string, unknown>, script: Step[] = toolScript) {
  const { app, sidecar } = testApp(script);
  const response = await post(app, PATH, body);
  return { response, sidecar };
}

describe("tools, tool_choice, parallel_tool_calls → the sidecar's Chat", () => {
  it("function tools travel with the chat: name, description, parameters as JSON text", async () => {
    const { response, sidecar } = await send({ ...base, tools: [weatherTool, { type: "function", name: "now" }] });
    expect(response.status).toBe(200);
    const chat = chatOf(sidecar);
    expect(chat.tools.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters }))).toEqual([
      { name: "get_weather", description: "Get weather for a city", parameters: JSON.stringify(WEATHER_SCHEMA) },
      { name: "now", description: "", parameters: "" },
    ]);
    expect(chat.toolChoice).toBe(ToolChoice.UNSPECIFIED);
    expect(chat.parallelToolCalls).toBeUndefined();
  });

  it.each([
    ["auto", { toolChoice: ToolChoice.AUTO, toolName: "" }],
    ["none", { toolChoice: ToolChoice.NONE, toolName: "" }],
    ["required", { toolChoice: ToolChoice.REQUIRED, toolName: "" }],
    [
      { type: "function", name: "get_weather" },
      { toolChoice: ToolChoice.FUNCTION, toolName: "get_weather" },
    ],
  ])("tool_choice %j", async (toolChoice, expected) => {
    const { response, sidecar } = await send({ ...base, tools: [weatherTool], tool_choice: toolChoice });
    expect(response.status).toBe(200);
    const chat = chatOf(sidecar);
    expect({ toolChoice: chat.toolChoice, toolName: chat.toolName }).toEqual(expected);
    expect(((await response.json()) as { tool_choice: unknown }).tool_choice).toEqual(toolChoice);
  });

  it.each([true, false])("parallel_tool_calls %s is passed on and echoed", async (parallel) => {
    const { response, sidecar } = await send({ ...base, tools: [weatherTool], parallel_tool_calls: parallel });
    expect(chatOf(sidecar).parallelToolCalls).toBe(parallel);
    expect(((await response.json()) as { parallel_tool_calls: unknown }).parallel_tool_calls).toBe(parallel);
  });

  it("the Response lists the function tools it was given", async () => {
    const { response } = await send({ ...base, tools: [weatherTool] });
    const body = (await response.json()) as Record<string, unknown>;
    expect(body["tools"]).toEqual([weatherTool]);
    expect(body).not.toHaveProperty("warnings");
  });
});

describe("non-function tools are ignored and named in `warnings`", () => {
  const agentTools = [
    { type: "web_search" },
    { type: "file_search", vector_store_ids: ["vs_1"] },
    { type: "code_interpreter", container: { type: "auto" } },
    { type: "mcp", server_label: "x", server_url: "https://example.test" },
    { type: "web_search" },
  ];
  const warnings = ["web_search", "file_search", "code_interpreter", "mcp"].map(
    (type) => `tools of type '${type}' are not supported by this server and were ignored`,
  );

  it("non-streaming: only the function tools reach the sidecar; each ignored type named once", async () => {
    const { response, sidecar } = await send({ ...base, tools: [...agentTools, weatherTool] });
    expect(response.status).toBe(200);
    expect(chatOf(sidecar).tools.map((t) => t.name)).toEqual(["get_weather"]);
    const body = (await response.json()) as Record<string, unknown>;
    expect(body["warnings"]).toEqual(warnings);
    expect(body["tools"]).toEqual([weatherTool]);
  });

  it("streaming: every Response object of the stream carries the warnings", async () => {
    const { response, sidecar } = await send({ ...base, tools: agentTools, stream: true }, thinkingScript);
    expect(chatOf(sidecar).tools).toEqual([]);
    const events = parseText(await response.text());
    checkResponsesStream(events);
    const responses = events
      .filter((e) => e.data !== "[DONE]")
      .map((e) => JSON.parse(e.data) as { response?: Record<string, unknown> })
      .flatMap((d) => (d.response === undefined ? [] : [d.response]));
    expect(responses.map((r) => r["status"])).toEqual(["in_progress", "in_progress", "completed"]);
    for (const r of responses) expect(r["warnings"]).toEqual(warnings);
  });
});

describe("a function_call / function_call_output / reasoning history → chat messages", () => {
  const messagesOf = (chat: Chat) =>
    chat.messages.map((m) => ({
      role: m.role,
      content: m.content,
      reasoning: m.reasoning,
      toolCallId: m.toolCallId,
      toolCalls: m.toolCalls.map((c) => ({ id: c.id, name: c.name, arguments: c.arguments })),
    }));
  const msg = (role: Role, content: string, extra: Partial<ReturnType<typeof messagesOf>[number]> = {}) => ({
    role,
    content,
    reasoning: "",
    toolCallId: "",
    toolCalls: [],
    ...extra,
  });

  it("consecutive calls join one assistant message; outputs become tool messages, in order", async () => {
    const input = [
      { role: "user", content: "Weather in Tokyo and Paris?" },
      { type: "reasoning", id: "rs_1", summary: [], content: [{ type: "reasoning_text", text: "Two cities." }] },
      {
        type: "function_call",
        id: "fc_1",
        call_id: "call_a",
        name: "get_weather",
        arguments: '{"city":"Tokyo"}',
        status: "completed",
      },
      { type: "function_call", call_id: "call_b", name: "get_weather", arguments: '{"city":"Paris"}' },
      { type: "function_call_output", call_id: "call_a", output: '{"sky":"sunny"}' },
      {
        type: "function_call_output",
        call_id: "call_b",
        output: [
          { type: "input_text", text: "rain" },
          { type: "input_text", text: "12 C" },
        ],
      },
      { role: "user", content: "And tomorrow?" },
    ];
    const { response, sidecar } = await send({ ...base, input, tools: [weatherTool] });
    expect(response.status).toBe(200);
    expect(messagesOf(chatOf(sidecar))).toEqual([
      msg(Role.USER, "Weather in Tokyo and Paris?"),
      msg(Role.ASSISTANT, "", {
        reasoning: "Two cities.",
        toolCalls: [
          { id: "call_a", name: "get_weather", arguments: '{"city":"Tokyo"}' },
          { id: "call_b", name: "get_weather", arguments: '{"city":"Paris"}' },
        ],
      }),
      msg(Role.TOOL, '{"sky":"sunny"}', { toolCallId: "call_a" }),
      msg(Role.TOOL, "rain\n12 C", { toolCallId: "call_b" }),
      msg(Role.USER, "And tomorrow?"),
    ]);
  });

  it(
    "a previous Response's output sent back as is: reasoning, message, then calls make one assistant " + "turn",
    async () => {
      const input = [
        { role: "user", content: "Weather?" },
        {
          id: "rs_1",
          type: "reasoning",
          status: "completed",
          summary: [{ type: "summary_text", text: "ignored when content is given" }],
          content: [{ type: "reasoning_text", text: "Need a call." }],
        },
        {
          id: "msg_1",
          type: "message",
          status: "completed",
          role: "assistant",
          content: [{ type: "output_text", text: "Let me look.", annotations: [], logprobs: [] }],
        },
        { type: "function_call", call_id: "call_a", name: "get_weather", arguments: "{}" },
        { type: "function_call_output", call_id: "call_a", output: "sunny" },
      ];
      const { response, sidecar } = await send({ ...base, input, tools: [weatherTool] });
      expect(response.status).toBe(200);
      expect(messagesOf(chatOf(sidecar))).toEqual([
        msg(Role.USER, "Weather?"),
        msg(Role.ASSISTANT, "Let me look.", {
          reasoning: "Need a call.",
          toolCalls: [{ id: "call_a", name: "get_weather", arguments: "{}" }],
        }),
        msg(Role.TOOL, "sunny", { toolCallId: "call_a" }),
      ]);
    },
  );

  it(
    "a reasoning item with only a summary gives its summary; one followed by no assistant turn is " + "dropped",
    async () => {
      const input = [
        { role: "user", content: "Hi" },
        { type: "reasoning", summary: [{ type: "summary_text", text: "Greeting." }] },
        { role: "assistant", content: "Hello." },
        { role: "user", content: "Bye" },
        { type: "reasoning", summary: [], encrypted_content: "opaque" },
        { type: "reasoning", summary: [{ type: "summary_text", text: "dangling" }] },
      ];
      const { response, sidecar } = await send({ ...base, input }, thinkingScript);
      expect(response.status).toBe(200);
      expect(messagesOf(chatOf(sidecar))).toEqual([
        msg(Role.USER, "Hi"),
        msg(Role.ASSISTANT, "Hello.", { reasoning: "Greeting." }),
        msg(Role.USER, "Bye"),
      ]);
    },
  );
});

describe("refusals: OpenAI's error shape with `param`, before the sidecar is called", () => {
  const withCall = [
    { role: "user", content: "q" },
    { type: "function_call", call_id: "call_a", name: "get_weather", arguments: "{}" },
  ];
  it.each<[string, Record<string, unknown>, string, RegExp]>([
    [
      "a tool name with a space",
      { tools: [{ ...weatherTool, name: "get weather" }] },
      "tools[0].name",
      /1 to 64 characters/,
    ],
    [
      "a 65-character tool name",
      { tools: [{ ...weatherTool, name: "x".repeat(65) }] },
      "tools[0].name",
      /1 to 64 characters/,
    ],
    ["a function tool without a name", { tools: [{ type: "function", parameters: {} }] }, "tools[0].name", /name/],
    ["a tool name twice", { tools: [weatherTool, weatherTool] }, "tools[1].name", /used twice/],
    [
      "parameters an array",
      { tools: [{ ...weatherTool, parameters: [] }] },
      "tools[0].parameters",
      /JSON schema object/,
    ],
    ["a tool without a type", { tools: [{ name: "get_weather" }] }, "tools[0].type", /type/],
    [
      "tool_choice naming no function tool",
      { tools: [weatherTool], tool_choice: { type: "function", name: "get_time" } },
      "tool_choice.name",
      /not among the tools/,
    ],
    [
      "tool_choice naming an ignored tool",
      { tools: [{ type: "web_search" }], tool_choice: { type: "function", name: "web_search" } },
      "tool_choice.name",
      /not among the tools/,
    ],
    [
      "tool_choice required without function tools",
      { tool_choice: "required" },
      "tool_choice",
      /needs at least one function tool/,
    ],
    [
      "an unknown tool_choice",
      { tools: [weatherTool], tool_choice: "sometimes" },
      "tool_choice",
      /"none".*"auto".*"required"/,
    ],
    [
      "tool_choice forcing an ignored hosted tool",
      { tools: [{ type: "web_search" }], tool_choice: { type: "web_search_preview" } },
      "tool_choice.type",
      /'web_search_preview' are ignored by this server/,
    ],
    [
      "tool_choice forcing an mcp tool",
      { tools: [{ type: "mcp", server_label: "x" }], tool_choice: { type: "mcp", server_label: "x" } },
      "tool_choice.type",
      /type 'mcp'/,
    ],
    [
      "tool_choice allowed_tools",
      {
        tools: [weatherTool],
        tool_choice: { type: "allowed_tools", mode: "auto", tools: [{ type: "function", name: "get_weather" }] },
      },
      "tool_choice.type",
      /'allowed_tools' is not supported: send only the allowed function tools/,
    ],
    [
      "a function tool_choice without a name",
      { tools: [weatherTool], tool_choice: { type: "function" } },
      "tool_choice.name",
      /Missing required parameter/,
    ],
    ["parallel_tool_calls a string", { parallel_tool_calls: "yes" }, "parallel_tool_calls", /parallel_tool_calls/],
    [
      "a function_call_output answering no call",
      {
        input: [
          { role: "user", content: "q" },
          { type: "function_call_output", call_id: "call_x", output: "1" },
        ],
      },
      "input[1].call_id",
      /"call_x" answers no tool call/,
    ],
    [
      "a function_call_output answering a later call",
      { input: [{ type: "function_call_output", call_id: "call_a", output: "1" }, ...withCall] },
      "input[0].call_id",
      /answers no tool call made earlier/,
    ],
    [
      "a function_call_output without output",
      { input: [...withCall, { type: "function_call_output", call_id: "call_a" }] },
      "input[2].output",
      /output/,
    ],
    [
      "a function_call without name",
      { input: [{ type: "function_call", call_id: "c", arguments: "{}" }] },
      "input[0].name",
      /name/,
    ],
    [
      "a function_call with object arguments",
      { input: [{ type: "function_call", call_id: "c", name: "f", arguments: {} }] },
      "input[0].arguments",
      /arguments/,
    ],
    [
      "a custom_tool_call item",
      { input: [{ type: "custom_tool_call", call_id: "c", name: "f", input: "x" }] },
      "input[0].type",
      /'custom_tool_call' are not supported/,
    ],
  ])("%s", async (_, patch, param, message) => {
    const { response, sidecar } = await send({ ...base, ...patch });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { message: string; type: string; param: string | null } };
    expect(body.error.type).toBe("invalid_request_error");
    expect(body.error.param).toBe(param);
    expect(body.error.message).toMatch(message);
    expect(sidecar.calls).toHaveLength(0);
  });
});

type Data = Record<string, unknown> & { type: string; sequence_number: number };
function dataOf(text: string): Data[] {
  return parseText(text)
    .filter((e) => e.data !== "[DONE]")
    .map((e) => JSON.parse(e.data) as Data);
}

describe("streamed function_call and reasoning items", () => {
  it("reasoning, message and two function_call items: events in order with their indexes", async () => {
    const { response } = await send({ ...base, tools: [weatherTool], stream: true }, everythingScript);
    const text = await response.text();
    const summary = checkResponsesStream(parseText(text));
    expect(summary.reasoning).toBe("Two cities.");
    expect(summary.text).toBe("Checking both.");
    const data = dataOf(text);
    expect(data.map((d) => d.sequence_number)).toEqual(data.map((_, i) => i));
    const brief = data.slice(2, -1).map((d) => [d.type, d["output_index"], d["content_index"]]);
    expect(brief).toEqual([
      ["response.output_item.added", 0, undefined],
      ["response.content_part.added", 0, 0],
      ["response.reasoning_text.delta", 0, 0],
      ["response.reasoning_text.done", 0, 0],
      ["response.content_part.done", 0, 0],
      ["response.output_item.done", 0, undefined],
      ["response.output_item.added", 1, undefined],
      ["response.content_part.added", 1, 0],
      ["response.output_text.delta", 1, 0],
      ["response.output_text.done", 1, 0],
      ["response.content_part.done", 1, 0],
      ["response.output_item.done", 1, undefined],
      ["response.output_item.added", 2, undefined],
      ["response.function_call_arguments.delta", 2, undefined],
      ["response.function_call_arguments.delta", 2, undefined],
      ["response.function_call_arguments.done", 2, undefined],
      ["response.output_item.done", 2, undefined],
      ["response.output_item.added", 3, undefined],
      ["response.function_call_arguments.delta", 3, undefined],
      ["response.function_call_arguments.delta", 3, undefined],
      ["response.function_call_arguments.done", 3, undefined],
      ["response.output_item.done", 3, undefined],
    ]);
    expect(data[14]).toMatchObject({
      type: "response.output_item.added",
      item: {
        type: "function_call",
        id: `fc_${FIXED_ID}`,
        call_id: "call_a",
        name: "get_weather",
        arguments: "",
        status: "in_progress",
      },
    });
    expect(data[17]).toMatchObject({
      type: "response.function_call_arguments.done",
      item_id: `fc_${FIXED_ID}`,
      arguments: '{"city": "Tokyo"}',
    });
    expect(data[18]).toMatchObject({
      type: "response.output_item.done",
      item: { status: "completed", arguments: '{"city": "Tokyo"}' },
    });
    const completed = data.at(-1) as unknown as {
      type: string;
      response: { status: string; output: { type: string }[] };
    };
    expect(completed.type).toBe("response.completed");
    expect(completed.response.status).toBe("completed");
    expect(completed.response.output.map((item) => item.type)).toEqual([
      "reasoning",
      "message",
      "function_call",
      "function_call",
    ]);
  });

  it("a call cut by max_output_tokens: its item is incomplete, the Response incomplete", async () => {
    const script = [
      start("tiny-llama", 40),
      ...toolCall(0, "call_01", "get_weather", ['{"city":']),
      finish("length", { completionTokens: 3 }),
    ];
    const { response } = await send({ ...base, tools: [weatherTool], max_output_tokens: 3, stream: true }, script);
    const data = dataOf(await response.text());
    expect(data.find((d) => d.type === "response.output_item.done")).toMatchObject({
      item: { type: "function_call", status: "incomplete", arguments: '{"city":' },
    });
    expect(data.at(-1)).toMatchObject({
      type: "response.incomplete",
      response: { status: "incomplete", incomplete_details: { reason: "max_output_tokens" } },
    });
  });
});

describe("non-streaming: the same items", () => {
  it("reasoning, message and function_call items in order; status completed", async () => {
    const { response } = await send({ ...base, tools: [weatherTool] }, everythingScript);
    const body = (await response.json()) as {
      status: string;
      output: unknown[];
      output_text: string;
      usage: { output_tokens: number };
    };
    expect(body.status).toBe("completed");
    expect(body.output_text).toBe("Checking both.");
    expect(body.usage.output_tokens).toBe(14);
    expect(body.output).toEqual([
      {
        id: `rs_${FIXED_ID}`,
        type: "reasoning",
        status: "completed",
        summary: [],
        content: [{ type: "reasoning_text", text: "Two cities." }],
      },
      {
        id: `msg_${FIXED_ID}`,
        type: "message",
        status: "completed",
        role: "assistant",
        content: [{ type: "output_text", text: "Checking both.", annotations: [], logprobs: [] }],
      },
      {
        id: `fc_${FIXED_ID}`,
        type: "function_call",
        status: "completed",
        call_id: "call_a",
        name: "get_weather",
        arguments: '{"city": "Tokyo"}',
      },
      {
        id: `fc_${FIXED_ID}`,
        type: "function_call",
        status: "completed",
        call_id: "call_b",
        name: "get_weather",
        arguments: '{"city": "Paris"}',
      },
    ]);
  });
});

describe("the official client", () => {
  function client(script: Step[]) {
    const { app, sidecar } = testApp(script);
    return {
      openai: new OpenAI({
        baseURL: "http://edge.test/v1",
        apiKey: "not-needed",
        fetch: inProcessFetch(app),
        maxRetries: 0,
      }),
      sidecar,
    };
  }
  const tools: OpenAI.Responses.FunctionTool[] = [
    {
      type: "function",
      name: "get_weather",
      description: "Get weather for a city",
      parameters: WEATHER_SCHEMA,
      strict: true,
    },
  ];

  it("responses.stream() → finalResponse(): the function_call item; argument delta events with snapshots", async () => {
    const { openai } = client(toolScript);
    const stream = openai.responses.stream({ model: "m", input: "Weather in Tokyo?", tools });
    const snapshots: string[] = [];
    stream.on("response.function_call_arguments.delta", (event) => snapshots.push(event.snapshot));
    const final = await stream.finalResponse();
    expect(final.status).toBe("completed");
    // The SDK adds `parsed_arguments` for strict function tools.
    expect(final.output).toEqual([
      {
        id: `fc_${FIXED_ID}`,
        type: "function_call",
        status: "completed",
        call_id: "call_01",
        name: "get_weather",
        arguments: '{"city": "Tokyo"}',
        parsed_arguments: { city: "Tokyo" },
      },
    ]);
    expect(snapshots).toEqual(['{"city":', '{"city": "Tokyo"}']);
  });

  it("responses.stream() → finalResponse(): the reasoning item, then the message", async () => {
    const { openai } = client(thinkingScript);
    const final = await openai.responses.stream({ model: "m", input: "Weather in Tokyo?" }).finalResponse();
    expect(final.output).toMatchObject([
      {
        id: `rs_${FIXED_ID}`,
        type: "reasoning",
        status: "completed",
        summary: [],
        content: [{ type: "reasoning_text", text: "Checking the forecast." }],
      },
      {
        id: `msg_${FIXED_ID}`,
        type: "message",
        status: "completed",
        role: "assistant",
        content: [{ type: "output_text", text: "It is sunny.", annotations: [], logprobs: [] }],
      },
    ]);
    expect(final.output[0]).toEqual({
      id: `rs_${FIXED_ID}`,
      type: "reasoning",
      status: "completed",
      summary: [],
      content: [{ type: "reasoning_text", text: "Checking the forecast." }],
    });
    expect(final.output_text).toBe("It is sunny.");
  });

  it("responses.create: the items, which go back as input unchanged (an agent loop)", async () => {
    const first = client(everythingScript);
    const called = await first.openai.responses.create({ model: "m", input: "Weather in Tokyo and Paris?", tools });
    expect(called.output.map((item) => item.type)).toEqual(["reasoning", "message", "function_call", "function_call"]);
    const calls = called.output.filter(
      (item): item is OpenAI.Responses.ResponseFunctionToolCall => item.type === "function_call",
    );
    expect(calls.map((c) => JSON.parse(c.arguments) as unknown)).toEqual([{ city: "Tokyo" }, { city: "Paris" }]);

    const second = client(thinkingScript);
    const answered = await second.openai.responses.create({
      model: "m",
      tools,
      input: [
        { role: "user", content: "Weather in Tokyo and Paris?" },
        ...(called.output as OpenAI.Responses.ResponseInputItem[]),
        ...calls.map((c) => ({ type: "function_call_output" as const, call_id: c.call_id, output: "sunny" })),
      ],
    });
    expect(answered.output_text).toBe("It is sunny.");
    const chat = chatOf(second.sidecar);
    expect(chat.messages.map((m) => m.role)).toEqual([Role.USER, Role.ASSISTANT, Role.TOOL, Role.TOOL]);
    expect(chat.messages[1]).toMatchObject({ content: "Checking both.", reasoning: "Two cities." });
    expect(chat.messages[1]?.toolCalls.map((c) => c.id)).toEqual(["call_a", "call_b"]);
  });

  it("a refusal is a BadRequestError with param", async () => {
    const { openai } = client(toolScript);
    const error = await openai.responses
      .create({ model: "m", input: "x", tools: [{ ...tools[0]!, name: "get weather" }] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APIError);
    expect((error as APIError).status).toBe(400);
    expect((error as APIError).param).toBe("tools[0].name");
  });
});

describe("the stream helper reads the function_call and reasoning goldens at hostile chunk boundaries", () => {
  it.each([
    [
      "responses-tools",
      [
        {
          type: "function_call",
          id: "fc_test0000000000000000id01",
          call_id: "call_weather",
          name: "get_weather",
          arguments: '{"city":"Tokyo"}',
          status: "completed",
        },
      ],
      "",
    ],
    [
      "responses-reasoning",
      [
        {
          type: "reasoning",
          id: "rs_test0000000000000000id01",
          summary: [],
          content: [{ type: "reasoning_text", text: "Checking the forecast." }],
        },
        {
          type: "message",
          id: "msg_test0000000000000000id01",
          content: [{ type: "output_text", text: "It is sunny." }],
        },
      ],
      "It is sunny.",
    ],
  ] as const)("%s", async (name, output, text) => {
    for (const [how, chunks] of hostileSplits(goldenBytes(name))) {
      const openai = openaiReplaying(chunks);
      const final = await openai.responses.stream({ model: "m", input: "x" }).finalResponse();
      expect(final.status, how).toBe("completed");
      expect(final.output, how).toMatchObject(output);
      expect(final.output, how).toHaveLength(output.length);
      expect(final.output_text, how).toBe(text);
    }
  });
});
