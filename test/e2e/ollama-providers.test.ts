// The Ollama providers of the two agent frameworks against Ollama's API (/api/chat) with API keys on
// (a bearer header), on Node and under workerd (`wrangler dev`), in front of a real sidecar running
// the `thinking` twin: the AI SDK's (`ollama-ai-provider-v2` with `ai`) generateText and streamText
// through a whole tool loop (the model calls get_weather, the SDK runs it, the model answers with its
// reasoning), and LangChain's ChatOllama (invoke, stream, bound tools, a tool result answered).
import { ChatOllama } from "@langchain/ollama";
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { generateText, stepCountIs, streamText, tool } from "ai";
import { createOllama } from "ollama-ai-provider-v2";
import { afterAll, beforeAll, expect, it } from "vitest";
import { z } from "zod";
import { modelPath } from "../../gguf/models.js";
import type { RunningSidecar } from "../../sidecar/start-sidecar.js";
import { CHAT_REPLY, THINK_REASONING, TOOL_RESULT_REASONING } from "../support/scripted.js";
import { startTestSidecar } from "../support/sidecar.js";
import { describeOnRuntimes } from "../support/runtimes.js";

const KEY = "ollama-provider-key";
const AUTH = { Authorization: `Bearer ${KEY}` };

let sidecar: RunningSidecar;
beforeAll(async () => {
  sidecar = await startTestSidecar({ model: modelPath("thinking"), sequences: 2, contextSize: 2048 });
}, 90_000);
afterAll(async () => {
  await sidecar?.stop();
});

function weatherTools() {
  const calls: unknown[] = [];
  const tools = {
    get_weather: tool({
      description: "Get weather for a city",
      inputSchema: z.object({ city: z.string() }),
      execute: async (input) => {
        calls.push(input);
        return { temperature: 22, sky: "sunny" };
      },
    }),
  };
  return { tools, calls };
}

const WEATHER = {
  type: "function" as const,
  function: {
    name: "get_weather",
    description: "Get weather for a city",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  },
};

describeOnRuntimes(
  "Ollama's providers",
  () => [sidecar.url],
  (edge) => {
    const aiModel = () => createOllama({ baseURL: `${edge().url}/api`, headers: AUTH })("thinking");
    const think = { ollama: { think: true } };

    it("the AI SDK: generateText runs the tool loop to a reasoned answer", async () => {
      const { tools, calls } = weatherTools();
      const result = await generateText({
        model: aiModel(),
        tools,
        prompt: "Weather in Tokyo?",
        stopWhen: stepCountIs(3),
        providerOptions: think,
      });
      expect(calls).toEqual([{ city: "Tokyo" }]);
      expect(result.steps).toHaveLength(2);
      expect(result.steps[0]?.toolCalls).toMatchObject([{ toolName: "get_weather", input: { city: "Tokyo" } }]);
      expect(result.text).toBe(CHAT_REPLY);
      expect(result.reasoningText).toBe(TOOL_RESULT_REASONING);
      expect(result.finishReason).toBe("stop");
      expect(result.totalUsage.inputTokens).toBeGreaterThan(0);
    });

    it("the AI SDK: streamText, the same loop streamed, reasoning and text apart, no error parts", async () => {
      const { tools, calls } = weatherTools();
      const result = streamText({
        model: aiModel(),
        tools,
        prompt: "Weather in Tokyo?",
        stopWhen: stepCountIs(3),
        providerOptions: think,
      });
      let [text, reasoning] = ["", ""];
      const errors: unknown[] = [];
      for await (const part of result.fullStream) {
        if (part.type === "text-delta") text += part.text;
        if (part.type === "reasoning-delta") reasoning += part.text;
        if (part.type === "error") errors.push(part.error);
      }
      expect(errors).toEqual([]);
      expect(calls).toEqual([{ city: "Tokyo" }]);
      expect([text, reasoning]).toEqual([CHAT_REPLY, TOOL_RESULT_REASONING]);
    });

    it("LangChain's ChatOllama: invoke and stream, the reasoning in reasoning_content", async () => {
      const chat = new ChatOllama({ baseUrl: edge().url, model: "thinking", headers: AUTH });
      const reply = await chat.invoke([new HumanMessage("Weather?")]);
      expect(reply.content).toBe(CHAT_REPLY);
      expect(reply.additional_kwargs["reasoning_content"]).toBe(THINK_REASONING);
      expect(reply.response_metadata).toMatchObject({ done: true, done_reason: "stop" });
      let [text, reasoning] = ["", ""];
      for await (const chunk of await chat.stream([new HumanMessage("Weather?")])) {
        text += typeof chunk.content === "string" ? chunk.content : "";
        reasoning += String(chunk.additional_kwargs["reasoning_content"] ?? "");
      }
      expect([text, reasoning]).toEqual([CHAT_REPLY, THINK_REASONING]);
    });

    it("LangChain's ChatOllama: bound tools, the call, then the answer to its result", async () => {
      const chat = new ChatOllama({ baseUrl: edge().url, model: "thinking", headers: AUTH }).bindTools([WEATHER]);
      const question = new HumanMessage("Weather in Tokyo?");
      const called = await chat.invoke([question]);
      expect(called.tool_calls?.map((c) => [c.name, c.args])).toEqual([["get_weather", { city: "Tokyo" }]]);
      const call = called.tool_calls?.[0];
      const result = new ToolMessage({ content: '{"temperature": 22, "sky": "sunny"}', tool_call_id: call?.id ?? "" });
      const asked = new AIMessage({ content: "", tool_calls: called.tool_calls ?? [] });
      const answer = await chat.invoke([question, asked, result]);
      expect(answer.content).toBe(CHAT_REPLY);
      expect(answer.additional_kwargs["reasoning_content"]).toBe(TOOL_RESULT_REASONING);
    });
  },
  { apiKeys: KEY },
);
