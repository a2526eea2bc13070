// Tools and reasoning end to end: the `tools` scripted model (gguf/models.ts) in a real
// sidecar, the edge on Node, and the official clients of every protocol. The model calls
// get_weather(city: "Tokyo") when tools are offered, answers with reasoning after a tool result,
// and reasons then answers in a plain chat — so every assertion is exact.
//
// A tool call streams as delta.tool_calls fragments and ends with finish_reason "tool_calls"
// (docs/contract.md, "Chat completions: tools and reasoning").
import Anthropic from "@anthropic-ai/sdk";
import { betaTool } from "@anthropic-ai/sdk/helpers/beta/json-schema";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureModels, modelPath, TOOLS_RESULT_PIECES, TOOLS_THINK_PIECES } from "../../gguf/models.js";
import { checkChatStream } from "../support/contract.js";
import { startStack, type Stack } from "../support/edge.js";
import { startRecordingProxy } from "../support/recording-proxy.js";
import { readEvents } from "../support/sse.js";
import { THINK_REASONING, TOOL_ARGUMENT_FRAGMENTS, TOOL_RESULT_REASONING, TOOLS_ANSWER } from "../support/scripted.js";

const WEATHER_SCHEMA = {
  type: "object" as const,
  properties: { city: { type: "string" } },
  required: ["city"],
};

/** The tool request of docs/clients.md ("Tool loops"): the get_weather tool, tool_choice auto. */
const chatTools: OpenAI.Chat.ChatCompletionTool[] = [
  {
    type: "function",
    function: { name: "get_weather", description: "Get weather for a city", parameters: WEATHER_SCHEMA },
  },
];
const weatherQuestion = [{ role: "user" as const, content: "Weather in Tokyo?" }];
const toolResult = JSON.stringify({ temperature: 22, sky: "sunny" });

let stack: Stack;
let openai: OpenAI;
let anthropic: Anthropic;
beforeAll(async () => {
  stack = await startStack({ model: modelPath("tools"), contextSize: 2048 });
  openai = new OpenAI({ baseURL: stack.baseURL, apiKey: "not-needed", maxRetries: 0 });
  anthropic = new Anthropic({ baseURL: stack.edge.url, apiKey: "not-checked", maxRetries: 0 });
});
afterAll(async () => {
  await stack?.stop();
});

