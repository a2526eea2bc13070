// The official `openai` client's Responses API (responses.create, streaming and not, and
// responses.stream()) against the edge on Node and a real sidecar running the scripted
// model; and one conversation's usage through all three chat-like protocols, which must
// all be the sidecar's own counts; responses.compact, and its compaction item sent back.
//
// Responses streams typed events, and usage comes on the terminal event inside the whole
// Response (docs/contract.md, "OpenAI Responses").
import Anthropic from "@anthropic-ai/sdk";
import OpenAI, { type APIError } from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkResponsesStream } from "../support/contract.js";
import { startStack, type Stack } from "../support/edge.js";
import { readEvents } from "../support/sse.js";
import { CHAT_REPLY, CHAT_REPLY_TOKENS, chatPromptTokens } from "../support/scripted.js";
import { clientsFor } from "../support/sidecar.js";
import { Role } from "../../proto/gen/inference/v1/inference_pb.js";
import { sealCompaction, SUMMARY_OPENING } from "../../edge/protocols/openai-responses/compaction/compaction-prompt.js";

let stack: Stack;
let client: OpenAI;
beforeAll(async () => {
  stack = await startStack();
  client = new OpenAI({ baseURL: stack.baseURL, apiKey: "not-needed", maxRetries: 0 });
});
afterAll(async () => {
  await stack?.stop();
});

describe("responses.create", () => {
  it("answers with the scripted reply; output_text; usage equal to the sidecar's counts", async () => {
    const response = await client.responses.create({ model: "local-model", input: "Hello!" });
    expect(response).toMatchObject({
      object: "response",
      status: "completed",
      model: "scripted",
      error: null,
      incomplete_details: null,
    });
    expect(response.id).toMatch(/^resp_/);
    expect(response.output_text).toBe(CHAT_REPLY);
    expect(response.output).toHaveLength(1);
    expect(response.output[0]).toMatchObject({
      type: "message",
      role: "assistant",
      status: "completed",
      content: [{ type: "output_text", text: CHAT_REPLY }],
    });
    expect(response.output[0]?.id).toMatch(/^msg_/);
    const input = await chatPromptTokens(stack.sidecar.url, "Hello!");
    expect(response.usage).toMatchObject({
      input_tokens: input,
      output_tokens: CHAT_REPLY_TOKENS,
      total_tokens: input + CHAT_REPLY_TOKENS,
    });
  });

  it("streams events whose deltas add up to the same text", async () => {
    const stream = await client.responses.create({
      model: "m",
      input: [{ role: "user", content: "Hello!" }],
      stream: true,
    });
    let text = "";
    let sequence = -1;
    let terminal: OpenAI.Responses.ResponseStreamEvent | undefined;
    for await (const event of stream) {
      expect(event.sequence_number).toBe(sequence + 1);
      sequence = event.sequence_number;
      if (event.type === "response.output_text.delta") {
        expect(event.delta).not.toContain("\uFFFD");
        text += event.delta;
      }
      terminal = event;
    }
    expect(text).toBe(CHAT_REPLY);
    expect(terminal?.type).toBe("response.completed");
    if (terminal?.type === "response.completed") expect(terminal.response.usage?.output_tokens).toBe(CHAT_REPLY_TOKENS);
  });

  it("max_output_tokens cuts the reply: status incomplete", async () => {
    const response = await client.responses.create({ model: "m", input: "Hi", max_output_tokens: 3 });
    expect(response).toMatchObject({
      status: "incomplete",
      incomplete_details: { reason: "max_output_tokens" },
      output_text: "It is sunny",
    });
    expect(response.usage?.output_tokens).toBe(3);
  });

  it("instructions are the system prompt, counted as the sidecar renders it", async () => {
    const response = await client.responses.create({
      model: "m",
      instructions: "You are a weather bot.",
      input: "Hello!",
    });
    expect(response.output_text).toBe(CHAT_REPLY);
    expect(response.instructions).toBe("You are a weather bot.");
    expect(response.usage?.input_tokens).toBe(
      await chatPromptTokens(stack.sidecar.url, "Hello!", "You are a weather bot."),
    );
  });

  it("an unknown previous_response_id is OpenAI's 400 previous_response_not_found, streaming too", async () => {
    const error = await client.responses
      .create({ model: "m", input: "Hi", previous_response_id: "resp_123" })
      .catch((e: unknown) => e);
    // A 400, as OpenAI answers it: the SDKs raise BadRequestError, never NotFoundError.
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as APIError).status).toBe(400);
    expect((error as APIError).error).toEqual({
      message: "Previous response with id 'resp_123' not found.",
      type: "invalid_request_error",
      param: "previous_response_id",
      code: "previous_response_not_found",
    });
    const streamed = await client.responses
      .stream({ model: "m", input: "Hi", previous_response_id: "resp_123" })
      .finalResponse()
      .catch((e: unknown) => e);
    expect(streamed).toBeInstanceOf(OpenAI.BadRequestError);
    expect((streamed as APIError).error).toEqual({
      message: "Previous response with id 'resp_123' not found.",
      type: "invalid_request_error",
      param: "previous_response_id",
      code: "previous_response_not_found",
    });
  });
});

