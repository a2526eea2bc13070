// The official OpenAI client (openai 6.49.0) against the edge in process, the fake sidecar
// scripted to call get_weather(city: "Tokyo") in the contract's fragments: the SDK's stream helper
// accumulates the tool_calls deltas into a final chat completion whose call has parsed
// arguments, fires its tool-call events, and the whole (non-streamed) answer parses the same.
// Then a second turn sends the call and its result back, as an agent loop does.
import OpenAI from "openai";
import { zodFunction } from "openai/helpers/zod";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { Role } from "../../proto/gen/inference/v1/inference_pb.js";
import { inProcessFetch, testApp } from "../support/app.js";
import { finish, reasoning, start, token, type Script, type Step } from "../support/fake-sidecar.js";
import { twoCallsScript, weatherCallScript } from "../support/tool-scripts.js";

const weatherCall = weatherCallScript;
const twoCalls = twoCallsScript;
const thinkingAnswer: Step[] = [
  start("tiny-llama", 50),
  ...reasoning("It is", " sunny there."),
  token("Sunny"),
  token(" in Tokyo."),
  finish("stop", { promptTokens: 50, completionTokens: 4 }),
];

function client(script: Script) {
  const { app, sidecar } = testApp(script);
  const openai = new OpenAI({
    baseURL: "http://edge.test/v1",
    apiKey: "not-needed",
    fetch: inProcessFetch(app),
    maxRetries: 0,
  });
  return { openai, sidecar };
}

const question: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: "user", content: "Weather in Tokyo?" }];
const strictTool: OpenAI.Chat.ChatCompletionFunctionTool = {
  type: "function",
  function: {
    name: "get_weather",
    description: "Get weather for a city",
    parameters: {
      type: "object",
      properties: { city: { type: "string" } },
      required: ["city"],
      additionalProperties: false,
    },
    strict: true,
  },
};

describe("chat.completions.stream() with tools", () => {
  it("finalChatCompletion() holds the call with parsed arguments (a strict tool)", async () => {
    const { openai, sidecar } = client(weatherCall);
    const stream = openai.chat.completions.stream({ model: "local-model", messages: question, tools: [strictTool] });
    const argumentDeltas: string[] = [];
    const done: unknown[] = [];
    stream.on("tool_calls.function.arguments.delta", (event) => argumentDeltas.push(event.arguments_delta));
    stream.on("tool_calls.function.arguments.done", (event) => done.push(event.parsed_arguments));
    const completion = await stream.finalChatCompletion();
    const choice = completion.choices[0];
    expect(choice?.finish_reason).toBe("tool_calls");
    expect(choice?.message.content).toBeNull();
    expect(choice?.message.tool_calls).toEqual([
      {
        id: "call_weather",
        type: "function",
        function: { name: "get_weather", arguments: '{"city":"Tokyo"}', parsed_arguments: { city: "Tokyo" } },
      },
    ]);
    // the SDK reports the first delta's empty arguments too
    expect(argumentDeltas).toEqual(["", '{"', "city", '":"Tokyo"}']);
    expect(done).toEqual([{ city: "Tokyo" }]);
    // the tool reached the sidecar with its schema as JSON text
    const chat = sidecar.lastCall?.request.input;
    expect(chat?.case === "chat" ? JSON.parse(chat.value.tools[0]?.parameters ?? "") : undefined).toEqual(
      strictTool.function.parameters,
    );
  });

  it("a zodFunction tool: the arguments are parsed by its zod schema", async () => {
    const { openai } = client(weatherCall);
    const tool = zodFunction({ name: "get_weather", parameters: z.object({ city: z.string() }) });
    const completion = await openai.chat.completions
      .stream({ model: "local-model", messages: question, tools: [tool] })
      .finalChatCompletion();
    const call = completion.choices[0]?.message.tool_calls?.[0];
    expect(call?.type === "function" ? call.function.parsed_arguments : undefined).toEqual({ city: "Tokyo" });
  });

  it("two parallel calls accumulate separately", async () => {
    const { openai } = client(twoCalls);
    const completion = await openai.chat.completions
      .stream({ model: "local-model", messages: question, tools: [strictTool] })
      .finalChatCompletion();
    const calls = completion.choices[0]?.message.tool_calls ?? [];
    expect(calls.map((c) => (c.type === "function" ? [c.id, c.function.parsed_arguments] : []))).toEqual([
      ["call_1", { city: "Tokyo" }],
      ["call_2", { city: "Paris" }],
    ]);
  });

  it("reasoning arrives as delta.reasoning_content, the answer as content", async () => {
    const { openai } = client(thinkingAnswer);
    const stream = openai.chat.completions.stream({ model: "local-model", messages: question });
    let reasoningText = "";
    stream.on("chunk", (chunk) => {
      const delta = chunk.choices[0]?.delta as { reasoning_content?: string } | undefined;
      reasoningText += delta?.reasoning_content ?? "";
    });
    const completion = await stream.finalChatCompletion();
    expect(reasoningText).toBe("It is sunny there.");
    expect(completion.choices[0]?.message.content).toBe("Sunny in Tokyo.");
    expect(completion.choices[0]?.finish_reason).toBe("stop");
  });
});