describe("chat completions", () => {
  it("streams the contract's tool-call frames, in order, through the real model", async () => {
    const response = await fetch(`${stack.baseURL}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ messages: weatherQuestion, tools: chatTools, tool_choice: "auto", stream: true }),
    });
    expect(response.status).toBe(200);
    const events = await readEvents(response.body);
    checkChatStream(events);
    const data = events.map((e) => e.data);
    expect(data.at(-1)).toBe("[DONE]");
    const chunks = data.slice(0, -1).map((d) => JSON.parse(d) as OpenAI.Chat.ChatCompletionChunk);
    const deltas = chunks.map((c) => c.choices[0]?.delta);
    expect(deltas[0]).toEqual({ role: "assistant" });
    expect(deltas[1]).toEqual({
      tool_calls: [
        {
          index: 0,
          id: expect.stringMatching(/^call_/),
          type: "function",
          function: { name: "get_weather", arguments: "" },
        },
      ],
    });
    expect(deltas.slice(2, -1)).toEqual(
      TOOL_ARGUMENT_FRAGMENTS.map((fragment) => ({ tool_calls: [{ index: 0, function: { arguments: fragment } }] })),
    );
    expect(chunks.at(-1)?.choices[0]).toMatchObject({ delta: {}, finish_reason: "tool_calls" });
    expect(JSON.parse(TOOL_ARGUMENT_FRAGMENTS.join(""))).toEqual({ city: "Tokyo" });
  });

  it("runs an agent loop with the openai client: call, tool result, final answer with reasoning", async () => {
    const first = await openai.chat.completions
      .stream({ model: "local-model", messages: weatherQuestion, tools: chatTools })
      .finalChatCompletion();
    const choice = first.choices[0];
    expect(choice?.finish_reason).toBe("tool_calls");
    const call = choice?.message.tool_calls?.[0];
    expect(call).toMatchObject({ type: "function", function: { name: "get_weather" } });
    if (call?.type !== "function") throw new Error("no function call");
    expect(JSON.parse(call.function.arguments)).toEqual({ city: "Tokyo" });

    const history: OpenAI.Chat.ChatCompletionMessageParam[] = [
      ...weatherQuestion,
      { role: "assistant", content: null, tool_calls: [call] },
      { role: "tool", tool_call_id: call.id, content: toolResult },
    ];
    // Streaming: reasoning deltas and content deltas never mix.
    const stream = await openai.chat.completions.create({
      model: "m",
      messages: history,
      tools: chatTools,
      stream: true,
    });
    let reasoning = "";
    let content = "";
    let finish: string | null | undefined;
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta as { content?: string | null; reasoning_content?: string } | undefined;
      if (delta?.reasoning_content !== undefined) {
        expect(delta.content ?? undefined).toBeUndefined();
        reasoning += delta.reasoning_content;
      }
      if (typeof delta?.content === "string") content += delta.content;
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(reasoning).toBe(TOOL_RESULT_REASONING);
    expect(content).toBe(TOOLS_ANSWER);
    expect(finish).toBe("stop");

    const final = await openai.chat.completions.create({ model: "m", messages: history, tools: chatTools });
    expect(final.choices[0]).toMatchObject({
      finish_reason: "stop",
      message: { role: "assistant", content: TOOLS_ANSWER, reasoning_content: TOOL_RESULT_REASONING },
    });
    // `<think>` through `</think>`: the reasoning tokens of the reply, both markers counted.
    expect(final.usage?.completion_tokens_details?.reasoning_tokens).toBe(TOOLS_RESULT_PIECES.indexOf("</think>") + 1);
  });

  it("two calls in one reply: the openai client accumulates both, by index", async () => {
    const completion = await openai.chat.completions
      .stream({
        model: "m",
        messages: [{ role: "user", content: "Weather in both cities, Tokyo and Paris?" }],
        tools: chatTools,
      })
      .finalChatCompletion();
    const calls = completion.choices[0]?.message.tool_calls ?? [];
    expect(calls.map((c) => (c.type === "function" ? JSON.parse(c.function.arguments) : null))).toEqual([
      { city: "Tokyo" },
      { city: "Paris" },
    ]);
    expect(new Set(calls.map((c) => c.id)).size).toBe(2);
    expect(completion.choices[0]?.finish_reason).toBe("tool_calls");
  });

  it("a plain chat: reasoning apart from the answer, streaming and not", async () => {
    const whole = await openai.chat.completions.create({ model: "m", messages: [{ role: "user", content: "Hello!" }] });
    expect(whole.choices[0]?.message).toMatchObject({ content: TOOLS_ANSWER, reasoning_content: THINK_REASONING });
    expect(whole.choices[0]?.message.tool_calls ?? []).toEqual([]);
    expect(whole.usage?.completion_tokens_details?.reasoning_tokens).toBe(TOOLS_THINK_PIECES.indexOf("</think>") + 1);
  });
});

describe("turning reasoning down", () => {
  const hello = [{ role: "user" as const, content: "Hello!" }];

  it(
    "chat reasoning_effort none: no reasoning, the answer, usage says 0 reasoning tokens; low leaves it " + "be",
    async () => {
      const none = await openai.chat.completions.create({
        model: "m",
        messages: hello,
        reasoning_effort: "none" as never,
      });
      expect(none.choices[0]?.message.content).toBe(TOOLS_ANSWER);
      expect((none.choices[0]!.message as { reasoning_content?: string }).reasoning_content ?? "").toBe("");
      // The template has no thinking switch: the model opens its segment and the sidecar closes it at
      // once; those markers are no reasoning.
      expect(none.usage?.completion_tokens_details?.reasoning_tokens).toBe(0);
      const low = await openai.chat.completions.create({ model: "m", messages: hello, reasoning_effort: "low" });
      expect((low.choices[0]!.message as { reasoning_content?: string }).reasoning_content).toBe(THINK_REASONING);
      expect(none.usage!.completion_tokens).toBeLessThan(low.usage!.completion_tokens);
    },
  );

  it("Responses reasoning.effort minimal and none: no reasoning item, 0 reasoning tokens", async () => {
    for (const effort of ["minimal", "none"] as const) {
      const response = await openai.responses.create({ model: "m", input: "Hello!", reasoning: { effort } });
      expect(response.output.map((item) => item.type)).toEqual(["message"]);
      expect(response.output_text).toBe(TOOLS_ANSWER);
      expect(response.usage?.output_tokens_details.reasoning_tokens).toBe(0);
    }
  });

  it("Anthropic thinking disabled: no reasoning, fewer output tokens; display omitted hides it", async () => {
    const disabled = await anthropic.messages.create({
      model: "m",
      max_tokens: 256,
      messages: hello,
      thinking: { type: "disabled" },
    });
    const enabled = await anthropic.messages.create({
      model: "m",
      max_tokens: 256,
      messages: hello,
      thinking: { type: "enabled", budget_tokens: 1024 },
    });
    expect(disabled.content).toEqual([{ type: "text", text: TOOLS_ANSWER }]);
    expect(disabled.usage.output_tokens).toBeLessThan(enabled.usage.output_tokens);
    const omitted = await anthropic.messages.create({
      model: "m",
      max_tokens: 256,
      messages: hello,
      thinking: { type: "adaptive", display: "omitted" } as never,
    });
    expect(omitted.content).toEqual([{ type: "text", text: TOOLS_ANSWER }]);
  });
});

// The `thinking` model: the tools model with Qwen3's `enable_thinking` switch in its template.
// Reasoning off turns the switch off, so the model writes no reasoning segment at all: the reply is
// the answer's 16 tokens alone (`It is sunny in Tokyo, 22°C. ☀️`; "°" and "☀️" are byte tokens).
describe("reasoning off with the template's own thinking switch", () => {
  const hello = [{ role: "user" as const, content: "Hello!" }];
  const ANSWER_TOKENS = 16;
  let thinking: Stack;
  let client: OpenAI;
  let claude: Anthropic;
  beforeAll(async () => {
    const { thinking: model } = await ensureModels("models", ["thinking"]);
    thinking = await startStack({ model, contextSize: 2048 });
    client = new OpenAI({ baseURL: thinking.baseURL, apiKey: "not-needed", maxRetries: 0 });
    claude = new Anthropic({ baseURL: thinking.edge.url, apiKey: "not-checked", maxRetries: 0 });
  });
  afterAll(async () => {
    await thinking?.stop();
  });

  it("chat reasoning_effort none: the answer alone; low reasons as before", async () => {
    const none = await client.chat.completions.create({ model: "m", messages: hello, reasoning_effort: "none" });
    expect(none.choices[0]?.message).toEqual({ role: "assistant", content: TOOLS_ANSWER, refusal: null });
    expect(none.usage).toMatchObject({
      completion_tokens: ANSWER_TOKENS,
      completion_tokens_details: { reasoning_tokens: 0 },
    });
    const low = await client.chat.completions.create({ model: "m", messages: hello, reasoning_effort: "low" });
    expect(low.choices[0]?.message).toMatchObject({ content: TOOLS_ANSWER, reasoning_content: THINK_REASONING });
    expect(low.usage?.completion_tokens_details?.reasoning_tokens).toBe(TOOLS_THINK_PIECES.indexOf("</think>") + 1);
  });

  it("Responses reasoning.effort none, streamed: no reasoning event, usage says 0", async () => {
    const stream = client.responses.stream({ model: "m", input: "Hello!", reasoning: { effort: "none" } });
    const types = new Set<string>();
    stream.on("event", (event) => types.add(event.type));
    const final = await stream.finalResponse();
    expect([...types].filter((type) => type.includes("reasoning"))).toEqual([]);
    expect(final.output.map((item) => item.type)).toEqual(["message"]);
    expect(final.output_text).toBe(TOOLS_ANSWER);
    expect(final.usage).toMatchObject({ output_tokens: ANSWER_TOKENS, output_tokens_details: { reasoning_tokens: 0 } });
  });

  it("Anthropic thinking disabled: a text block alone, the answer's tokens alone", async () => {
    const disabled = await claude.messages.create({
      model: "m",
      max_tokens: 256,
      messages: hello,
      thinking: { type: "disabled" },
    });
    expect(disabled.content).toEqual([{ type: "text", text: TOOLS_ANSWER }]);
    expect(disabled.usage.output_tokens).toBe(ANSWER_TOKENS);
  });
});

describe("Anthropic messages", () => {
  const tools: Anthropic.Tool[] = [
    { name: "get_weather", description: "Get weather for a city", input_schema: WEATHER_SCHEMA },
  ];

  it("runs an agent loop with messages.stream(): tool_use, tool_result, thinking and the answer", async () => {
    const first = await anthropic.messages
      .stream({ model: "local-model", max_tokens: 256, messages: weatherQuestion, tools })
      .finalMessage();
    expect(first.stop_reason).toBe("tool_use");
    expect(first.content).toEqual([
      { type: "tool_use", id: expect.any(String), name: "get_weather", input: { city: "Tokyo" } },
    ]);
    const use = first.content[0] as Anthropic.ToolUseBlock;

    const history: Anthropic.MessageParam[] = [
      ...weatherQuestion,
      { role: "assistant", content: first.content },
      { role: "user", content: [{ type: "tool_result", tool_use_id: use.id, content: toolResult }] },
    ];
    const final = await anthropic.messages
      .stream({
        model: "m",
        max_tokens: 256,
        messages: history,
        tools,
        thinking: { type: "enabled", budget_tokens: 1024 },
      })
      .finalMessage();
    expect(final.stop_reason).toBe("end_turn");
    expect(final.content).toEqual([
      { type: "thinking", thinking: TOOL_RESULT_REASONING, signature: expect.any(String) },
      { type: "text", text: TOOLS_ANSWER },
    ]);

    // Without thinking enabled the reasoning is not shown; the thinking block can be sent back.
    const plain = await anthropic.messages.create({ model: "m", max_tokens: 256, messages: history, tools });
    expect(plain.content).toMatchObject([{ type: "text", text: TOOLS_ANSWER }]);
    const again = await anthropic.messages.create({
      model: "m",
      max_tokens: 256,
      messages: [...history, { role: "assistant", content: final.content }, { role: "user", content: "Thanks!" }],
      tools,
    });
    // The conversation holds a tool result: the model answers.
    expect(again).toMatchObject({ stop_reason: "end_turn", content: [{ type: "text", text: TOOLS_ANSWER }] });
  });

  it("thinking's budget_tokens caps the reasoning; the answer follows", async () => {
    // `<think>`, "\n", "Checking": three tokens, then the template's end marker.
    const message = await anthropic.messages
      .stream({
        model: "m",
        max_tokens: 256,
        messages: [{ role: "user", content: "Hello!" }],
        thinking: { type: "enabled", budget_tokens: 3 },
      })
      .finalMessage();
    expect(message.content).toEqual([
      { type: "thinking", thinking: "Checking", signature: expect.any(String) },
      { type: "text", text: TOOLS_ANSWER },
    ]);
  });
});

describe("Anthropic tool runner (message threads)", () => {
  const getWeather = (calls: string[]) =>
    betaTool({
      name: "get_weather",
      description: "Get weather for a city",
      inputSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
      run: ({ city }) => {
        calls.push(city);
        return toolResult;
      },
    });

  it.each([false, true])(
    "runs its tool loop on a thread the server keeps, sending only the new turn (stream: %s)",
    async (stream) => {
      // What reaches the edge, recorded at its door.
      const proxy = await startRecordingProxy(stack.edge.url);
      const client = new Anthropic({ baseURL: proxy.url, apiKey: "not-checked", maxRetries: 0 });
      const calls: string[] = [];
      const replies: Anthropic.Beta.BetaMessage[] = [];
      try {
        const runner = client.beta.messages.toolRunner({
          model: "m",
          max_tokens: 256,
          messages: weatherQuestion,
          tools: [getWeather(calls)],
          stream,
        });
        for await (const item of runner) replies.push("finalMessage" in item ? await item.finalMessage() : item);
      } finally {
        await proxy.close();
      }
      expect(calls).toEqual(["Tokyo"]);
      const [first, final] = replies;
      expect(replies).toHaveLength(2);
      expect(first?.content).toEqual([
        { type: "tool_use", id: expect.stringMatching(/^call_/), name: "get_weather", input: { city: "Tokyo" } },
      ]);
      expect(final).toMatchObject({ stop_reason: "end_turn", content: [{ type: "text", text: TOOLS_ANSWER }] });
      const use = first?.content[0] as Anthropic.Beta.BetaToolUseBlock;

      const posts = proxy.requests.filter((r) => r.method === "POST");
      expect(posts.map((r) => [r.path, r.headers["anthropic-beta"]])).toEqual([
        ["/v1/messages", "message-threads-2026-08-12"],
        ["/v1/messages", "message-threads-2026-08-12"],
      ]);
      const streamField = { stream };
      // Turn 1 creates the thread with the whole conversation and the tools.
      expect(posts[0]?.body).toEqual({
        model: "m",
        max_tokens: 256,
        messages: weatherQuestion,
        tools: [
          { type: "custom", name: "get_weather", description: "Get weather for a city", input_schema: WEATHER_SCHEMA },
        ],
        thread: { type: "create" },
        ...streamField,
      });
      // Turn 2 sends only the tool result, continuing from turn 1's reply, without the tools.
      expect(posts[1]?.body).toEqual({
        model: "m",
        max_tokens: 256,
        messages: [{ role: "user", content: [{ type: "tool_result", tool_use_id: use.id, content: toolResult }] }],
        thread: { type: "continue", previous_message_id: first?.id },
        ...streamField,
      });
      // The sidecar saw the whole conversation on turn 2 (the thread's tools, turn 1, the tool
      // result), its prefix found in the KV cache.
      const whole = await anthropic.messages.countTokens({
        model: "m",
        tools: [{ name: "get_weather", description: "Get weather for a city", input_schema: WEATHER_SCHEMA }],
        messages: [
          ...weatherQuestion,
          {
            role: "assistant",
            content: [{ type: "tool_use", id: use.id, name: "get_weather", input: { city: "Tokyo" } }],
          },
          { role: "user", content: [{ type: "tool_result", tool_use_id: use.id, content: toolResult }] },
        ],
      });
      expect((final?.usage.input_tokens ?? 0) + (final?.usage.cache_read_input_tokens ?? 0)).toBe(whole.input_tokens);
      expect(final?.usage.cache_read_input_tokens).toBeGreaterThan(first?.usage.input_tokens ?? 0);
    },
  );

  it("with thread: false the runner sends the whole conversation, and nothing is threaded", async () => {
    const calls: string[] = [];
    const final = await anthropic.beta.messages.toolRunner({
      model: "m",
      max_tokens: 256,
      messages: weatherQuestion,
      tools: [getWeather(calls)],
      thread: false,
    });
    expect(calls).toEqual(["Tokyo"]);
    expect(final.content).toEqual([{ type: "text", text: TOOLS_ANSWER }]);
  });
});

describe("OpenAI responses", () => {
  const tools: OpenAI.Responses.FunctionTool[] = [
    {
      type: "function",
      name: "get_weather",
      description: "Get weather for a city",
      parameters: WEATHER_SCHEMA,
      strict: true,
    },
  ];

  it(
    "runs an agent loop with responses.stream(): function_call, function_call_output, reasoning and the " + "answer",
    async () => {
      const first = await openai.responses
        .stream({ model: "local-model", input: "Weather in Tokyo?", tools })
        .finalResponse();
      expect(first.output).toHaveLength(1);
      const call = first.output[0];
      expect(call).toMatchObject({ type: "function_call", name: "get_weather", status: "completed" });
      if (call?.type !== "function_call") throw new Error("no function call");
      expect(JSON.parse(call.arguments)).toEqual({ city: "Tokyo" });

      const final = await openai.responses
        .stream({
          model: "m",
          tools,
          input: [
            { role: "user", content: "Weather in Tokyo?" },
            { type: "function_call", call_id: call.call_id, name: call.name, arguments: call.arguments },
            { type: "function_call_output", call_id: call.call_id, output: toolResult },
          ],
        })
        .finalResponse();
      expect(final.output.map((item) => item.type)).toEqual(["reasoning", "message"]);
      expect(final.output_text).toBe(TOOLS_ANSWER);
      expect(JSON.stringify(final.output[0])).toContain(TOOL_RESULT_REASONING);
      expect(final.usage?.output_tokens_details.reasoning_tokens).toBe(TOOLS_RESULT_PIECES.indexOf("</think>") + 1);
    },
  );

  /** The Response of a stream's `response.completed`, as sent. */
  async function completedOf(body: OpenAI.Responses.ResponseCreateParamsStreaming): Promise<OpenAI.Responses.Response> {
    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of await openai.responses.create(body))
      if (event.type === "response.completed") completed = event.response;
    if (completed === undefined) throw new Error("no response.completed");
    return completed;
  }

  it(
    "runs the agent loop on stored responses: previous_response_id and the call's output alone; retrieve is what " +
      "was streamed",
    async () => {
      const first = await completedOf({ model: "m", input: "Weather in Tokyo?", tools, stream: true });
      const call = first.output[0];
      if (call?.type !== "function_call") throw new Error("no function call");
      const final = await completedOf({
        model: "m",
        tools,
        stream: true,
        previous_response_id: first.id,
        input: [{ type: "function_call_output", call_id: call.call_id, output: toolResult }],
      });
      expect(final.output.map((item) => item.type)).toEqual(["reasoning", "message"]);
      expect(final.output_text).toBe(TOOLS_ANSWER);
      const { _request_id: _one, ...storedFirst } = await openai.responses.retrieve(first.id);
      const { _request_id: _two, ...storedFinal } = await openai.responses.retrieve(final.id);
      expect([storedFirst, storedFinal]).toEqual([first, final]);
    },
  );

  it(
    "offers a namespace's function tools and names the namespace on their calls (as Codex groups its " + "tools)",
    async () => {
      const grouped = [
        {
          type: "namespace",
          name: "weather",
          description: "Weather tools.",
          tools: [
            { ...tools[0], type: "function" },
            { type: "custom", name: "raw" },
          ],
        },
        { type: "web_search" },
      ] as never;
      const response = await openai.responses.create({ model: "m", input: "Weather in Tokyo?", tools: grouped });
      const call = response.output[0];
      expect(call).toMatchObject({
        type: "function_call",
        name: "get_weather",
        namespace: "weather",
        status: "completed",
      });
      if (call?.type !== "function_call") throw new Error("no function call");
      expect(JSON.parse(call.arguments)).toEqual({ city: "Tokyo" });
      expect(response.tools).toEqual([
        {
          type: "namespace",
          name: "weather",
          description: "Weather tools.",
          tools: [
            {
              type: "function",
              name: "get_weather",
              description: "Get weather for a city",
              parameters: WEATHER_SCHEMA,
              strict: true,
            },
          ],
        },
      ]);
      expect((response as unknown as { warnings: string[] }).warnings).toEqual([
        "tools of type 'custom' are not supported by this server and were ignored",
        "tools of type 'web_search' are not supported by this server and were ignored",
      ]);
      // The call goes back with its namespace, as Codex sends it.
      const final = await openai.responses.create({
        model: "m",
        tools: grouped,
        input: [
          { role: "user", content: "Weather in Tokyo?" },
          {
            type: "function_call",
            call_id: call.call_id,
            name: call.name,
            arguments: call.arguments,
            namespace: "weather",
          } as never,
          { type: "function_call_output", call_id: call.call_id, output: toolResult },
        ],
      });
      expect(final.output_text).toBe(TOOLS_ANSWER);
    },
  );

  it(
    "gives a stateless client its reasoning back through encrypted_content, and reads it on the next " + "turn",
    async () => {
      // Turn 1 with include, as Codex sends it (store: false): the reasoning item carries its text sealed.
      const first = await openai.responses.create({
        model: "m",
        input: "Hello!",
        store: false,
        include: ["reasoning.encrypted_content"],
      });
      const reasoning = first.output[0];
      if (reasoning?.type !== "reasoning") throw new Error("no reasoning item");
      expect(reasoning.content).toEqual([{ type: "reasoning_text", text: THINK_REASONING }]);
      expect(reasoning.encrypted_content).toMatch(/^llm-edge\.r1\./);
      const plain = await openai.responses.create({ model: "m", input: "Hello!" });
      expect(plain.output[0]).not.toHaveProperty("encrypted_content");
      // Turn 2: the item comes back without its text (as Codex sends it), before a call and its
      // result; the prompt is the same as with the text sent in the clear, and longer than without it.
      const history = (item: Record<string, unknown> | undefined) => ({
        model: "m",
        tools,
        input: [
          { role: "user" as const, content: "Weather in Tokyo?" },
          ...(item === undefined ? [] : [{ type: "reasoning", summary: [], ...item } as never]),
          { type: "function_call" as const, call_id: "call_a", name: "get_weather", arguments: '{"city":"Tokyo"}' },
          { type: "function_call_output" as const, call_id: "call_a", output: toolResult },
        ],
      });
      const sealed = await openai.responses.create(history({ encrypted_content: reasoning.encrypted_content }));
      const clear = await openai.responses.create(
        history({ content: [{ type: "reasoning_text", text: THINK_REASONING }] }),
      );
      const without = await openai.responses.create(history(undefined));
      expect(sealed.usage?.input_tokens).toBe(clear.usage?.input_tokens);
      expect(sealed.usage?.input_tokens).toBeGreaterThan(without.usage?.input_tokens ?? Number.POSITIVE_INFINITY);
      expect(sealed.output_text).toBe(TOOLS_ANSWER);
    },
  );

  // The server takes back what it made: a call cut by max_output_tokens in its arguments is stored
  // with the arguments it had; its output, sent with previous_response_id or with the items sent back
  // as they came, is answered (the template gets the arguments as they were produced).
  it("takes back its own call cut by max_output_tokens: by previous_response_id and sent back verbatim", async () => {
    // `<tool_call>`, "\n", `{"name": "`, "get_weather", `", "arguments": `, `{"`, "city": cut there.
    const cut = await openai.responses.create({ model: "m", input: "Weather in Tokyo?", tools, max_output_tokens: 7 });
    expect(cut).toMatchObject({ status: "incomplete", incomplete_details: { reason: "max_output_tokens" } });
    const call = cut.output[0];
    expect(call).toMatchObject({
      type: "function_call",
      name: "get_weather",
      arguments: '{"city',
      status: "incomplete",
    });
    if (call?.type !== "function_call") throw new Error("no function call");
    const output = { type: "function_call_output" as const, call_id: call.call_id, output: toolResult };
    const continued = await openai.responses.create({
      model: "m",
      tools,
      previous_response_id: cut.id,
      input: [output],
    });
    expect(continued).toMatchObject({ status: "completed", output_text: TOOLS_ANSWER });
    expect(continued.output[0]).toMatchObject({
      type: "reasoning",
      content: [{ type: "reasoning_text", text: TOOL_RESULT_REASONING }],
    });
    const verbatim = await openai.responses.create({
      model: "m",
      tools,
      store: false,
      input: [
        { role: "user", content: "Weather in Tokyo?" },
        ...(cut.output as OpenAI.Responses.ResponseInputItem[]),
        output,
      ],
    });
    expect(verbatim).toMatchObject({ status: "completed", output_text: TOOLS_ANSWER });
    expect(verbatim.usage?.input_tokens).toBe(continued.usage?.input_tokens);
  });

  it("refuses a call from elsewhere whose arguments are not JSON, naming it", async () => {
    const refused = await openai.responses
      .create({
        model: "m",
        tools,
        input: [
          { role: "user", content: "Weather in Tokyo?" },
          { type: "function_call", call_id: "call_elsewhere", name: "get_weather", arguments: '{"city' },
          { type: "function_call_output", call_id: "call_elsewhere", output: toolResult },
        ],
      })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect((refused as InstanceType<typeof OpenAI.BadRequestError>).message).toContain(
      'tool call "call_elsewhere" of chat message 1 has arguments that are not valid JSON',
    );
  });

  it(
    "answers a history sent back as [function_call, message, function_call_output], as coding agents send " + "it",
    async () => {
      const final = await openai.responses.create({
        model: "m",
        tools,
        input: [
          { role: "user", content: "Weather in Tokyo?" },
          { type: "function_call", call_id: "call_a", name: "get_weather", arguments: '{"city":"Tokyo"}' },
          {
            type: "message",
            role: "assistant",
            content: [{ type: "output_text", text: "Checking now.", annotations: [] }],
          } as never,
          { type: "function_call_output", call_id: "call_a", output: toolResult },
        ],
      });
      expect(final.output_text).toBe(TOOLS_ANSWER);
      expect(final.usage?.output_tokens).toBeGreaterThan(0);
    },
  );
});