describe("responses.stream()", () => {
  it("accumulates the final response with snapshots", async () => {
    const stream = client.responses.stream({ model: "m", input: "Hello!" });
    const snapshots: string[] = [];
    stream.on("response.output_text.delta", (event) => snapshots.push(event.snapshot));
    const final = await stream.finalResponse();
    expect(snapshots.at(-1)).toBe(CHAT_REPLY);
    expect(final.output_text).toBe(CHAT_REPLY);
    expect(final.status).toBe("completed");
    const input = await chatPromptTokens(stack.sidecar.url, "Hello!");
    expect(final.usage).toMatchObject({
      input_tokens: input,
      output_tokens: CHAT_REPLY_TOKENS,
      total_tokens: input + CHAT_REPLY_TOKENS,
    });
  });

  it("an incomplete stream keeps the text it had", async () => {
    const final = await client.responses.stream({ model: "m", input: "Hi", max_output_tokens: 3 }).finalResponse();
    expect(final).toMatchObject({ status: "incomplete", output_text: "It is sunny" });
  });

  it("raises the SDK's 400 for a prompt the sidecar refuses, before any event", async () => {
    const huge = "word ".repeat(400);
    const error = await client.responses
      .stream({ model: "m", input: huge })
      .finalResponse()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as APIError).message).toMatch(/maximum context length is 256 tokens/);
  });
});

describe("raw frames", () => {
  it("follow the Responses order rules", async () => {
    const response = await fetch(`${stack.baseURL}/responses`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ input: "Hello!", stream: true }),
    });
    expect(response.status).toBe(200);
    const summary = checkResponsesStream(await readEvents(response.body));
    expect(summary).toMatchObject({ text: CHAT_REPLY, terminal: "response.completed", done: true });
  });
});

describe("one conversation, three protocols, the same sidecar counts", () => {
  it(
    "chat include_usage, Messages usage and Responses usage all equal the sidecar's Tokenize and token " + "count",
    async () => {
      const system = "Answer about the weather.";
      const user = "What is the weather in Tokyo?";
      const expected = await chatPromptTokens(stack.sidecar.url, user, system);

      const chat = await client.chat.completions.create({
        model: "m",
        messages: [
          { role: "system", content: system },
          { role: "user", content: user },
        ],
        stream: true,
        stream_options: { include_usage: true },
      });
      let chatUsage: OpenAI.CompletionUsage | undefined;
      for await (const chunk of chat) if (chunk.usage) chatUsage = chunk.usage;

      const anthropic = new Anthropic({ baseURL: stack.edge.url, apiKey: "x", maxRetries: 0 });
      const message = await anthropic.messages
        .stream({ model: "m", max_tokens: 256, system, messages: [{ role: "user", content: user }] })
        .finalMessage();

      const response = await client.responses.stream({ model: "m", instructions: system, input: user }).finalResponse();

      expect(chatUsage).toMatchObject({ prompt_tokens: expected, completion_tokens: CHAT_REPLY_TOKENS });
      expect(message.usage.input_tokens + (message.usage.cache_read_input_tokens ?? 0)).toBe(expected);
      expect(message.usage.output_tokens).toBe(CHAT_REPLY_TOKENS);
      expect(response.usage).toMatchObject({ input_tokens: expected, output_tokens: CHAT_REPLY_TOKENS });
    },
  );
});

