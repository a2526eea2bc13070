// Anthropic Messages with tools and thinking, against the fake sidecar: how tools, tool_choice
// and a tool_use / tool_result / thinking history become the sidecar's Chat; the refusals;
// count_tokens with tools; and the official client (@anthropic-ai/sdk) reading tool_use and
// thinking blocks, streaming (`messages.stream()` → `finalMessage()`) and not.
import Anthropic, { APIError } from "@anthropic-ai/sdk";
import { describe, expect, it } from "vitest";
import { Role, ToolChoice } from "../../proto/gen/inference/v1/inference_pb.js";
import { thinkingSignature } from "../../edge/protocols/anthropic-messages/signature.js";
import { inProcessFetch, post, sentChat, testApp } from "../support/app.js";
import { finish, start, token, toolCall, type Step } from "../support/fake-sidecar.js";
import { thinkingSteps } from "../support/tool-scripts.js";
import { goldenBytes, hostileSplits, parseText } from "../support/sse.js";
import { anthropicReplaying } from "../support/replay.js";
import { checkAnthropicStream } from "../support/contract.js";

const PATH = "/v1/messages";
const WEATHER_SCHEMA = { type: "object", properties: { city: { type: "string" } }, required: ["city"] };
const weatherTool = { name: "get_weather", description: "Get weather for a city", input_schema: WEATHER_SCHEMA };
const question = [{ role: "user" as const, content: "Weather in Tokyo?" }];
const base = { model: "claude-sonnet-4-5", max_tokens: 256, messages: question };

const weatherCall = (id = "toolu_01", index = 0, city = "Tokyo") =>
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

const chatOf = sentChat;

async function send(body: Record<string, unknown>, script: Step[] = toolScript) {
  const { app, sidecar } = testApp(script);
  const response = await post(app, PATH, body);
  return { response, sidecar };
}

async function expectRefused(body: Record<string, unknown>, message: RegExp) {
  const { response, sidecar } = await send(body);
  expect(response.status).toBe(400);
  const json = (await response.json()) as { type: string; error: { type: string; message: string } };
  expect(json.type).toBe("error");
  expect(json.error.type).toBe("invalid_request_error");
  expect(json.error.message).toMatch(message);
  expect(sidecar.calls).toHaveLength(0);
}

describe("tools and tool_choice → the sidecar's Chat", () => {
  it("tools travel with the chat: name, description, input_schema as JSON text", async () => {
    const { response, sidecar } = await send({
      ...base,
      tools: [weatherTool, { name: "now", input_schema: { type: "object" } }],
    });
    expect(response.status).toBe(200);
    const chat = chatOf(sidecar);
    expect(
      chat.tools.map((t) => ({
        name: t.name,
        description: t.description,
        parameters: JSON.parse(t.parameters) as unknown,
      })),
    ).toEqual([
      { name: "get_weather", description: "Get weather for a city", parameters: WEATHER_SCHEMA },
      { name: "now", description: "", parameters: { type: "object" } },
    ]);
    expect(chat.toolChoice).toBe(ToolChoice.UNSPECIFIED);
    expect(chat.parallelToolCalls).toBeUndefined();
  });

  it("a custom tool may say type 'custom'", async () => {
    const { response, sidecar } = await send({ ...base, tools: [{ type: "custom", ...weatherTool }] });
    expect(response.status).toBe(200);
    expect(chatOf(sidecar).tools.map((t) => t.name)).toEqual(["get_weather"]);
  });

  it.each([
    [{ type: "auto" }, { toolChoice: ToolChoice.AUTO, toolName: "", parallelToolCalls: undefined }],
    [{ type: "any" }, { toolChoice: ToolChoice.REQUIRED, toolName: "", parallelToolCalls: undefined }],
    [
      { type: "tool", name: "get_weather" },
      { toolChoice: ToolChoice.FUNCTION, toolName: "get_weather", parallelToolCalls: undefined },
    ],
    [{ type: "none" }, { toolChoice: ToolChoice.NONE, toolName: "", parallelToolCalls: undefined }],
    [
      { type: "auto", disable_parallel_tool_use: true },
      { toolChoice: ToolChoice.AUTO, toolName: "", parallelToolCalls: false },
    ],
    [
      { type: "any", disable_parallel_tool_use: true },
      { toolChoice: ToolChoice.REQUIRED, toolName: "", parallelToolCalls: false },
    ],
    [
      { type: "tool", name: "get_weather", disable_parallel_tool_use: false },
      { toolChoice: ToolChoice.FUNCTION, toolName: "get_weather", parallelToolCalls: undefined },
    ],
  ])("tool_choice %j", async (toolChoice, expected) => {
    const { response, sidecar } = await send({ ...base, tools: [weatherTool], tool_choice: toolChoice });
    expect(response.status).toBe(200);
    const chat = chatOf(sidecar);
    expect({ toolChoice: chat.toolChoice, toolName: chat.toolName, parallelToolCalls: chat.parallelToolCalls }).toEqual(
      expected,
    );
  });
});

