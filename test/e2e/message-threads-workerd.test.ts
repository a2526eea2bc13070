// Anthropic message threads under workerd (`wrangler dev` with the D1 binding, migrations/ applied
// to its local database first, as `npm start` does) in front of a real sidecar and the scripted
// model, through the official `@anthropic-ai/sdk` client: a thread created on a streamed turn,
// continued with only the new message, and an unknown id's 404 thread_not_found.
import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHAT_REPLY } from "../support/scripted.js";
import { startWranglerStack, type WranglerStack } from "../support/edge.js";
import type { Wrangler } from "../support/wrangler.js";

let stack: WranglerStack;
let wrangler: Wrangler;
let client: Anthropic;
beforeAll(async () => {
  stack = await startWranglerStack();
  ({ wrangler } = stack);
  client = new Anthropic({ baseURL: wrangler.url, apiKey: "not-checked", maxRetries: 0 });
}, 120_000);
afterAll(() => stack?.stop());

const BETAS: Anthropic.Beta.AnthropicBeta[] = ["message-threads-2026-08-12"];

describe("message threads under wrangler dev (D1)", () => {
  it("creates a thread on a streamed turn and continues it with only the new message", async () => {
    const system = "You answer about the weather.";
    const first = await client.beta.messages
      .stream({ model: "m", max_tokens: 64, system, messages: [{ role: "user", content: "Hello!" }], thread: { type: "create" }, betas: BETAS })
      .finalMessage();
    expect(first.content).toEqual([{ type: "text", text: CHAT_REPLY }]);

    const second = await client.beta.messages.create({
      model: "m",
      max_tokens: 64,
      messages: [{ role: "user", content: "And tomorrow?" }],
      thread: { type: "continue", previous_message_id: first.id },
      betas: BETAS,
    });
    expect(second.content).toEqual([{ type: "text", text: CHAT_REPLY }]);
    const whole = await client.messages.countTokens({
      model: "m",
      system,
      messages: [{ role: "user", content: "Hello!" }, { role: "assistant", content: CHAT_REPLY }, { role: "user", content: "And tomorrow?" }],
    });
    expect(second.usage.input_tokens + (second.usage.cache_read_input_tokens ?? 0)).toBe(whole.input_tokens);
    expect(second.usage.cache_read_input_tokens).toBeGreaterThan(0);

    const unknown = await client.beta.messages
      .create({ model: "m", max_tokens: 8, messages: [{ role: "user", content: "Hi" }], thread: { type: "continue", previous_message_id: "msg_unknown" }, betas: BETAS })
      .catch((error: unknown) => error);
    // The SDK reads `error.details.error_code` into its own error class.
    expect(unknown).toBeInstanceOf(Anthropic.ThreadNotFoundError);
    expect(unknown).toMatchObject({ status: 404, error: { type: "error", error: { type: "not_found_error", details: { error_code: "thread_not_found" } } } });
  });
});