describe("chat.completions.create() / parse() with tools (stream off)", () => {
  it("the whole answer has the call, content null and no reasoning_content", async () => {
    const { openai } = client(weatherCall);
    const completion = await openai.chat.completions.create({
      model: "local-model",
      messages: question,
      tools: [strictTool],
      tool_choice: "required",
    });
    const message = completion.choices[0]?.message;
    expect(message?.content).toBeNull();
    expect(message).not.toHaveProperty("reasoning_content");
    const call = message?.tool_calls?.[0];
    expect(call?.type === "function" ? JSON.parse(call.function.arguments) : undefined).toEqual({ city: "Tokyo" });
    expect(completion.choices[0]?.finish_reason).toBe("tool_calls");
  });

  it("parse() gives parsed_arguments too", async () => {
    const { openai } = client(weatherCall);
    const completion = await openai.chat.completions.parse({
      model: "local-model",
      messages: question,
      tools: [strictTool],
    });
    expect(completion.choices[0]?.message.tool_calls?.[0]).toMatchObject({
      function: { parsed_arguments: { city: "Tokyo" } },
    });
  });

  it("the whole answer with reasoning has reasoning_content", async () => {
    const { openai } = client(thinkingAnswer);
    const completion = await openai.chat.completions.create({ model: "local-model", messages: question });
    expect(completion.choices[0]?.message).toMatchObject({
      content: "Sunny in Tokyo.",
      reasoning_content: "It is sunny there.",
    });
  });
});

it("an agent loop's second turn sends the call and its result back", async () => {
  const { openai, sidecar } = client((request) =>
    request.input.case === "chat" && request.input.value.messages.length > 1 ? thinkingAnswer : weatherCall,
  );
  const first = await openai.chat.completions
    .stream({ model: "local-model", messages: question, tools: [strictTool] })
    .finalChatCompletion();
  const message = first.choices[0]?.message;
  const call = message?.tool_calls?.[0];
  if (message === undefined || call?.type !== "function") throw new Error("no call");
  const history: OpenAI.Chat.ChatCompletionMessageParam[] = [
    ...question,
    {
      role: "assistant",
      content: message.content,
      tool_calls: [
        { id: call.id, type: "function", function: { name: call.function.name, arguments: call.function.arguments } },
      ],
    },
    { role: "tool", tool_call_id: call.id, content: '{"sky":"sunny"}' },
  ];
  const second = await openai.chat.completions.create({ model: "local-model", messages: history, tools: [strictTool] });
  expect(second.choices[0]?.message.content).toBe("Sunny in Tokyo.");
  const sent = sidecar.lastCall?.request.input;
  expect(
    sent?.case === "chat" ? sent.value.messages.map((m) => [m.role, m.toolCallId, m.toolCalls.map((c) => c.id)]) : [],
  ).toEqual([
    [Role.USER, "", []],
    [Role.ASSISTANT, "", ["call_weather"]],
    [Role.TOOL, "call_weather", []],
  ]);
});