describe("a tool_use / tool_result / thinking history → chat messages", () => {
  const history = [
    { role: "user", content: "Weather in Tokyo and Paris?" },
    {
      role: "assistant",
      content: [
        { type: "thinking", thinking: "Two cities.", signature: "anything" },
        { type: "redacted_thinking", data: "opaque" },
        { type: "text", text: "Let me look." },
        { type: "tool_use", id: "toolu_a", name: "get_weather", input: { city: "Tokyo" } },
        { type: "tool_use", id: "toolu_b", name: "get_weather", input: { city: "Paris" } },
      ],
    },
    {
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: "toolu_a", content: '{"sky":"sunny"}' },
        {
          type: "tool_result",
          tool_use_id: "toolu_b",
          content: [
            { type: "text", text: "rain" },
            { type: "text", text: "12 C" },
          ],
          is_error: false,
        },
        { type: "text", text: "And tomorrow?" },
      ],
    },
  ];

  it("calls on the assistant message, one tool message per result in order, then the user's text", async () => {
    const { response, sidecar } = await send({ ...base, tools: [weatherTool], messages: history });
    expect(response.status).toBe(200);
    const messages = chatOf(sidecar).messages.map((m) => ({
      role: m.role,
      content: m.content,
      reasoning: m.reasoning,
      toolCallId: m.toolCallId,
      toolCalls: m.toolCalls.map((c) => ({ id: c.id, name: c.name, arguments: c.arguments })),
    }));
    expect(messages).toEqual([
      { role: Role.USER, content: "Weather in Tokyo and Paris?", reasoning: "", toolCallId: "", toolCalls: [] },
      {
        role: Role.ASSISTANT,
        content: "Let me look.",
        reasoning: "Two cities.",
        toolCallId: "",
        toolCalls: [
          { id: "toolu_a", name: "get_weather", arguments: '{"city":"Tokyo"}' },
          { id: "toolu_b", name: "get_weather", arguments: '{"city":"Paris"}' },
        ],
      },
      { role: Role.TOOL, content: '{"sky":"sunny"}', reasoning: "", toolCallId: "toolu_a", toolCalls: [] },
      { role: Role.TOOL, content: "rain\n12 C", reasoning: "", toolCallId: "toolu_b", toolCalls: [] },
      { role: Role.USER, content: "And tomorrow?", reasoning: "", toolCallId: "", toolCalls: [] },
    ]);
  });

  it("a user message of results only adds no empty user message; an error result says so", async () => {
    const messages = [
      ...question,
      { role: "assistant", content: [{ type: "tool_use", id: "toolu_a", name: "get_weather", input: {} }] },
      {
        role: "user",
        content: [{ type: "tool_result", tool_use_id: "toolu_a", content: "city is required", is_error: true }],
      },
    ];
    const { response, sidecar } = await send({ ...base, tools: [weatherTool], messages });
    expect(response.status).toBe(200);
    const chat = chatOf(sidecar).messages;
    expect(chat.map((m) => m.role)).toEqual([Role.USER, Role.ASSISTANT, Role.TOOL]);
    expect(chat[1]).toMatchObject({ content: "", toolCalls: [{ id: "toolu_a", arguments: "{}" }] });
    expect(chat[2]).toMatchObject({ toolCallId: "toolu_a", content: "Error: city is required" });
  });

  it(
    "a tool search's result (tool_reference blocks, as Claude Code's ToolSearch sends) names the tools it " + "loads",
    async () => {
      const messages = [
        ...question,
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_a", name: "get_weather", input: {} }] },
        {
          role: "user",
          content: [
            {
              type: "tool_result",
              tool_use_id: "toolu_a",
              content: [
                { type: "tool_reference", tool_name: "get_weather" },
                { type: "text", text: "found" },
              ],
            },
          ],
        },
      ];
      const { response, sidecar } = await send({ ...base, tools: [weatherTool], messages });
      expect(response.status).toBe(200);
      expect(chatOf(sidecar).messages[2]).toMatchObject({
        role: Role.TOOL,
        toolCallId: "toolu_a",
        content: "Tool loaded: get_weather\nfound",
      });
    },
  );
});

