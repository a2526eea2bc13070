// /c1: conversations the server keeps, in front of a real sidecar and the scripted model: the main
// flow on both runtimes (Node with SQLite, workerd under `wrangler dev` with D1), the rest on the
// Node edge (SQLite in a temporary file). Raw fetch, as gateway clients call it: the conversation
// id comes back in `x-conversation-id`, the next turn sends only its new messages, and the
// sidecar sees the whole conversation (turn 2's prompt counts turn 1, and reuses its cache).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accessFromEnv, startNodeEdge, type RunningEdge } from "../../edge/hosts/node/main.js";
import { Role } from "../../proto/gen/inference/v1/inference_pb.js";
import { checkChatStream } from "../support/contract.js";
import { startStack, type Stack } from "../support/edge.js";
import { CHAT_REPLY, CHAT_REPLY_TOKENS } from "../support/scripted.js";
import { clientsFor } from "../support/sidecar.js";
import { describeOnRuntimes } from "../support/runtimes.js";
import { readEvents } from "../support/sse.js";

const dir = mkdtempSync(join(tmpdir(), "llm-edge-c1-"));
const storePath = join(dir, "store.sqlite");
let stack: Stack;
let edge: RunningEdge;
beforeAll(async () => {
  stack = await startStack({ sequences: 2, contextSize: 1024 }, { storePath });
  edge = stack.edge;
}, 90_000);
afterAll(async () => {
  await edge?.close();
  await stack?.sidecar.stop();
  rmSync(dir, { recursive: true, force: true });
});

type Message = { role: "user" | "assistant"; content: string };
const user = (content: string): Message => ({ role: "user", content });
const reply: Message = { role: "assistant", content: CHAT_REPLY };

/** The sidecar's own count of the rendered conversation. */
async function promptTokens(messages: readonly Message[]): Promise<number> {
  const rendered = messages.map((m) => ({ role: m.role === "user" ? Role.USER : Role.ASSISTANT, content: m.content }));
  const { tokens } = await clientsFor(stack.sidecar.url).grpc.tokenize({
    input: { case: "chat", value: { messages: rendered } },
  });
  return tokens.length;
}

function chat(body: Record<string, unknown>, headers: Record<string, string> = {}, url = edge.url): Promise<Response> {
  return fetch(`${url}/c1/chat`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ model: "m", ...body }),
  });
}