describe('responses.compact (docs/contract.md, "Compaction")', () => {
  // The compaction prompt does not fit the 256-token context of the other tests' sidecar.
  let wide: Stack;
  let client: OpenAI;
  beforeAll(async () => {
    wide = await startStack({ contextSize: 2048 });
    client = new OpenAI({ baseURL: wide.baseURL, apiKey: "not-needed", maxRetries: 0 });
  });
  afterAll(async () => {
    await wide?.stop();
  });

  it(
    "compacts a conversation with the model's summary; the item sent back stands for it in the next " + "turn",
    async () => {
      const input: OpenAI.Responses.ResponseInputItem[] = [
        { role: "user", content: "We agreed to launch on Tuesday." },
        { role: "assistant", content: "Understood: Tuesday." },
      ];
      const compacted = await client.responses.compact({ model: "m", input });
      expect(compacted).toMatchObject({
        object: "response.compaction",
        output: [
          { type: "message", role: "user", content: [{ type: "input_text", text: "We agreed to launch on Tuesday." }] },
          { type: "compaction", encrypted_content: sealCompaction(CHAT_REPLY) },
        ],
      });
      expect(compacted.id).toMatch(/^resp_/);
      const prompt = compacted.usage.input_tokens;
      expect(compacted.usage).toMatchObject({
        output_tokens: CHAT_REPLY_TOKENS,
        total_tokens: prompt + CHAT_REPLY_TOKENS,
      });
      // The compacted output as the next turn's input: the summary is a user message in the prompt.
      const next = [
        ...(compacted.output as OpenAI.Responses.ResponseInputItem[]),
        { role: "user" as const, content: "Go on." },
      ];
      const response = await client.responses.create({ model: "m", input: next });
      expect(response.output_text).toBe(CHAT_REPLY);
      const { tokens } = await clientsFor(wide.sidecar.url).grpc.tokenize({
        input: {
          case: "chat",
          value: {
            messages: [
              { role: Role.USER, content: "We agreed to launch on Tuesday." },
              { role: Role.USER, content: `${SUMMARY_OPENING}${CHAT_REPLY}` },
              { role: Role.USER, content: "Go on." },
            ],
          },
        },
      });
      expect(response.usage?.input_tokens).toBe(tokens.length);
    },
  );

  it(
    "context_management compacts a prompt over its threshold before answering; the next turn is rendered from the " +
      "compaction item on",
    async () => {
      const input: OpenAI.Responses.ResponseInputItem[] = [
        { role: "user", content: "We agreed to launch on Tuesday." },
        { role: "assistant", content: "Understood: Tuesday." },
        { role: "user", content: "Anything else?" },
      ];
      const context_management = [{ type: "compaction" as const, compact_threshold: 20 }];
      const stream = client.responses.stream({ model: "m", input, context_management });
      const added: [number, string][] = [];
      stream.on("response.output_item.added", (event) => added.push([event.output_index, event.item.type]));
      const response = await stream.finalResponse();
      expect(added).toEqual([
        [0, "compaction"],
        [1, "message"],
      ]);
      expect(response.output[0]).toMatchObject({
        type: "compaction",
        id: expect.stringMatching(/^cmp_/),
        encrypted_content: sealCompaction(CHAT_REPLY),
      });
      expect(response.output_text).toBe(CHAT_REPLY);
      // The reply's prompt was the user messages and the summary, as the sidecar counts it.
      const prompt = (messages: { role: Role; content: string }[]) =>
        clientsFor(wide.sidecar.url).grpc.tokenize({ input: { case: "chat", value: { messages } } });
      const window = [
        { role: Role.USER, content: "We agreed to launch on Tuesday." },
        { role: Role.USER, content: "Anything else?" },
        { role: Role.USER, content: `${SUMMARY_OPENING}${CHAT_REPLY}` },
      ];
      expect(response.usage?.input_tokens).toBe((await prompt(window)).tokens.length);
      // The client appends the output and its next message; the server renders from the compaction item on.
      const next = [
        ...input,
        ...(response.output as OpenAI.Responses.ResponseInputItem[]),
        { role: "user" as const, content: "Go on." },
      ];
      const again = await client.responses.create({
        model: "m",
        input: next,
        context_management: [{ type: "compaction", compact_threshold: 2000 }],
      });
      expect(again.output.map((item) => item.type)).toEqual(["message"]);
      const nextWindow = [
        ...window,
        { role: Role.ASSISTANT, content: CHAT_REPLY },
        { role: Role.USER, content: "Go on." },
      ];
      expect(again.usage?.input_tokens).toBe((await prompt(nextWindow)).tokens.length);
    },
  );

  it("another server's compaction item is a 400 naming it", async () => {
    const error = (await client.responses
      .create({ model: "m", input: [{ type: "compaction", encrypted_content: "gAAAAABo-someone-else" }] })
      .catch((e: unknown) => e)) as APIError;
    expect([error.status, error.param]).toEqual([400, "input[0].encrypted_content"]);
  });
});
