// Each ending has its own cause, through the real sidecar (scripted model, 256-token context) and
// the edge on Node: a chat whose prompt leaves ROOM tokens of context is cut by max_tokens below
// that (FINISH_REASON_LENGTH) or by the full context above it (FINISH_REASON_CONTEXT_FULL).
// Anthropic says `max_tokens` or `model_context_window_exceeded`; OpenAI says "length" and the
// Responses API `max_output_tokens` for both.
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FinishReason, Role } from "../../proto/gen/inference/v1/inference_pb.js";
import { startStack, type Stack } from "../support/edge.js";
import { chatPromptTokens, CHAT_REPLY_TOKENS } from "../support/scripted.js";
import { clientsFor, collect } from "../support/sidecar.js";

/** Tokens left for the reply: fewer than the scripted reply has, so the context fills first. */
const ROOM = 6;
/** Hits max_tokens (LENGTH). */
const UNDER = ROOM - 2;
/** Hits the full context (CONTEXT_FULL). */
const OVER = ROOM + 4;

describe("max_tokens and a full context end differently", () => {
  let stack: Stack;
  let openai: OpenAI;
  let anthropic: Anthropic;
  let user = "";
  let room = 0;
  beforeAll(async () => {
    stack = await startStack();
    openai = new OpenAI({ baseURL: stack.baseURL, apiKey: "x", maxRetries: 0 });
    anthropic = new Anthropic({ baseURL: stack.edge.url, apiKey: "x", maxRetries: 0 });
    const context = stack.sidecar.models[0]?.contextSize ?? 0;
    // The longest "word word …" user message that leaves at least ROOM tokens.
    for (let words = 1; ; words++) {
      const text = "word ".repeat(words).trimEnd();
      const left = context - (await chatPromptTokens(stack.sidecar.url, text));
      if (left < ROOM) break;
      [user, room] = [text, left];
    }
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it("the sidecar sends LENGTH at max_tokens and CONTEXT_FULL when the context is full", async () => {
    expect(room).toBeGreaterThanOrEqual(ROOM);
    expect(room).toBeLessThan(ROOM + 2);
    expect(room).toBeLessThan(CHAT_REPLY_TOKENS);
    const finishOf = async (maxTokens: number | undefined) => {
      const chat = { messages: [{ role: Role.USER, content: user }] };
      const events = await collect(
        clientsFor(stack.sidecar.url).grpc.generate({
          input: { case: "chat", value: chat },
          sampling: { temperature: 0 },
          ...(maxTokens === undefined ? {} : { maxTokens }),
        }),
      );
      return events.at(-1)?.value;
    };
    expect(await finishOf(UNDER)).toMatchObject({ reason: FinishReason.LENGTH, completionTokens: UNDER });
    expect(await finishOf(room)).toMatchObject({ reason: FinishReason.LENGTH, completionTokens: room });
    expect(await finishOf(OVER)).toMatchObject({ reason: FinishReason.CONTEXT_FULL, completionTokens: room });
    expect(await finishOf(undefined)).toMatchObject({ reason: FinishReason.CONTEXT_FULL, completionTokens: room });
  });

  it("Anthropic: max_tokens, then model_context_window_exceeded, streaming or not", async () => {
    const create = (max_tokens: number) =>
      anthropic.messages.create({ model: "m", max_tokens, messages: [{ role: "user", content: user }] });
    expect(await create(UNDER)).toMatchObject({
      stop_reason: "max_tokens",
      stop_sequence: null,
      usage: { output_tokens: UNDER },
    });
    expect(await create(room)).toMatchObject({ stop_reason: "max_tokens", usage: { output_tokens: room } });
    expect(await create(OVER)).toMatchObject({
      stop_reason: "model_context_window_exceeded",
      stop_sequence: null,
      usage: { output_tokens: room },
    });
    for (const [max_tokens, reason] of [
      [UNDER, "max_tokens"],
      [OVER, "model_context_window_exceeded"],
    ] as const) {
      const stream = anthropic.messages.stream({ model: "m", max_tokens, messages: [{ role: "user", content: user }] });
      expect((await stream.finalMessage()).stop_reason).toBe(reason);
    }
  });

  it('OpenAI chat: "length" for both', async () => {
    for (const max_tokens of [UNDER, OVER]) {
      const completion = await openai.chat.completions.create({
        model: "m",
        max_tokens,
        messages: [{ role: "user", content: user }],
      });
      expect(completion.choices[0]?.finish_reason).toBe("length");
      expect(completion.usage?.completion_tokens).toBe(Math.min(max_tokens, room));
    }
  });

  it("Responses: incomplete, max_output_tokens, for both", async () => {
    for (const max_output_tokens of [UNDER, OVER]) {
      const response = await openai.responses.create({ model: "m", max_output_tokens, input: user });
      expect(response).toMatchObject({ status: "incomplete", incomplete_details: { reason: "max_output_tokens" } });
      expect(response.usage?.output_tokens).toBe(Math.min(max_output_tokens, room));
    }
  });
});