async function getJson(
  path: string,
  headers: Record<string, string> = {},
  url = edge.url,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${url}${path}`, { headers });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describeOnRuntimes(
  "/c1 on a fresh store",
  () => [stack.sidecar.url],
  (edgeOn) => {
    it("keeps a two-turn conversation, streamed then not, and lists, reads and deletes it", async () => {
      const { url } = edgeOn();
      const first = await chat({ messages: [user("Hello!")], stream: true }, {}, url);
      expect(first.status).toBe(200);
      const id = first.headers.get("x-conversation-id") ?? "";
      expect(id).toMatch(/^conv_[0-9A-Za-z]{24}$/);
      const one = checkChatStream(await readEvents(first.body));
      expect([one.text, one.finishReason, one.done]).toEqual([CHAT_REPLY, "stop", true]);

      const second = await chat({ messages: [user("And tomorrow?")] }, { "x-conversation-id": id }, url);
      expect(second.headers.get("x-conversation-id")).toBe(id);
      const two = (await second.json()) as {
        choices: { message: unknown }[];
        usage: { prompt_tokens_details: { cached_tokens: number } };
      };
      expect(two.choices[0]?.message).toEqual({ ...reply, refusal: null });
      expect(two.usage.prompt_tokens_details.cached_tokens).toBeGreaterThan(0);

      const stored = await getJson(`/c1/conversations/${id}`, {}, url);
      expect(stored.body).toEqual({
        id,
        object: "conversation",
        created_at: expect.any(Number),
        updated_at: expect.any(Number),
        message_count: 4,
        messages: [user("Hello!"), reply, user("And tomorrow?"), reply],
      });
      const list = await getJson("/c1/conversations", {}, url);
      expect((list.body["data"] as { id: string }[]).map((c) => c.id)).toEqual([id]);
      const deleted = await fetch(`${url}/c1/conversations/${id}`, { method: "DELETE" });
      expect(await deleted.json()).toEqual({ id, object: "conversation.deleted", deleted: true });
      expect((await fetch(`${url}/c1/conversations/${id}`)).status).toBe(404);
    });
  },
);

describe("POST /c1/chat on the Node edge", () => {
  it("keeps a two-turn conversation: turn 2 sends only its message, the sidecar sees all of it", async () => {
    const first = await chat({ messages: [user("Hello!")] });
    expect(first.status).toBe(200);
    const id = first.headers.get("x-conversation-id") ?? "";
    expect(id).toMatch(/^conv_[0-9A-Za-z]{24}$/);
    const one = (await first.json()) as { object: string; choices: unknown[]; usage: { prompt_tokens: number } };
    expect(one.object).toBe("chat.completion");
    expect(one.choices).toEqual([
      {
        index: 0,
        message: { role: "assistant", content: CHAT_REPLY, refusal: null },
        logprobs: null,
        finish_reason: "stop",
      },
    ]);
    expect(one.usage.prompt_tokens).toBe(await promptTokens([user("Hello!")]));

    const second = await chat({ messages: [user("And tomorrow?")] }, { "x-conversation-id": id });
    expect(second.status).toBe(200);
    expect(second.headers.get("x-conversation-id")).toBe(id);
    const two = (await second.json()) as {
      choices: { message: unknown }[];
      usage: { prompt_tokens: number; prompt_tokens_details: { cached_tokens: number } };
    };
    expect(two.choices[0]?.message).toEqual({ role: "assistant", content: CHAT_REPLY, refusal: null });
    expect(two.usage.prompt_tokens).toBe(await promptTokens([user("Hello!"), reply, user("And tomorrow?")]));
    expect(two.usage.prompt_tokens_details.cached_tokens).toBeGreaterThan(0);

    const stored = await getJson(`/c1/conversations/${id}`);
    expect(stored.status).toBe(200);
    expect(stored.body).toEqual({
      id,
      object: "conversation",
      created_at: expect.any(Number),
      updated_at: expect.any(Number),
      message_count: 4,
      messages: [user("Hello!"), reply, user("And tomorrow?"), reply],
    });
  });

  it("streams each turn in the chat-completions shape and stores it once the reply finished", async () => {
    const first = await chat({ messages: [user("Hello!")], stream: true, stream_options: { include_usage: true } });
    expect(first.status).toBe(200);
    expect(first.headers.get("content-type")).toContain("text/event-stream");
    const id = first.headers.get("x-conversation-id") ?? "";
    const one = checkChatStream(await readEvents(first.body));
    expect([one.text, one.finishReason, one.done]).toEqual([CHAT_REPLY, "stop", true]);

    // The `conversation_id` field names the conversation as the header does.
    const second = await chat({
      conversation_id: id,
      messages: [user("And tomorrow?")],
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(second.headers.get("x-conversation-id")).toBe(id);
    const two = checkChatStream(await readEvents(second.body));
    expect(two.text).toBe(CHAT_REPLY);
    expect(two.usage).toMatchObject({
      prompt_tokens: await promptTokens([user("Hello!"), reply, user("And tomorrow?")]),
      completion_tokens: CHAT_REPLY_TOKENS,
    });
    expect(
      (two.usage as { prompt_tokens_details: { cached_tokens: number } }).prompt_tokens_details.cached_tokens,
    ).toBeGreaterThan(0);
    expect((await getJson(`/c1/conversations/${id}`)).body["messages"]).toEqual([
      user("Hello!"),
      reply,
      user("And tomorrow?"),
      reply,
    ]);
  });

  it(
    "answers an unknown conversation, a bad turn and a conversation that outgrew the context with a 400/404 that " +
      "stores nothing",
    async () => {
      const unknown = await chat({ messages: [user("Hi")] }, { "x-conversation-id": "conv_nope" });
      expect(unknown.status).toBe(404);
      expect(await unknown.json()).toEqual({
        error: {
          message: "No conversation found with id 'conv_nope'.",
          type: "invalid_request_error",
          param: "conversation_id",
          code: "conversation_not_found",
        },
      });
      const id = (await chat({ messages: [user("Hello!")] })).headers.get("x-conversation-id") ?? "";
      // The error names the request's own message, not its place in the whole conversation.
      const bad = await chat({ messages: [{ role: "tool", content: "x" }] }, { "x-conversation-id": id });
      expect(bad.status).toBe(400);
      expect(((await bad.json()) as { error: { param: string } }).error.param).toBe("messages[0].tool_call_id");
      const empty = await chat({ messages: [] }, { "x-conversation-id": id });
      expect(((await empty.json()) as { error: { message: string } }).error.message).toBe(
        "Invalid 'messages': at least one new message is required",
      );
      const long = await chat({ messages: [user("word ".repeat(1100))], stream: true }, { "x-conversation-id": id });
      expect(long.status).toBe(400);
      expect(long.headers.get("x-conversation-id")).toBe(id);
      expect(await long.json()).toMatchObject({
        error: {
          type: "invalid_request_error",
          code: "context_length_exceeded",
          message: expect.stringMatching(
            /^This model's maximum context length is 1024 tokens\. However, your messages resulted in \d+ tokens\./,
          ),
        },
      });
      expect((await getJson(`/c1/conversations/${id}`)).body["message_count"]).toBe(2);
    },
  );
});

describe("GET and DELETE /c1/conversations", () => {
  it("lists newest first a page at a time, reads one, and deletes it", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push((await chat({ messages: [user("Hello!")] })).headers.get("x-conversation-id") ?? "");
      await new Promise((r) => setTimeout(r, 5)); // distinct creation times (milliseconds)
    }
    const page = await getJson("/c1/conversations?limit=2");
    expect(page.status).toBe(200);
    const summary = (id: string) => ({
      id,
      object: "conversation",
      created_at: expect.any(Number),
      updated_at: expect.any(Number),
      message_count: 2,
    });
    expect(page.body).toEqual({
      object: "list",
      data: [summary(ids[2] ?? ""), summary(ids[1] ?? "")],
      first_id: ids[2],
      last_id: ids[1],
      has_more: true,
    });
    const next = await getJson(`/c1/conversations?limit=2&after=${ids[1] ?? ""}`);
    expect((next.body["data"] as { id: string }[])[0]?.id).toBe(ids[0]);
    expect((await getJson("/c1/conversations?limit=0")).body).toEqual({
      error: {
        message: "Invalid 'limit': expected an integer from 1 to 100.",
        type: "invalid_request_error",
        param: "limit",
        code: null,
      },
    });
    expect((await getJson("/c1/conversations?after=conv_nope")).status).toBe(400);

    const target = ids[2] ?? "";
    const deleted = await fetch(`${edge.url}/c1/conversations/${target}`, { method: "DELETE" });
    expect([deleted.status, await deleted.json()]).toEqual([
      200,
      { id: target, object: "conversation.deleted", deleted: true },
    ]);
    expect((await getJson(`/c1/conversations/${target}`)).status).toBe(404);
    expect((await fetch(`${edge.url}/c1/conversations/${target}`, { method: "DELETE" })).status).toBe(404);
    expect((await chat({ messages: [user("Hi")] }, { "x-conversation-id": target })).status).toBe(404);
  });

  it("is listed by /v1/info and exposes x-conversation-id to browsers", async () => {
    const info = await getJson("/v1/info");
    expect(info.body["endpoints"]).toEqual(
      expect.arrayContaining([
        { method: "POST", path: "/c1/chat", protocol: "openai" },
        { method: "GET", path: "/c1/conversations", protocol: "openai" },
        { method: "GET", path: "/c1/conversations/:id", protocol: "openai" },
        { method: "DELETE", path: "/c1/conversations/:id", protocol: "openai" },
      ]),
    );
    const response = await chat({ messages: [user("Hello!")] }, { origin: "http://localhost:3000" });
    expect(response.headers.get("access-control-expose-headers")).toContain("x-conversation-id");
    await response.arrayBuffer();
  });
});

describe("ownership", () => {
  it("keeps each key's conversations from every other key: a 404, never the object", async () => {
    const keyed = await startNodeEdge({
      sidecarUrl: stack.sidecar.url,
      port: 0,
      storePath: join(dir, "keys.sqlite"),
      access: accessFromEnv({ API_KEYS: "key-one,key-two" }),
    });
    try {
      const [one, two] = [{ authorization: "Bearer key-one" }, { authorization: "Bearer key-two" }];
      const created = await chat({ messages: [user("Hello!")] }, one, keyed.url);
      const id = created.headers.get("x-conversation-id") ?? "";
      await created.arrayBuffer();
      expect((await getJson(`/c1/conversations/${id}`, two, keyed.url)).status).toBe(404);
      expect((await getJson("/c1/conversations", two, keyed.url)).body["data"]).toEqual([]);
      expect((await chat({ messages: [user("Hi")] }, { ...two, "x-conversation-id": id }, keyed.url)).status).toBe(404);
      expect((await fetch(`${keyed.url}/c1/conversations/${id}`, { method: "DELETE", headers: two })).status).toBe(404);
      expect((await getJson("/c1/conversations", {}, keyed.url)).status).toBe(401);
      const own = await getJson(`/c1/conversations/${id}`, one, keyed.url);
      expect(own.body["messages"]).toEqual([user("Hello!"), reply]);
      expect((await getJson("/c1/conversations", one, keyed.url)).body["data"]).toEqual([
        expect.objectContaining({ id }),
      ]);
    } finally {
      await keyed.close();
    }
  });
});

describe("a restart of the Node edge", () => {
  it("keeps every committed turn (same STORE_PATH) and the conversation goes on", async () => {
    const id = (await chat({ messages: [user("Hello!")] })).headers.get("x-conversation-id") ?? "";
    await edge.close();
    edge = await startNodeEdge({ sidecarUrl: stack.sidecar.url, port: 0, storePath });
    expect((await getJson(`/c1/conversations/${id}`)).body["messages"]).toEqual([user("Hello!"), reply]);
    const next = await chat({ messages: [user("And tomorrow?")] }, { "x-conversation-id": id });
    expect(((await next.json()) as { usage: { prompt_tokens: number } }).usage.prompt_tokens).toBe(
      await promptTokens([user("Hello!"), reply, user("And tomorrow?")]),
    );
    expect((await getJson(`/c1/conversations/${id}`)).body["message_count"]).toBe(4);
  });
});
