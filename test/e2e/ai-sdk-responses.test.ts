// The AI SDK's Responses provider (@ai-sdk/openai with `ai`) against stored responses on the Node
// edge and a real sidecar running the `tools` scripted model: a generateText tool loop, then a
// second turn on the first one's messages, for which the SDK sends the earlier reasoning and message
// as `item_reference` items (it does so whenever responses are stored); the edge resolves them
// against the stored items, and the second response's input items are those stored items. Then
// two turns on an OpenAI conversation (the provider's `conversation` option).
import { createOpenAI } from "@ai-sdk/openai";
import { generateText, stepCountIs, tool } from "ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { modelPath } from "../../gguf/models.js";
import { startStack, type Stack } from "../support/edge.js";
import { TOOL_RESULT_REASONING, TOOLS_ANSWER } from "../support/scripted.js";

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ model: modelPath("tools"), contextSize: 2048 });
}, 90_000);
afterAll(async () => {
  await stack?.stop();
});

type Item = Record<string, unknown>;

function setup() {
  const sent: { input: Item[] }[] = [];
  const recording: typeof fetch = async (url, init) => {
    if (typeof init?.body === "string") sent.push(JSON.parse(init.body) as { input: Item[] });
    return fetch(url, init);
  };
  const provider = createOpenAI({ baseURL: stack.baseURL, apiKey: "not-needed", fetch: recording });
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
  return { model: provider.responses("local-model"), tools, calls, sent };
}

async function inputItems(responseId: string): Promise<Item[]> {
  const page = (await (await fetch(`${stack.baseURL}/responses/${responseId}/input_items?order=asc`)).json()) as {
    data: Item[];
  };
  return page.data;
}

async function storedOutput(responseId: string): Promise<Item[]> {
  return ((await (await fetch(`${stack.baseURL}/responses/${responseId}`)).json()) as { output: Item[] }).output;
}

describe("the AI SDK's Responses provider on stored responses", () => {
  it("a tool loop, then a turn whose earlier reasoning and answer go as item_reference items", async () => {
    const { model, tools, calls, sent } = setup();
    const first = await generateText({ model, tools, prompt: "Weather in Tokyo?", stopWhen: stepCountIs(3) });
    expect(calls).toEqual([{ city: "Tokyo" }]);
    expect(first.steps.map((step) => step.finishReason)).toEqual(["tool-calls", "stop"]);
    expect(first.text).toBe(TOOLS_ANSWER);
    // The SDK shows reasoning summaries only; this server's reasoning is the item's content.
    const answered = await storedOutput(String(first.providerMetadata?.["openai"]?.["responseId"]));
    expect(answered.map((item) => item["type"])).toEqual(["reasoning", "message"]);
    expect(answered[0]).toMatchObject({
      summary: [],
      content: [{ type: "reasoning_text", text: TOOL_RESULT_REASONING }],
    });

    const second = await generateText({
      model,
      tools,
      messages: [
        { role: "user", content: "Weather in Tokyo?" },
        ...first.response.messages,
        { role: "user", content: "And tomorrow?" },
      ],
    });
    expect(second.text).toBe(TOOLS_ANSWER);
    // What the SDK sent: the stored reasoning and message by reference, everything else whole.
    const input = sent.at(-1)?.input ?? [];
    expect(input.map((item) => item["type"] ?? item["role"])).toEqual([
      "user",
      "function_call",
      "function_call_output",
      "item_reference",
      "item_reference",
      "user",
    ]);
    expect(input.slice(3, 5)).toEqual(answered.map((item) => ({ type: "item_reference", id: item["id"] })));
    // What the edge made of it: the references are the stored items themselves.
    const resolved = await inputItems(String(second.providerMetadata?.["openai"]?.["responseId"]));
    expect(resolved.slice(3, 5)).toEqual(answered);
    expect(resolved[5]).toEqual({
      id: expect.stringMatching(/^msg_/),
      type: "message",
      role: "user",
      content: [{ type: "input_text", text: "And tomorrow?" }],
    });
  });

  it(
    "two turns on an OpenAI conversation (providerOptions.openai.conversation): each sends only its own " + "prompt",
    async () => {
      const { model, sent } = setup();
      const created = (await (await fetch(`${stack.baseURL}/conversations`, { method: "POST" })).json()) as {
        id: string;
      };
      const providerOptions = { openai: { conversation: created.id } };
      const first = await generateText({ model, prompt: "Weather in Tokyo?", providerOptions });
      const second = await generateText({ model, prompt: "And tomorrow?", providerOptions });
      expect([first.text, second.text]).toEqual([TOOLS_ANSWER, TOOLS_ANSWER]);
      expect(sent.map((body) => body.input)).toEqual([
        [{ role: "user", content: [{ type: "input_text", text: "Weather in Tokyo?" }] }],
        [{ role: "user", content: [{ type: "input_text", text: "And tomorrow?" }] }],
      ]);
      // The second prompt is the first turn then its own, as previous_response_id makes it, and finds
      // the first turn in the sidecar's cache.
      const chained = await fetch(`${stack.baseURL}/responses`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          model: "m",
          input: "And tomorrow?",
          previous_response_id: first.providerMetadata?.["openai"]?.["responseId"],
          store: false,
        }),
      });
      expect(second.usage.inputTokens).toBe(
        ((await chained.json()) as { usage: { input_tokens: number } }).usage.input_tokens,
      );
      expect(second.usage.inputTokenDetails.cacheReadTokens).toBeGreaterThan(0);
      const items = (await (await fetch(`${stack.baseURL}/conversations/${created.id}/items?order=asc`)).json()) as {
        data: Item[];
      };
      const firstOutput = await storedOutput(String(first.providerMetadata?.["openai"]?.["responseId"]));
      const secondOutput = await storedOutput(String(second.providerMetadata?.["openai"]?.["responseId"]));
      const asked = (text: string) => ({
        id: expect.stringMatching(/^msg_/),
        type: "message",
        status: "completed",
        role: "user",
        content: [{ type: "input_text", text }],
      });
      expect(items.data).toEqual([asked("Weather in Tokyo?"), ...firstOutput, asked("And tomorrow?"), ...secondOutput]);
    },
  );
});