describe("refusals: Anthropic's error shape, before the sidecar is called", () => {
  const withCall = [
    ...question,
    { role: "assistant", content: [{ type: "tool_use", id: "toolu_a", name: "get_weather", input: {} }] },
  ];
  it.each<[string, Record<string, unknown>, RegExp]>([
    ["a tool name with a space", { tools: [{ ...weatherTool, name: "get weather" }] }, /'tools\[0\]\.name'.*1 to 64/],
    ["a 65-character tool name", { tools: [{ ...weatherTool, name: "x".repeat(65) }] }, /'tools\[0\]\.name'/],
    ["a tool name twice", { tools: [weatherTool, weatherTool] }, /'tools\[1\]\.name'.*used twice/],
    [
      "input_schema an array",
      { tools: [{ ...weatherTool, input_schema: [] }] },
      /'tools\[0\]\.input_schema'.*JSON schema object/,
    ],
    ["input_schema a string", { tools: [{ ...weatherTool, input_schema: "object" }] }, /'tools\[0\]\.input_schema'/],
    [
      "a web search server tool",
      { tools: [{ type: "web_search_20250305", name: "web_search" }] },
      /server tools \('web_search_20250305'\)/,
    ],
    ["a bash server tool", { tools: [{ type: "bash_20250124", name: "bash" }] }, /server tools \('bash_20250124'\)/],
    [
      "a text editor server tool",
      { tools: [{ type: "text_editor_20250429", name: "str_replace_based_edit_tool" }] },
      /server tools \('text_editor_20250429'\)/,
    ],
    [
      "tool choice naming no given tool",
      { tools: [weatherTool], tool_choice: { type: "tool", name: "get_time" } },
      /'tool_choice\.name'.*not among the tools/,
    ],
    ["tool choice 'tool' without a name", { tools: [weatherTool], tool_choice: { type: "tool" } }, /'tool_choice/],
    [
      "a tool_result answering no tool_use",
      { messages: [{ role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_x", content: "1" }] }] },
      /'messages\[0\]\.content\[0\]\.tool_use_id'.*"toolu_x" answers no tool call/,
    ],
    [
      "a tool_result answering another id",
      {
        tools: [weatherTool],
        messages: [
          ...withCall,
          { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_b", content: "1" }] },
        ],
      },
      /'messages\[2\]\.content\[0\]\.tool_use_id'.*"toolu_b"/,
    ],
    [
      "a tool_use in a user message",
      { messages: [{ role: "user", content: [{ type: "tool_use", id: "t", name: "f", input: {} }] }] },
      /cannot hold 'tool_use'/,
    ],
    [
      "a thinking block in a user message",
      { messages: [{ role: "user", content: [{ type: "thinking", thinking: "x" }] }] },
      /cannot hold 'thinking'/,
    ],
    [
      "a tool_use input that is not an object",
      {
        messages: [
          { role: "user", content: "q" },
          { role: "assistant", content: [{ type: "tool_use", id: "t", name: "f", input: "x" }] },
          { role: "user", content: "go" },
        ],
      },
      /'messages\[1\]\.content\[0\]\.input'/,
    ],
    ["thinking of an unknown type", { thinking: { type: "sometimes" } }, /'thinking\.type'/],
    [
      "a tool_result with an image block",
      {
        messages: [
          ...withCall,
          {
            role: "user",
            content: [
              {
                type: "tool_result",
                tool_use_id: "toolu_a",
                content: [{ type: "document", source: { type: "text", media_type: "text/plain", data: "x" } }],
              },
            ],
          },
        ],
      },
      /'messages\[2\]\.content\[0\]\.content\[0\]\.type'.*tool_result content blocks of type 'document' are not/,
    ],
  ])("%s", async (_, patch, message) => {
    await expectRefused({ ...base, ...patch }, message);
  });
});

describe("streamed tool_use and thinking blocks", () => {
  it("a tool_use block with the sidecar's call id, input_json_delta fragments, stop_reason tool_use", async () => {
    const { response } = await send({ ...base, tools: [weatherTool], stream: true });
    const events = parseText(await response.text());
    checkAnthropicStream(events);
    const data = events.map((e) => JSON.parse(e.data) as Record<string, unknown>);
    expect(data.slice(1)).toEqual([
      {
        type: "content_block_start",
        index: 0,
        content_block: { type: "tool_use", id: "toolu_01", name: "get_weather", input: {} },
      },
      { type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: '{"city":' } },
      { type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: ' "Tokyo"}' } },
      { type: "content_block_stop", index: 0 },
      { type: "message_delta", delta: { stop_reason: "tool_use", stop_sequence: null }, usage: { output_tokens: 6 } },
      { type: "message_stop" },
    ]);
  });

  it("text, then two calls: three blocks in order", async () => {
    const script = [
      start("tiny-llama", 40),
      token("Checking both."),
      ...weatherCall("toolu_a", 0, "Tokyo"),
      ...weatherCall("toolu_b", 1, "Paris"),
      finish("tool_calls", { promptTokens: 40, completionTokens: 12 }),
    ];
    const { response } = await send({ ...base, tools: [weatherTool], stream: true }, script);
    const summary = checkAnthropicStream(parseText(await response.text()));
    expect(summary.blocks).toEqual([
      { type: "text", text: "Checking both." },
      { type: "tool_use", text: '{"city": "Tokyo"}' },
      { type: "tool_use", text: '{"city": "Paris"}' },
    ]);
  });

  it("a tool_calls finish without any call sent ends the turn (end_turn)", async () => {
    const script = [start("tiny-llama", 40), token("No call."), finish("tool_calls", { completionTokens: 2 })];
    const { response } = await send({ ...base, tools: [weatherTool], stream: true }, script);
    const events = parseText(await response.text());
    checkAnthropicStream(events);
    expect(events.find((e) => e.event === "message_delta")?.data).toContain('"stop_reason":"end_turn"');
  });

  it("thinking enabled: a signed thinking block before the text; the signature is deterministic", async () => {
    const { response } = await send(
      { ...base, thinking: { type: "enabled", budget_tokens: 1024 }, stream: true },
      thinkingScript,
    );
    const events = parseText(await response.text());
    const summary = checkAnthropicStream(events);
    expect(summary.blocks).toEqual([
      { type: "thinking", text: "Checking the forecast." },
      { type: "text", text: "It is sunny." },
    ]);
    const signed = events.find((e) => e.data.includes("signature_delta"));
    expect(JSON.parse(signed?.data ?? "{}")).toEqual({
      type: "content_block_delta",
      index: 0,
      delta: { type: "signature_delta", signature: thinkingSignature("Checking the forecast.") },
    });
    expect(thinkingSignature("Checking the forecast.")).toBe(thinkingSignature("Checking the forecast."));
    expect(thinkingSignature("Checking the forecast.")).not.toBe(thinkingSignature("Checking the forecast!"));
  });

  it.each([undefined, { type: "disabled" }])(
    "thinking %j: reasoning dropped, still counted in output_tokens",
    async (thinkingField) => {
      const { response } = await send(
        { ...base, ...(thinkingField ? { thinking: thinkingField } : {}), stream: true },
        thinkingScript,
      );
      const events = parseText(await response.text());
      const summary = checkAnthropicStream(events);
      expect(summary.blocks).toEqual([{ type: "text", text: "It is sunny." }]);
      expect(events.find((e) => e.event === "message_delta")?.data).toContain('"output_tokens":5');
    },
  );

  it("reasoning held back to the end (Finish.reasoning) still gets its signed block", async () => {
    const script = [
      start("tiny-llama", 9),
      token("", { reasoning: "Hmm" }),
      finish("stop", { reasoning: ".", text: "", completionTokens: 2 }),
    ];
    const { response } = await send(
      { ...base, thinking: { type: "enabled", budget_tokens: 1024 }, stream: true },
      script,
    );
    const summary = checkAnthropicStream(parseText(await response.text()));
    expect(summary.blocks).toEqual([{ type: "thinking", text: "Hmm." }]);
  });
});

describe("non-streaming tool_use and thinking blocks", () => {
  it("tool_use with the parsed input, stop_reason tool_use", async () => {
    const { response } = await send({ ...base, tools: [weatherTool] });
    expect(await response.json()).toMatchObject({
      content: [{ type: "tool_use", id: "toolu_01", name: "get_weather", input: { city: "Tokyo" } }],
      stop_reason: "tool_use",
      usage: { output_tokens: 6 },
    });
  });

  it("a call cut by max_tokens: input {} (its JSON is unfinished), stop_reason max_tokens", async () => {
    const script = [
      start("tiny-llama", 40),
      ...toolCall(0, "toolu_01", "get_weather", ['{"city":']),
      finish("length", { completionTokens: 256 }),
    ];
    const { response } = await send({ ...base, tools: [weatherTool] }, script);
    expect(await response.json()).toMatchObject({
      content: [{ type: "tool_use", id: "toolu_01", name: "get_weather", input: {} }],
      stop_reason: "max_tokens",
    });
  });

  it("thinking enabled: the thinking block with its signature; not enabled: only the text", async () => {
    const shown = await send({ ...base, thinking: { type: "enabled", budget_tokens: 1024 } }, thinkingScript);
    expect(((await shown.response.json()) as { content: unknown }).content).toEqual([
      { type: "thinking", thinking: "Checking the forecast.", signature: thinkingSignature("Checking the forecast.") },
      { type: "text", text: "It is sunny." },
    ]);
    const hidden = await send(base, thinkingScript);
    expect(await hidden.response.json()).toMatchObject({
      content: [{ type: "text", text: "It is sunny." }],
      usage: { output_tokens: 5 },
    });
  });
});

describe("count_tokens renders the tools too", () => {
  it("tools, tool_choice and the tool history go to Tokenize", async () => {
    const { app, sidecar } = testApp();
    sidecar.tokenizeResult = [1, 2, 3];
    const response = await post(app, `${PATH}/count_tokens`, {
      model: "m",
      tools: [weatherTool],
      tool_choice: { type: "any" },
      messages: [
        ...question,
        {
          role: "assistant",
          content: [{ type: "tool_use", id: "toolu_a", name: "get_weather", input: { city: "Tokyo" } }],
        },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_a", content: "sunny" }] },
      ],
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ input_tokens: 3 });
    const input = sidecar.tokenizeCalls[0]?.input;
    if (input?.case !== "chat") throw new Error("no chat");
    expect(input.value.tools.map((t) => t.name)).toEqual(["get_weather"]);
    expect(input.value.toolChoice).toBe(ToolChoice.REQUIRED);
    expect(input.value.messages.map((m) => m.role)).toEqual([Role.USER, Role.ASSISTANT, Role.TOOL]);
  });

  it("refuses a server tool the same way", async () => {
    const { app, sidecar } = testApp();
    const response = await post(app, `${PATH}/count_tokens`, {
      model: "m",
      messages: question,
      tools: [{ type: "web_search_20250305", name: "web_search" }],
    });
    expect(response.status).toBe(400);
    expect(sidecar.tokenizeCalls).toHaveLength(0);
  });
});

describe("the official client", () => {
  function client(script: Step[]) {
    const { app, sidecar } = testApp(script);
    return {
      anthropic: new Anthropic({
        baseURL: "http://edge.test",
        apiKey: "sk-ant-x",
        fetch: inProcessFetch(app),
        maxRetries: 0,
      }),
      sidecar,
    };
  }
  const tools: Anthropic.Tool[] = [
    {
      name: "get_weather",
      description: "Get weather for a city",
      input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
    },
  ];

  it("messages.stream() → finalMessage(): the tool_use block with its parsed input; inputJson events", async () => {
    const { anthropic } = client(toolScript);
    const stream = anthropic.messages.stream({ model: "m", max_tokens: 256, messages: question, tools });
    const partials: string[] = [];
    stream.on("inputJson", (partial) => partials.push(partial));
    const message = await stream.finalMessage();
    expect(message.stop_reason).toBe("tool_use");
    expect(message.content).toEqual([
      { type: "tool_use", id: "toolu_01", name: "get_weather", input: { city: "Tokyo" } },
    ]);
    expect(partials).toEqual(['{"city":', ' "Tokyo"}']);
  });

  it("messages.stream() → finalMessage(): the thinking block with its signature, then the text", async () => {
    const { anthropic } = client(thinkingScript);
    const stream = anthropic.messages.stream({
      model: "m",
      max_tokens: 2048,
      messages: question,
      thinking: { type: "enabled", budget_tokens: 1024 },
    });
    const thoughts: string[] = [];
    stream.on("thinking", (delta) => thoughts.push(delta));
    const message = await stream.finalMessage();
    expect(message.content).toHaveLength(2);
    expect(message.content[0]).toEqual({
      type: "thinking",
      thinking: "Checking the forecast.",
      signature: thinkingSignature("Checking the forecast."),
    });
    expect(message.content[1]).toMatchObject({ type: "text", text: "It is sunny." });
    expect(thoughts).toEqual(["Checking", " the forecast."]);
  });

  it("messages.create: tool_use and thinking blocks, which go back as history unchanged", async () => {
    const first = client(toolScript);
    const called = await first.anthropic.messages.create({ model: "m", max_tokens: 256, messages: question, tools });
    expect(called.content).toEqual([
      { type: "tool_use", id: "toolu_01", name: "get_weather", input: { city: "Tokyo" } },
    ]);

    const second = client(thinkingScript);
    const answered = await second.anthropic.messages.create({
      model: "m",
      max_tokens: 2048,
      tools,
      thinking: { type: "enabled", budget_tokens: 1024 },
      messages: [
        ...question,
        { role: "assistant", content: called.content },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_01", content: "sunny" }] },
      ],
    });
    expect(answered.content.map((b) => b.type)).toEqual(["thinking", "text"]);
    const chat = chatOf(second.sidecar);
    expect(chat.messages.map((m) => m.role)).toEqual([Role.USER, Role.ASSISTANT, Role.TOOL]);

    // The thinking block, signature and all, is accepted back (signatures are not verified).
    const third = client(thinkingScript);
    const again = await third.anthropic.messages.create({
      model: "m",
      max_tokens: 256,
      messages: [...question, { role: "assistant", content: answered.content }, { role: "user", content: "Thanks" }],
    });
    expect(again.stop_reason).toBe("end_turn");
    expect(chatOf(third.sidecar).messages[1]).toMatchObject({
      role: Role.ASSISTANT,
      reasoning: "Checking the forecast.",
      content: "It is sunny.",
    });
  });

  it("a refusal is a BadRequestError with Anthropic's error type", async () => {
    const { anthropic } = client(toolScript);
    const error = await anthropic.messages
      .create({
        model: "m",
        max_tokens: 16,
        messages: question,
        tools: [{ type: "web_search_20250305", name: "web_search" }],
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APIError);
    expect((error as APIError).status).toBe(400);
    expect(String((error as APIError).message)).toMatch(/server tools/);
  });
});

describe("the SDK reads the tool_use and thinking goldens at hostile chunk boundaries", () => {
  const thinkingBlock = {
    type: "thinking",
    thinking: "Checking the forecast.",
    signature: thinkingSignature("Checking the forecast."),
  };
  const sunny = { type: "text", text: "It is sunny." };

  it.each([
    [
      "anthropic-tools",
      [{ type: "tool_use", id: "call_weather", name: "get_weather", input: { city: "Tokyo" } }],
      "tool_use",
    ],
    ["anthropic-thinking", [thinkingBlock, sunny], "end_turn"],
    ["anthropic-thinking-hidden", [sunny], "end_turn"],
  ] as const)("%s", async (name, content, reason) => {
    for (const [how, chunks] of hostileSplits(goldenBytes(name))) {
      const message = await anthropicReplaying(chunks)
        .messages.stream({ model: "m", max_tokens: 64, messages: question })
        .finalMessage();
      expect(message.content, how).toMatchObject(content);
      expect(message.content, how).toHaveLength(content.length);
      expect(message.stop_reason, how).toBe(reason);
    }
  });
});
