// Anthropic message threads in front of a real sidecar. Through the official `@anthropic-ai/sdk`
// client on both runtimes (Node with SQLite, workerd under `wrangler dev` with D1): a thread
// created on a streamed turn, continued with only the new message, an unknown id's 404. The rest
// on the Node edge (SQLite in a temporary file), raw HTTP, as the wire carries them. A create keeps the conversation,
// a continue sends
// only its new messages and the sidecar sees the whole thread; unknown and other keys' ids are
// 404 thread_not_found; a continue may not resend the thread's system or tools; a stream the client
// leaves stores nothing (the 60M random model, slow enough to leave mid-reply).
import Anthropic from "@anthropic-ai/sdk";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accessFromEnv, startNodeEdge } from "../../edge/hosts/node/main.js";
import { startRandomStack, startStack, type Stack } from "../support/edge.js";
import { CHAT_REPLY } from "../support/scripted.js";
import { describeOnRuntimes } from "../support/runtimes.js";
import { readMetrics } from "../support/sidecar.js";
import { SseParser } from "../support/sse.js";

const BETA = { "anthropic-beta": "message-threads-2026-08-12" };
const dir = mkdtempSync(join(tmpdir(), "llm-edge-threads-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Message {
  id: string;
  content: { type: string; text?: string }[];
  usage: { input_tokens: number; cache_read_input_tokens: number; output_tokens: number };
}

function post(
  url: string,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
  signal?: AbortSignal,
): Promise<Response> {
  return fetch(`${url}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", ...BETA, ...headers },
    body: JSON.stringify({ model: "m", max_tokens: 64, ...body }),
    ...(signal === undefined ? {} : { signal }),
  });
}

async function countTokens(url: string, body: Record<string, unknown>): Promise<number> {
  const response = await fetch(`${url}/v1/messages/count_tokens`, {
    method: "POST",
    body: JSON.stringify({ model: "m", ...body }),
  });
  return ((await response.json()) as { input_tokens: number }).input_tokens;
}

const user = (content: string) => ({ role: "user", content });
const reply = { role: "assistant", content: [{ type: "text", text: CHAT_REPLY }] };
const SYSTEM = "You answer about the weather.";
const notFound = (id: string) => ({
  type: "error",
  error: {
    type: "not_found_error",
    message:
      `No thread holds message '${id}' for this key; send the whole conversation with thread {"type": ` +
      `"create"} to start a new one.`,
    details: { error_code: "thread_not_found" },
  },
});

/** The scripted model's sidecar and the Node edge in front of it, for the suites below but the last. */
let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ sequences: 2, contextSize: 1024 }, { storePath: join(dir, "store.sqlite") });
}, 90_000);
afterAll(async () => stack?.stop());

const BETAS: Anthropic.Beta.AnthropicBeta[] = ["message-threads-2026-08-12"];

describeOnRuntimes(
  "message threads through @anthropic-ai/sdk (scripted model)",
  () => [stack.sidecar.url],
  (edge) => {
    it("creates a thread on a streamed turn and continues it with only the new message", async () => {
      const client = new Anthropic({ baseURL: edge().url, apiKey: "not-checked", maxRetries: 0 });
      const system = "You answer about the weather.";
      const first = await client.beta.messages
        .stream({
          model: "m",
          max_tokens: 64,
          system,
          messages: [{ role: "user", content: "Hello!" }],
          thread: { type: "create" },
          betas: BETAS,
        })
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
        messages: [
          { role: "user", content: "Hello!" },
          { role: "assistant", content: CHAT_REPLY },
          { role: "user", content: "And tomorrow?" },
        ],
      });
      expect(second.usage.input_tokens + (second.usage.cache_read_input_tokens ?? 0)).toBe(whole.input_tokens);
      expect(second.usage.cache_read_input_tokens).toBeGreaterThan(0);

      const unknown = await client.beta.messages
        .create({
          model: "m",
          max_tokens: 8,
          messages: [{ role: "user", content: "Hi" }],
          thread: { type: "continue", previous_message_id: "msg_unknown" },
          betas: BETAS,
        })
        .catch((error: unknown) => error);
      // The SDK reads `error.details.error_code` into its own error class.
      expect(unknown).toBeInstanceOf(Anthropic.ThreadNotFoundError);
      expect(unknown).toMatchObject({
        status: 404,
        error: { type: "error", error: { type: "not_found_error", details: { error_code: "thread_not_found" } } },
      });
    });
  },
);

describe("message threads on the Node edge (scripted model)", () => {
  it(
    "create keeps the conversation with its system prompt; continue sends only the new turn, the sidecar sees it " +
      "all",
    async () => {
      const created = await post(stack.edge.url, {
        system: SYSTEM,
        messages: [user("Hello!")],
        thread: { type: "create" },
      });
      expect(created.status).toBe(200);
      const first = (await created.json()) as Message;
      expect(first).toMatchObject({
        id: expect.stringMatching(/^msg_/),
        type: "message",
        content: [{ type: "text", text: CHAT_REPLY }],
        stop_reason: "end_turn",
      });

      const continued = await post(stack.edge.url, {
        messages: [user("And tomorrow?")],
        thread: { type: "continue", previous_message_id: first.id },
      });
      expect(continued.status).toBe(200);
      const second = (await continued.json()) as Message;
      const whole = await countTokens(stack.edge.url, {
        system: SYSTEM,
        messages: [user("Hello!"), reply, user("And tomorrow?")],
      });
      expect(second.usage.input_tokens + second.usage.cache_read_input_tokens).toBe(whole);
      expect(second.usage.cache_read_input_tokens).toBeGreaterThanOrEqual(
        first.usage.input_tokens + first.usage.cache_read_input_tokens,
      );

      // A streamed continue of the second reply: three turns, the same answer's events.
      const streamed = await post(stack.edge.url, {
        messages: [user("Thanks!")],
        stream: true,
        thread: { type: "continue", previous_message_id: second.id },
      });
      expect(streamed.status).toBe(200);
      const parser = new SseParser();
      const events = [...parser.feed(new Uint8Array(await streamed.arrayBuffer())), ...parser.end()];
      const start = JSON.parse(events[0]?.data ?? "{}") as { message: Message };
      const third = await countTokens(stack.edge.url, {
        system: SYSTEM,
        messages: [user("Hello!"), reply, user("And tomorrow?"), reply, user("Thanks!")],
      });
      expect(start.message.usage.input_tokens + start.message.usage.cache_read_input_tokens).toBe(third);
      expect(events.map((e) => e.event).at(-1)).toBe("message_stop");

      // The streamed reply was stored too: the thread goes on from it.
      const fourth = await post(stack.edge.url, {
        messages: [user("Bye!")],
        thread: { type: "continue", previous_message_id: start.message.id },
      });
      expect(fourth.status).toBe(200);
    },
  );

  it(
    "answers an unknown id 404 thread_not_found; a continue resending system or tools, or a bad message, 400; " +
      "nothing stored",
    async () => {
      const unknown = await post(stack.edge.url, {
        messages: [user("Hi")],
        thread: { type: "continue", previous_message_id: "msg_unknown" },
      });
      expect(unknown.status).toBe(404);
      expect(await unknown.json()).toEqual(notFound("msg_unknown"));

      const first = (await (
        await post(stack.edge.url, { messages: [user("Hello!")], thread: { type: "create" } })
      ).json()) as Message;
      const cont = { type: "continue", previous_message_id: first.id };
      const system = await post(stack.edge.url, { system: SYSTEM, messages: [user("Hi")], thread: cont });
      expect(system.status).toBe(400);
      expect(await system.json()).toEqual({
        type: "error",
        error: {
          type: "invalid_request_error",
          message:
            "'system' cannot be sent when continuing a thread: the thread keeps the system it was created with. " +
            "Leave " +
            "it out, or start a new thread.",
        },
      });
      const tools = await post(stack.edge.url, {
        tools: [{ name: "f", input_schema: { type: "object" } }],
        messages: [user("Hi")],
        thread: cont,
      });
      expect(tools.status).toBe(400);
      // Errors name the request's own messages: messages[0] is the first new one.
      const bad = await post(stack.edge.url, {
        messages: [{ role: "user", content: [{ type: "image" }] }],
        thread: cont,
      });
      expect(bad.status).toBe(400);
      expect(((await bad.json()) as { error: { message: string } }).error.message).toContain("messages[0].content[0]");
      // A malformed thread field.
      const malformed = await post(stack.edge.url, { messages: [user("Hi")], thread: { type: "continue" } });
      expect(malformed.status).toBe(400);

      // The refused turns stored nothing: the thread is still two messages long.
      const next = (await (
        await post(stack.edge.url, { messages: [user("And tomorrow?")], thread: cont })
      ).json()) as Message;
      expect(next.usage.input_tokens + next.usage.cache_read_input_tokens).toBe(
        await countTokens(stack.edge.url, { messages: [user("Hello!"), reply, user("And tomorrow?")] }),
      );
    },
  );

  it("a request without thread stores nothing: its id continues nothing", async () => {
    const plain = (await (await post(stack.edge.url, { messages: [user("Hello!")] })).json()) as Message;
    const cont = await post(stack.edge.url, {
      messages: [user("Hi")],
      thread: { type: "continue", previous_message_id: plain.id },
    });
    expect(cont.status).toBe(404);
    expect(await cont.json()).toEqual(notFound(plain.id));
  });

  it("keeps each key's threads from every other key: 404 thread_not_found", async () => {
    const keyed = await startNodeEdge({
      sidecarUrl: stack.sidecar.url,
      port: 0,
      storePath: join(dir, "keys.sqlite"),
      access: accessFromEnv({ API_KEYS: "key-one,key-two" }),
    });
    try {
      const [one, two] = [{ "x-api-key": "key-one" }, { "x-api-key": "key-two" }];
      const first = (await (
        await post(keyed.url, { messages: [user("Hello!")], thread: { type: "create" } }, one)
      ).json()) as Message;
      const thread = { type: "continue", previous_message_id: first.id };
      const other = await post(keyed.url, { messages: [user("Hi")], thread }, two);
      expect(other.status).toBe(404);
      expect(await other.json()).toEqual(notFound(first.id));
      expect((await post(keyed.url, { messages: [user("Hi")], thread }, one)).status).toBe(200);
    } finally {
      await keyed.close();
    }
  });
});

describe("a thread turn the client leaves (60M random model)", () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startRandomStack();
  }, 120_000);
  afterAll(async () => stack?.stop());

  it("stores nothing: the reply's id continues nothing, and the thread it continued is as it was", async () => {
    const first = (await (
      await post(stack.edge.url, { messages: [user("Hello!")], max_tokens: 2, thread: { type: "create" } })
    ).json()) as Message;
    const leave = new AbortController();
    const streamed = await post(
      stack.edge.url,
      {
        messages: [user("More.")],
        max_tokens: 4000,
        stream: true,
        thread: { type: "continue", previous_message_id: first.id },
      },
      {},
      leave.signal,
    );
    expect(streamed.status).toBe(200);
    // Read until the reply has begun (message_start, then a block), then leave.
    const parser = new SseParser();
    const reader = (streamed.body as ReadableStream<Uint8Array>).getReader();
    const events: { data: string }[] = [];
    while (events.length < 2) events.push(...parser.feed((await reader.read()).value ?? new Uint8Array()));
    const left = (JSON.parse(events[0]?.data ?? "{}") as { message: Message }).message;
    leave.abort();
    await reader.cancel().catch(() => undefined);

    const deadline = Date.now() + 10_000;
    while ((await readMetrics(stack.sidecar.url))["sidecar_generations_active"] !== 0 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    expect((await readMetrics(stack.sidecar.url))["sidecar_generations_active"]).toBe(0);
    await new Promise((r) => setTimeout(r, 200));
    const cont = await post(stack.edge.url, {
      messages: [user("Hi")],
      thread: { type: "continue", previous_message_id: left.id },
    });
    expect(cont.status).toBe(404);
    expect(await cont.json()).toEqual(notFound(left.id));
    expect(
      (
        await post(stack.edge.url, {
          messages: [user("Hi")],
          max_tokens: 1,
          thread: { type: "continue", previous_message_id: first.id },
        })
      ).status,
    ).toBe(200);
  });
});
