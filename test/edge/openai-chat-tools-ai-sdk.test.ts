// The Vercel AI SDK (`ai` 6 with @ai-sdk/openai-compatible 2) against the edge in process, the
// fake sidecar scripted: a tool call streamed in the contract's fragments, two parallel calls, and
// reasoning then text. The provider parses our chunks with its own zod schemas, so any shape it
// does not accept shows up as an `error` part (streamText) or a throw (generateText): none may.
// It reads `delta.reasoning_content` (and `reasoning`) as reasoning, and `tool_calls` deltas
// as tool-input-start / tool-input-delta / tool-call, parsing the arguments with the tool's
// inputSchema.
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateText, stepCountIs, streamText, tool, type ToolSet } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ToolChoice } from "../../proto/gen/inference/v1/inference_pb.js";
import { inProcessFetch, testApp } from "../support/app.js";
import { finish, reasoning, start, token, type Step } from "../support/fake-sidecar.js";
import { twoCallsScript, weatherCallScript } from "../support/tool-scripts.js";

const weatherCall = weatherCallScript;
const twoCalls = twoCallsScript;
const thinkingAnswer: Step[] = [
  start("tiny-llama", 9),
  token("", { piece: "<think>" }),
  ...reasoning("Checking", " the forecast."),
  token("It", { piece: "</think>It" }),
  token(" is sunny."),
  finish("stop", { promptTokens: 9, completionTokens: 5 }),
];

function setup(script: Step[], options: { includeUsage?: boolean } = {}) {
  const { app, sidecar } = testApp(script);
  const provider = createOpenAICompatible({
    name: "local",
    baseURL: "http://edge.test/v1",
    apiKey: "not-needed",
    fetch: inProcessFetch(app),
    ...options,
  });
  return { model: provider.chatModel("local-model"), sidecar };
}

const inputSchema = z.object({ city: z.string() });
/** No execute: the SDK returns the call to the caller. */
const callOnly = { get_weather: tool({ description: "Get weather for a city", inputSchema }) } satisfies ToolSet;

/** Every part of a streamText run, the error parts apart. */
async function parts(result: { fullStream: AsyncIterable<{ type: string }> }) {
  const all: ({ type: string } & Record<string, unknown>)[] = [];
  for await (const part of result.fullStream) all.push(part as { type: string } & Record<string, unknown>);
  return { all, errors: all.filter((p) => p.type === "error"), types: all.map((p) => p.type) };
}

