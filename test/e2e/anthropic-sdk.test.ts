// The official Anthropic client (@anthropic-ai/sdk) against the edge on Node and a real
// sidecar running the scripted model: exact text, exact stop reasons, usage equal to the
// sidecar's own counts — through real llama.cpp inference.
//
// Messages streams named events (an `event:` line per `data:` line) and reports usage on
// message_delta (docs/contract.md, "Anthropic Messages").
import Anthropic, { type APIError } from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkAnthropicStream } from "../support/contract.js";
import { startStack, type Stack } from "../support/edge.js";
import { readEvents } from "../support/sse.js";
import { CHAT_REPLY, CHAT_REPLY_TOKENS, chatPromptTokens } from "../support/scripted.js";

const hello = [{ role: "user" as const, content: "Hello!" }];

let stack: Stack;
let client: Anthropic;
beforeAll(async () => {
  stack = await startStack();
  client = new Anthropic({ baseURL: stack.edge.url, apiKey: "sk-ant-not-checked", maxRetries: 0 });
});
afterAll(async () => {
  await stack?.stop();
});

/** Anthropic splits the prompt into uncached input and cache reads; together they are the prompt. */
function promptOf(usage: Anthropic.Usage): number {
  return usage.input_tokens + (usage.cache_read_input_tokens ?? 0) + (usage.cache_creation_input_tokens ?? 0);
}

describe("messages.create", () => {
  it("answers with the scripted reply, end_turn, and the sidecar's counts", async () => {
    const message = await client.messages.create({ model: "local-model", max_tokens: 256, messages: hello });
    expect(message).toMatchObject({
      type: "message",
      role: "assistant",
      model: "scripted",
      content: [{ type: "text", text: CHAT_REPLY }],
      stop_reason: "end_turn",
      stop_sequence: null,
    });
    expect(message.id).toMatch(/^msg_/);
    expect(message._request_id).toMatch(/^req_/);
    expect(message.usage.output_tokens).toBe(CHAT_REPLY_TOKENS);
    expect(promptOf(message.usage)).toBe(await chatPromptTokens(stack.sidecar.url, "Hello!"));
  });

  it("takes a system message inside messages, as Claude Code sends its environment", async () => {
    const message = await client.messages.create({
      model: "m",
      max_tokens: 256,
      system: [{ type: "text", text: "You are a coding agent." }],
      messages: [
        { role: "user", content: "Hello!" },
        {
          role: "system",
          content: [{ type: "text", text: "<env>Platform: linux</env>", cache_control: { type: "ephemeral" } }],
        } as never,
        { role: "user", content: "What is the weather?" },
      ],
    });
    expect(message.content).toEqual([{ type: "text", text: CHAT_REPLY }]);
  });

  it("stops at max_tokens and at a stop sequence, never leaking it", async () => {
    const short = await client.messages.create({
      model: "m",
      max_tokens: 3,
      messages: [{ role: "user", content: "Hi" }],
    });
    expect(short).toMatchObject({
      content: [{ type: "text", text: "It is sunny" }],
      stop_reason: "max_tokens",
      stop_sequence: null,
    });
    expect(short.usage.output_tokens).toBe(3);
    const stopped = await client.messages.create({
      model: "m",
      max_tokens: 256,
      messages: [{ role: "user", content: "Hi" }],
      stop_sequences: ["Tokyo"],
    });
    expect(stopped).toMatchObject({
      content: [{ type: "text", text: "It is sunny in " }],
      stop_reason: "stop_sequence",
      stop_sequence: "Tokyo",
    });
  });

  it("counts a system prompt (string or blocks) as the sidecar renders it", async () => {
    const message = await client.messages.create({
      model: "m",
      max_tokens: 256,
      system: [{ type: "text", text: "You are a weather bot." }],
      messages: hello,
    });
    expect(message.content).toEqual([{ type: "text", text: CHAT_REPLY }]);
    const expected = await chatPromptTokens(stack.sidecar.url, "Hello!", "You are a weather bot.");
    expect(promptOf(message.usage)).toBe(expected);
    const counted = await client.messages.countTokens({
      model: "m",
      system: "You are a weather bot.",
      messages: hello,
    });
    expect(counted.input_tokens).toBe(expected);
  });
});

describe("messages.stream()", () => {
  it("streams whole characters and accumulates the final message", async () => {
    const stream = client.messages.stream({ model: "local-model", max_tokens: 256, messages: hello });
    const texts: string[] = [];
    stream.on("text", (text) => texts.push(text));
    const message = await stream.finalMessage();
    expect(texts.join("")).toBe(CHAT_REPLY);
    for (const text of texts) expect(text).not.toContain("\uFFFD");
    expect(message.content).toEqual([{ type: "text", text: CHAT_REPLY }]);
    expect(message.stop_reason).toBe("end_turn");
    expect(message.usage.output_tokens).toBe(CHAT_REPLY_TOKENS);
    expect(promptOf(message.usage)).toBe(await chatPromptTokens(stack.sidecar.url, "Hello!"));
  });

  it("ends with max_tokens and stop_sequence as streamed", async () => {
    const short = await client.messages.stream({ model: "m", max_tokens: 3, messages: hello }).finalMessage();
    expect(short).toMatchObject({ content: [{ type: "text", text: "It is sunny" }], stop_reason: "max_tokens" });
    expect(short.usage.output_tokens).toBe(3);
    const stopped = await client.messages
      .stream({ model: "m", max_tokens: 256, messages: hello, stop_sequences: ["Tokyo"] })
      .finalMessage();
    expect(stopped).toMatchObject({
      content: [{ type: "text", text: "It is sunny in " }],
      stop_reason: "stop_sequence",
      stop_sequence: "Tokyo",
    });
  });

  it("raises the SDK's 400 for a prompt the sidecar refuses, before any event", async () => {
    const huge = "word ".repeat(400);
    const error = await client.messages
      .stream({ model: "m", max_tokens: 16, messages: [{ role: "user", content: huge }] })
      .finalMessage()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    expect((error as APIError).type).toBe("invalid_request_error");
    expect((error as APIError).message).toMatch(/prompt is too long: \d+ tokens > 256 maximum/);
    const missing = await client.messages
      .create({ model: "m", messages: hello } as unknown as Anthropic.MessageCreateParamsNonStreaming)
      .catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(Anthropic.BadRequestError);
    expect((missing as APIError).message).toMatch(/max_tokens/);
  });
});

describe("raw frames", () => {
  it("follow Anthropic's event order, event: lines matching the data's type", async () => {
    const response = await fetch(`${stack.edge.url}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": "x", "anthropic-version": "2023-06-01" },
      body: JSON.stringify({ model: "m", max_tokens: 256, messages: hello, stream: true }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(response.headers.get("request-id")).toMatch(/^req_/);
    const summary = checkAnthropicStream(await readEvents(response.body));
    expect(summary).toMatchObject({ text: CHAT_REPLY, stopReason: "end_turn", done: true, error: undefined });
    expect(summary.blocks).toEqual([{ type: "text", text: CHAT_REPLY }]);
    expect(summary.usage).toMatchObject({ output_tokens: CHAT_REPLY_TOKENS });
  });
});