describe("a tool call", () => {
  it(
    "streamText: tool-input parts, then the tool-call with parsed input; finish reason tool-calls; no error " + "parts",
    async () => {
      const { model, sidecar } = setup(weatherCall);
      const result = streamText({ model, tools: callOnly, prompt: "Weather in Tokyo?" });
      const { all, errors, types } = await parts(result);
      expect(errors).toEqual([]);
      expect(all.filter((p) => p.type === "tool-input-delta").map((p) => p["delta"])).toEqual([
        '{"',
        "city",
        '":"Tokyo"}',
      ]);
      expect(types.indexOf("tool-input-start")).toBeLessThan(types.indexOf("tool-call"));
      expect(all.find((p) => p.type === "tool-call")).toMatchObject({
        toolCallId: "call_weather",
        toolName: "get_weather",
        input: { city: "Tokyo" },
      });
      expect(await result.toolCalls).toMatchObject([
        { toolCallId: "call_weather", toolName: "get_weather", input: { city: "Tokyo" } },
      ]);
      expect(await result.finishReason).toBe("tool-calls");
      expect(await result.text).toBe("");
      // what the provider sent: the tool with its JSON schema, as the proto's Chat
      const chat = sidecar.lastCall?.request.input;
      if (chat?.case !== "chat") throw new Error("no chat request");
      expect(chat.value.tools.map((t) => t.name)).toEqual(["get_weather"]);
      expect(JSON.parse(chat.value.tools[0]?.parameters ?? "")).toMatchObject({
        type: "object",
        properties: { city: { type: "string" } },
        required: ["city"],
      });
    },
  );

  it("generateText: the call with parsed input", async () => {
    const { model } = setup(weatherCall);
    const result = await generateText({ model, tools: callOnly, prompt: "Weather in Tokyo?" });
    expect(result.toolCalls).toMatchObject([
      { toolCallId: "call_weather", toolName: "get_weather", input: { city: "Tokyo" } },
    ]);
    expect(result.finishReason).toBe("tool-calls");
    expect(result.text).toBe("");
    expect(result.usage).toMatchObject({ inputTokens: 40, outputTokens: 4 });
  });

  it("with execute and a single step: the SDK runs the tool on the parsed input", async () => {
    const { model } = setup(weatherCall);
    const calls: unknown[] = [];
    const tools = {
      get_weather: tool({
        inputSchema,
        execute: async (input) => {
          calls.push(input);
          return { sky: "sunny" };
        },
      }),
    };
    const result = streamText({ model, tools, prompt: "Weather in Tokyo?", stopWhen: stepCountIs(1) });
    const { errors, all } = await parts(result);
    expect(errors).toEqual([]);
    expect(calls).toEqual([{ city: "Tokyo" }]);
    expect(all.find((p) => p.type === "tool-result")).toMatchObject({
      toolCallId: "call_weather",
      output: { sky: "sunny" },
    });
    expect(await result.steps).toHaveLength(1);
  });

  it("two parallel calls, each parsed", async () => {
    const { model } = setup(twoCalls);
    const result = streamText({ model, tools: callOnly, prompt: "Weather in Tokyo and Paris?" });
    const { errors } = await parts(result);
    expect(errors).toEqual([]);
    expect((await result.toolCalls).map((c) => [c.toolCallId, c.input])).toEqual([
      ["call_1", { city: "Tokyo" }],
      ["call_2", { city: "Paris" }],
    ]);
  });

  it("toolChoice reaches the sidecar: a named tool, required, none", async () => {
    // (with "none" the fake answers in text: the SDK itself rejects a call made against "none")
    const cases = [
      [{ type: "tool", toolName: "get_weather" }, ToolChoice.FUNCTION, "get_weather", weatherCall],
      ["required", ToolChoice.REQUIRED, "", weatherCall],
      ["none", ToolChoice.NONE, "", thinkingAnswer],
    ] as const;
    for (const [toolChoice, expected, name, script] of cases) {
      const { model, sidecar } = setup([...script]);
      await generateText({ model, tools: callOnly, toolChoice, prompt: "Weather in Tokyo?" });
      const chat = sidecar.lastCall?.request.input;
      expect(chat?.case === "chat" ? [chat.value.toolChoice, chat.value.toolName] : []).toEqual([expected, name]);
    }
  });

  it("with include_usage: the usage chunk (choices: []) parses", async () => {
    const { model } = setup(weatherCall, { includeUsage: true });
    const result = streamText({ model, tools: callOnly, prompt: "Weather in Tokyo?" });
    const { errors } = await parts(result);
    expect(errors).toEqual([]);
    expect(await result.usage).toMatchObject({ inputTokens: 40, outputTokens: 4 });
  });
});

describe("reasoning, then text", () => {
  it("streamText: reasoning parts from reasoning_content, then text parts; no error parts", async () => {
    const { model } = setup(thinkingAnswer);
    const result = streamText({ model, prompt: "Weather in Tokyo?" });
    const { all, errors, types } = await parts(result);
    expect(errors).toEqual([]);
    const reasoningText = all
      .filter((p) => p.type === "reasoning-delta")
      .map((p) => p["text"])
      .join("");
    const text = all
      .filter((p) => p.type === "text-delta")
      .map((p) => p["text"])
      .join("");
    expect(reasoningText).toBe("Checking the forecast.");
    expect(text).toBe("It is sunny.");
    expect(types.lastIndexOf("reasoning-delta")).toBeLessThan(types.indexOf("text-delta"));
    expect(await result.reasoningText).toBe("Checking the forecast.");
    expect(await result.finishReason).toBe("stop");
  });

  it("generateText: reasoningText from message.reasoning_content, text from content", async () => {
    const { model } = setup(thinkingAnswer);
    const result = await generateText({ model, prompt: "Weather in Tokyo?" });
    expect(result.reasoningText).toBe("Checking the forecast.");
    expect(result.text).toBe("It is sunny.");
    expect(result.finishReason).toBe("stop");
  });
});
