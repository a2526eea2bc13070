// OpenAI's Conversations API on the Node edge (the store in memory) in front of a real sidecar and
// the scripted model, through the official `openai` client: conversations created with items and
// metadata, read, updated and deleted; items added, listed (paged), read and deleted; and
// `responses.create({conversation})`, streamed and not: the conversation's items are the context,
// and the response's input and output items are appended when it finishes. The main flow (a
// streamed and a plain response on a conversation, items added and deleted, metadata, delete) also
// runs on both runtimes, each with a fresh store: Node (SQLite) and workerd (`wrangler dev`, D1).
import OpenAI, { type APIError } from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accessFromEnv, startNodeEdge } from "../../edge/hosts/node/main.js";
import { Role } from "../../proto/gen/inference/v1/inference_pb.js";
import { startRandomStack, startStack, type Stack } from "../support/edge.js";
import { sealReasoning } from "../../edge/protocols/openai-responses/encrypted-reasoning.js";
import { describeOnRuntimes } from "../support/runtimes.js";
import { CHAT_REPLY, chatPromptTokens } from "../support/scripted.js";
import { clientsFor, readMetrics } from "../support/sidecar.js";
import { SseParser, type ParsedEvent } from "../support/sse.js";

let stack: Stack;
let client: OpenAI;
beforeAll(async () => {
  stack = await startStack({ sequences: 2, contextSize: 1024 });
  client = new OpenAI({ baseURL: stack.baseURL, apiKey: "not-needed", maxRetries: 0 });
}, 90_000);
afterAll(async () => {
  await stack?.stop();
});

type Message = { role: Role; content: string };

/** The sidecar's own count of the rendered conversation. */
async function promptTokens(messages: readonly Message[]): Promise<number> {
  const { tokens } = await clientsFor(stack.sidecar.url).grpc.tokenize({
    input: { case: "chat", value: { messages: [...messages] } },
  });
  return tokens.length;
}

const user = (content: string): Message => ({ role: Role.USER, content });
const reply: Message = { role: Role.ASSISTANT, content: CHAT_REPLY };

const userItem = (id: unknown, text: string) => ({
  id,
  type: "message",
  status: "completed",
  role: "user",
  content: [{ type: "input_text", text }],
});
const withoutRequestId = <T extends object>(value: T): Omit<T, "_request_id"> => {
  const { _request_id: _ignored, ...rest } = value as T & { _request_id?: unknown };
  return rest;
};

async function allItems(id: string, from: OpenAI = client): Promise<OpenAI.Conversations.ConversationItem[]> {
  const items: OpenAI.Conversations.ConversationItem[] = [];
  for await (const item of from.conversations.items.list(id, { order: "asc", limit: 2 })) items.push(item);
  return items;
}

describe("conversations through the openai client", () => {
  it("creates one with items and metadata; retrieve, update and delete it", async () => {
    const created = await client.conversations.create({
      metadata: { topic: "weather" },
      items: [{ type: "message", role: "user", content: "Hello!" }],
    });
    expect(withoutRequestId(created)).toEqual({
      id: expect.stringMatching(/^conv_[0-9A-Za-z]{24}$/),
      object: "conversation",
      created_at: expect.any(Number),
      metadata: { topic: "weather" },
    });
    expect(Math.abs(created.created_at - Date.now() / 1000)).toBeLessThan(60);
    expect(withoutRequestId(await client.conversations.retrieve(created.id))).toEqual(withoutRequestId(created));
    expect((await client.conversations.items.list(created.id)).data).toEqual([
      userItem(expect.stringMatching(/^msg_/), "Hello!"),
    ]);

    const updated = await client.conversations.update(created.id, { metadata: { topic: "rain", lang: "en" } });
    expect(withoutRequestId(updated)).toEqual({
      ...withoutRequestId(created),
      metadata: { topic: "rain", lang: "en" },
    });
    expect((await client.conversations.retrieve(created.id)).metadata).toEqual({ topic: "rain", lang: "en" });

    expect(withoutRequestId(await client.conversations.delete(created.id))).toEqual({
      id: created.id,
      object: "conversation.deleted",
      deleted: true,
    });
    const gone = await client.conversations.retrieve(created.id).catch((e: unknown) => e);
    expect(gone).toBeInstanceOf(OpenAI.NotFoundError);
    expect((gone as APIError).error).toEqual({
      message: `Conversation with id '${created.id}' not found.`,
      type: "invalid_request_error",
      param: null,
      code: "conversation_not_found",
    });
    expect(await client.conversations.delete(created.id).catch((e: unknown) => e)).toBeInstanceOf(OpenAI.NotFoundError);
  });

  it("creates an empty one without a body", async () => {
    const created = await client.conversations.create();
    expect(created).toMatchObject({ object: "conversation", metadata: {} });
    expect((await client.conversations.items.list(created.id)).data).toEqual([]);
  });

  it("adds items, lists them in pages either way, retrieves and deletes one", async () => {
    const { id } = await client.conversations.create({
      items: [{ type: "message", role: "user", content: "Weather in Tokyo?" }],
    });
    const added = await client.conversations.items.create(id, {
      items: [
        { type: "function_call", call_id: "call_1", name: "get_weather", arguments: '{"city":"Tokyo"}' },
        { type: "function_call_output", call_id: "call_1", output: '{"sky":"sunny"}' },
        { type: "message", role: "assistant", content: "Sunny." },
      ],
    });
    expect(withoutRequestId(added)).toEqual({
      object: "list",
      data: [
        {
          id: expect.stringMatching(/^fc_/),
          type: "function_call",
          status: "completed",
          call_id: "call_1",
          name: "get_weather",
          arguments: '{"city":"Tokyo"}',
        },
        {
          id: expect.stringMatching(/^fco_/),
          type: "function_call_output",
          status: "completed",
          call_id: "call_1",
          output: '{"sky":"sunny"}',
        },
        {
          id: expect.stringMatching(/^msg_/),
          type: "message",
          status: "completed",
          role: "assistant",
          content: [{ type: "output_text", text: "Sunny." }],
        },
      ],
      first_id: added.data[0]?.id,
      last_id: added.data[2]?.id,
      has_more: false,
    });
    const all = await allItems(id);
    expect(all.slice(1)).toEqual(added.data);
    expect(all[0]).toEqual(userItem(expect.stringMatching(/^msg_/), "Weather in Tokyo?"));
    const newest = await client.conversations.items.list(id, { limit: 3 });
    expect(newest.data.map((item) => item.id)).toEqual(
      all
        .map((item) => item.id)
        .reverse()
        .slice(0, 3),
    );
    expect(newest.has_more).toBe(true);

    const call = added.data[0] as OpenAI.Conversations.ConversationItem;
    expect(withoutRequestId(await client.conversations.items.retrieve(call.id ?? "", { conversation_id: id }))).toEqual(
      call,
    );
    const afterDelete = await client.conversations.items.delete(call.id ?? "", { conversation_id: id });
    expect(afterDelete).toMatchObject({ id, object: "conversation", metadata: {} });
    const gone = await client.conversations.items
      .retrieve(call.id ?? "", { conversation_id: id })
      .catch((e: unknown) => e);
    expect(gone).toBeInstanceOf(OpenAI.NotFoundError);
    expect((gone as APIError).error).toEqual({
      message: `Item with id '${call.id ?? ""}' not found.`,
      type: "invalid_request_error",
      param: null,
      code: "item_not_found",
    });
    expect((await allItems(id)).map((item) => item.id)).toEqual([all[0]?.id, all[2]?.id, all[3]?.id]);
  });
  it("include reasoning.encrypted_content: reasoning items carry their text sealed, as Responses seal it", async () => {
    // An item that brings its own id keeps it.
    const reasoning = {
      id: "rs_given",
      type: "reasoning" as const,
      summary: [],
      content: [{ type: "reasoning_text" as const, text: "Checking the forecast." }],
    };
    const { id } = await client.conversations.create({ items: [{ role: "user", content: "Weather?" }, reasoning] });
    const plain = (await client.conversations.items.list(id, { order: "asc" })).data;
    expect(plain[1]).toEqual(reasoning);
    const sealed = (
      await client.conversations.items.list(id, { order: "asc", include: ["reasoning.encrypted_content"] })
    ).data;
    expect(sealed).toEqual([plain[0], { ...plain[1], encrypted_content: sealReasoning("Checking the forecast.") }]);
    const one = await client.conversations.items.retrieve(plain[1]?.id ?? "", {
      conversation_id: id,
      include: ["reasoning.encrypted_content"],
    });
    expect(withoutRequestId(one)).toEqual(sealed[1]);
  });
});

describe("responses.create({conversation})", () => {
  it("takes the conversation's items as context and appends the input and output items", async () => {
    const conversation = await client.conversations.create({
      items: [
        { role: "user", content: "Hello!" },
        { role: "assistant", content: CHAT_REPLY },
      ],
    });
    const before = await allItems(conversation.id);
    const response = await client.responses.create({
      model: "m",
      conversation: conversation.id,
      input: "And tomorrow?",
    });
    expect(response).toMatchObject({
      status: "completed",
      output_text: CHAT_REPLY,
      conversation: { id: conversation.id },
      previous_response_id: null,
      store: true,
    });
    expect(response.usage?.input_tokens).toBe(await promptTokens([user("Hello!"), reply, user("And tomorrow?")]));
    expect(response.usage?.input_tokens_details.cached_tokens).toBe(0);

    const [asked] = (await client.responses.inputItems.list(response.id)).data;
    expect(await allItems(conversation.id)).toEqual([...before, { ...asked, status: "completed" }, response.output[0]]);
    expect(response.output[0]).toEqual({
      id: expect.stringMatching(/^msg_/),
      type: "message",
      status: "completed",
      role: "assistant",
      content: [{ type: "output_text", text: CHAT_REPLY, annotations: [], logprobs: [] }],
    });
    expect(await client.responses.retrieve(response.id)).toEqual(response);
  });

  it("streamed, with {id}: the completed response names the conversation; the next turn sees every item", async () => {
    const conversation = await client.conversations.create();
    const stream = await client.responses.create({
      model: "m",
      conversation: { id: conversation.id },
      input: "Hello!",
      stream: true,
    });
    let completed: OpenAI.Responses.Response | undefined;
    let created: OpenAI.Responses.Response | undefined;
    for await (const event of stream) {
      if (event.type === "response.created") created = event.response;
      if (event.type === "response.completed") completed = event.response;
    }
    expect(created?.conversation).toEqual({ id: conversation.id });
    expect(completed).toMatchObject({
      status: "completed",
      output_text: CHAT_REPLY,
      conversation: { id: conversation.id },
    });
    const items = await allItems(conversation.id);
    expect(items).toEqual([userItem(expect.stringMatching(/^msg_/), "Hello!"), completed?.output[0]]);

    const next = await client.responses.create({
      model: "m",
      conversation: conversation.id,
      input: "And tomorrow?",
      store: false,
    });
    expect(next).toMatchObject({ store: false, output_text: CHAT_REPLY });
    expect(next.usage?.input_tokens).toBe(await promptTokens([user("Hello!"), reply, user("And tomorrow?")]));
    expect(next.usage?.input_tokens_details.cached_tokens).toBeGreaterThan(0);
    // store: false keeps no response, but the conversation still gets the turn.
    expect(await client.responses.retrieve(next.id).catch((e: unknown) => e)).toBeInstanceOf(OpenAI.NotFoundError);
    expect((await allItems(conversation.id)).slice(2)).toEqual([
      userItem(expect.stringMatching(/^msg_/), "And tomorrow?"),
      next.output[0],
    ]);
  });

  it("an incomplete response (max_output_tokens) is appended as it was answered", async () => {
    const conversation = await client.conversations.create();
    const response = await client.responses.create({
      model: "m",
      conversation: conversation.id,
      input: "Hello!",
      max_output_tokens: 3,
    });
    expect(response.status).toBe("incomplete");
    expect((await allItems(conversation.id))[1]).toEqual(response.output[0]);
    expect(response.output[0]).toMatchObject({ status: "incomplete" });
  });

  it("a refused generation (the conversation outgrew the context) appends nothing", async () => {
    const context = stack.sidecar.models[0]?.contextSize ?? 0;
    const long = "sunny ".repeat(Math.floor(context / 2));
    const conversation = await client.conversations.create({ items: [{ role: "user", content: long }] });
    const refused = await client.responses
      .create({ model: "m", conversation: conversation.id, input: long })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect((refused as APIError).code).toBe("context_length_exceeded");
    expect(await allItems(conversation.id)).toHaveLength(1);
  });

  it("item_reference finds a conversation's items", async () => {
    const conversation = await client.conversations.create({ items: [{ role: "user", content: "Hello!" }] });
    const [hello] = await allItems(conversation.id);
    const response = await client.responses.create({
      model: "m",
      input: [
        { type: "item_reference", id: hello?.id ?? "" },
        { role: "user", content: "And tomorrow?" },
      ],
    });
    expect(response.usage?.input_tokens).toBe(await promptTokens([user("Hello!"), user("And tomorrow?")]));
  });
});

/** A raw request and its answer, status and JSON body. */
async function raw(method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }> {
  const init: RequestInit =
    body === undefined
      ? { method }
      : {
          method,
          headers: { "content-type": "application/json" },
          body: typeof body === "string" ? body : JSON.stringify(body),
        };
  const response = await fetch(`${stack.baseURL}${path}`, init);
  return { status: response.status, body: await response.json() };
}

const invalid = (message: string, param: string | null, code: string | null = null) => ({
  error: { message, type: "invalid_request_error", param, code },
});

describe("refusals on the wire, in OpenAI's error shape, changing nothing", () => {
  it("responses: conversation with previous_response_id, an unknown conversation, a malformed one", async () => {
    const { id } = await client.conversations.create();
    expect(
      await raw("POST", "/responses", { model: "m", input: "Hi", conversation: id, previous_response_id: "resp_x" }),
    ).toEqual({
      status: 400,
      body: invalid(
        "Mutually exclusive parameters: Ensure you are only providing one of: 'previous_response_id' or " +
          "'conversation'.",
        null,
        "mutually_exclusive_parameters",
      ),
    });
    expect(await raw("POST", "/responses", { model: "m", input: "Hi", conversation: { id: "conv_nope" } })).toEqual({
      status: 404,
      body: invalid("Conversation with id 'conv_nope' not found.", "conversation", "conversation_not_found"),
    });
    expect(await raw("POST", "/responses", { model: "m", input: "Hi", conversation: 42 })).toEqual({
      status: 400,
      body: invalid(
        "Invalid 'conversation': expected a conversation id (a non-empty string), or an object with one as 'id'.",
        "conversation",
      ),
    });
    expect(await raw("POST", "/responses", { model: "m", input: "Hi", conversation: {} })).toEqual({
      status: 400,
      body: invalid("Invalid 'conversation.id': expected a conversation id (a non-empty string).", "conversation.id"),
    });
    expect(await allItems(id)).toEqual([]);
  });

  it("conversations: bad items, metadata and bodies", async () => {
    expect(await raw("POST", "/conversations", { items: [{ type: "web_search_call", id: "ws_1" }] })).toEqual({
      status: 400,
      body: invalid(
        "Invalid 'items[0].type': input items of type 'web_search_call' are not supported; supported: 'message', " +
          "'function_call', 'function_call_output', 'reasoning', 'compaction', 'compaction_trigger'",
        "items[0].type",
      ),
    });
    expect(await raw("POST", "/conversations", { items: [{ type: "compaction_trigger" }] })).toEqual({
      status: 400,
      body: invalid(
        "Invalid 'items[0].type': a 'compaction_trigger' item cannot be kept in a conversation: send it last in a " +
          "/v1/responses input",
        "items[0].type",
      ),
    });
    expect(await raw("POST", "/conversations", { items: [{ role: "robot", content: "x" }] })).toEqual({
      status: 400,
      body: invalid(
        "Invalid 'items[0].role': expected one of 'system', 'developer', 'user', 'assistant'",
        "items[0].role",
      ),
    });
    const seventeen = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, "v"]));
    expect(await raw("POST", "/conversations", { metadata: seventeen })).toEqual({
      status: 400,
      body: invalid("Invalid 'metadata': expected an object with at most 16 keys", "metadata"),
    });
    expect(await raw("POST", "/conversations", { metadata: { k: 1 } })).toEqual({
      status: 400,
      body: invalid("Invalid 'metadata.k': expected string, received number", "metadata.k"),
    });
    const many = Array.from({ length: 21 }, () => ({ role: "user", content: "x" }));
    expect(await raw("POST", "/conversations", { items: many })).toEqual({
      status: 400,
      body: invalid("Invalid 'items': at most 20 items may be added at a time", "items"),
    });
    expect(await raw("POST", "/conversations", "[1]")).toEqual({
      status: 400,
      body: invalid("Invalid request body: expected a JSON object", null),
    });
    const { id } = await client.conversations.create({ metadata: { topic: "weather" } });
    expect(await raw("POST", `/conversations/${id}`, {})).toEqual({
      status: 400,
      body: invalid("Missing required parameter: 'metadata'.", "metadata"),
    });
    expect((await client.conversations.retrieve(id)).metadata).toEqual({ topic: "weather" });
  });

  it(
    "items: none, an unknown reference (the good items before it are not added), bad list queries, unknown " + "ids",
    async () => {
      const { id } = await client.conversations.create({ items: [{ role: "user", content: "Hello!" }] });
      const before = await allItems(id);
      expect(await raw("POST", `/conversations/${id}/items`, { items: [] })).toEqual({
        status: 400,
        body: invalid("Invalid 'items': at least one item is required", "items"),
      });
      expect(await raw("POST", `/conversations/${id}/items`, {})).toEqual({
        status: 400,
        body: invalid("Missing required parameter: 'items'.", "items"),
      });
      expect(await raw("POST", `/conversations/${id}/items`, "[1]")).toEqual({
        status: 400,
        body: invalid("Invalid request body: expected a JSON object", null),
      });
      expect(
        await raw("POST", `/conversations/${id}/items`, { items: [{ id: 5, role: "user", content: "x" }] }),
      ).toEqual({
        status: 400,
        body: invalid("Invalid 'items[0].id': expected an item id (a non-empty string)", "items[0].id"),
      });
      expect(
        await raw("POST", `/conversations/${id}/items`, {
          items: [
            { role: "user", content: "ok" },
            { type: "item_reference", id: "msg_nope" },
          ],
        }),
      ).toEqual({
        status: 400,
        body: invalid("Item with id 'msg_nope' not found.", "items[1].id"),
      });
      expect(await allItems(id)).toEqual(before);
      expect(await raw("GET", `/conversations/${id}/items?limit=0`)).toEqual({
        status: 400,
        body: invalid("Invalid 'limit': expected an integer from 1 to 100.", "limit"),
      });
      expect(await raw("GET", `/conversations/${id}/items?order=sideways`)).toEqual({
        status: 400,
        body: invalid("Invalid 'order': expected 'asc' or 'desc'.", "order"),
      });
      expect(await raw("GET", `/conversations/${id}/items?after=msg_nope`)).toEqual({
        status: 400,
        body: invalid("Invalid 'after': no item with id 'msg_nope' in this conversation.", "after"),
      });
      const include = await raw("GET", `/conversations/${id}/items?include[]=bogus`);
      expect(include).toMatchObject({
        status: 400,
        body: {
          error: { message: expect.stringMatching(/^Invalid 'include': 'bogus' is not one of /), param: "include" },
        },
      });
      expect(await raw("GET", "/conversations/conv_nope/items/msg_x")).toEqual({
        status: 404,
        body: invalid("Conversation with id 'conv_nope' not found.", null, "conversation_not_found"),
      });
      expect(await raw("DELETE", `/conversations/${id}/items/msg_x`)).toEqual({
        status: 404,
        body: invalid("Item with id 'msg_x' not found.", null, "item_not_found"),
      });
    },
  );

  it("a /c1 conversation is not an OpenAI conversation, nor the other way round", async () => {
    const chat = await fetch(`${stack.edge.url}/c1/chat`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "Hi" }] }),
    });
    const c1 = chat.headers.get("x-conversation-id") ?? "";
    expect(c1).toMatch(/^conv_/);
    expect(await raw("GET", `/conversations/${c1}`)).toEqual({
      status: 404,
      body: invalid(`Conversation with id '${c1}' not found.`, null, "conversation_not_found"),
    });
    const { id } = await client.conversations.create();
    expect((await fetch(`${stack.edge.url}/c1/conversations/${id}`)).status).toBe(404);
  });
});

describe("ownership", () => {
  it("keeps each key's conversations from every other key: a 404, never the conversation", async () => {
    const keyed = await startNodeEdge({
      sidecarUrl: stack.sidecar.url,
      port: 0,
      access: accessFromEnv({ API_KEYS: "key-one,key-two" }),
    });
    try {
      const one = new OpenAI({ baseURL: `${keyed.url}/v1`, apiKey: "key-one", maxRetries: 0 });
      const two = new OpenAI({ baseURL: `${keyed.url}/v1`, apiKey: "key-two", maxRetries: 0 });
      const created = await one.conversations.create({
        metadata: { owner: "one" },
        items: [{ role: "user", content: "Hello!" }],
      });
      const [item] = (await one.conversations.items.list(created.id)).data;
      const itemId = item?.id ?? "";
      const refusals = [
        two.conversations.retrieve(created.id),
        two.conversations.update(created.id, { metadata: { owner: "two" } }),
        two.conversations.items.list(created.id),
        two.conversations.items.create(created.id, { items: [{ role: "user", content: "x" }] }),
        two.conversations.items.retrieve(itemId, { conversation_id: created.id }),
        two.conversations.items.delete(itemId, { conversation_id: created.id }),
        two.responses.create({ model: "m", conversation: created.id, input: "Hi" }),
        two.conversations.delete(created.id),
      ];
      for (const refused of await Promise.all(refusals.map((p) => Promise.resolve(p).catch((e: unknown) => e))))
        expect(refused).toBeInstanceOf(OpenAI.NotFoundError);
      const reference = await two.responses
        .create({ model: "m", input: [{ type: "item_reference", id: itemId }] })
        .catch((e: unknown) => e);
      expect(reference).toBeInstanceOf(OpenAI.BadRequestError);
      expect(withoutRequestId(await one.conversations.retrieve(created.id))).toEqual(withoutRequestId(created));
      expect((await one.conversations.items.list(created.id)).data).toEqual([item]);
    } finally {
      await keyed.close();
    }
  });
});

describe("responses on a conversation that stop mid-reply (random model, slow enough to act mid-reply)", () => {
  let slow: Stack;
  beforeAll(async () => {
    slow = await startRandomStack();
  }, 90_000);
  afterAll(async () => slow?.stop());

  it("appends nothing: the conversation keeps only what it had", async () => {
    const slowClient = new OpenAI({ baseURL: slow.baseURL, apiKey: "not-needed", maxRetries: 0 });
    const conversation = await slowClient.conversations.create({ items: [{ role: "user", content: "Hello!" }] });
    const before = (await slowClient.conversations.items.list(conversation.id)).data;
    const stream = await slowClient.responses.create({
      model: "m",
      conversation: conversation.id,
      input: "Tell me everything.",
      max_output_tokens: 4000,
      stream: true,
    });
    for await (const event of stream) {
      // Leave once the reply has begun.
      if (event.type === "response.output_text.delta") break;
    }
    const deadline = Date.now() + 10_000;
    while ((await readMetrics(slow.sidecar.url))["sidecar_generations_active"] !== 0 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    expect((await readMetrics(slow.sidecar.url))["sidecar_generations_active"]).toBe(0);
    await new Promise((r) => setTimeout(r, 200));
    expect((await slowClient.conversations.items.list(conversation.id)).data).toEqual(before);
  });

  it("a conversation deleted while its response streams gets nothing, and the stream says why", async () => {
    const slowClient = new OpenAI({ baseURL: slow.baseURL, apiKey: "not-needed", maxRetries: 0 });
    const conversation = await slowClient.conversations.create();
    const response = await fetch(`${slow.baseURL}/responses`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: "m",
        conversation: conversation.id,
        input: "Tell me everything.",
        max_output_tokens: 48,
        stream: true,
      }),
    });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const parser = new SseParser();
    const events: ParsedEvent[] = [];
    while (!events.some((e) => e.event === "response.output_text.delta"))
      events.push(...parser.feed((await reader.read()).value ?? new Uint8Array()));
    await slowClient.conversations.delete(conversation.id);
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      events.push(...parser.feed(value));
    }
    const failed = events.at(-2);
    expect(failed?.event).toBe("response.failed");
    const body = (JSON.parse(failed?.data ?? "{}") as { response: { id: string; status: string; error: unknown } })
      .response;
    expect(body).toMatchObject({
      status: "failed",
      error: {
        code: "server_error",
        message:
          `Conversation '${conversation.id}' was deleted while this response was generated; its items were ` +
          `not added.`,
      },
    });
    expect(events.at(-1)?.data).toBe("[DONE]");
    // Nothing was kept of it: neither the response nor a conversation brought back.
    expect(await slowClient.responses.retrieve(body.id).catch((e: unknown) => e)).toBeInstanceOf(OpenAI.NotFoundError);
    expect(await slowClient.conversations.retrieve(conversation.id).catch((e: unknown) => e)).toBeInstanceOf(
      OpenAI.NotFoundError,
    );
  });

  it("the same without a stream: a 409 conversation_conflict", async () => {
    const slowClient = new OpenAI({ baseURL: slow.baseURL, apiKey: "not-needed", maxRetries: 0 });
    const conversation = await slowClient.conversations.create();
    const pending = slowClient.responses
      .create({ model: "m", conversation: conversation.id, input: "Tell me everything.", max_output_tokens: 64 })
      .catch((e: unknown) => e);
    const deadline = Date.now() + 10_000;
    while ((await readMetrics(slow.sidecar.url))["sidecar_generations_active"] !== 1 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 10));
    await slowClient.conversations.delete(conversation.id);
    const refused = await pending;
    expect(refused).toBeInstanceOf(OpenAI.ConflictError);
    expect((refused as APIError).error).toEqual({
      message:
        `Conversation '${conversation.id}' was deleted while this response was generated; its items were not ` +
        `added.`,
      type: "invalid_request_error",
      param: null,
      code: "conversation_conflict",
    });
  });
});

// Last, so that its turns leave nothing in the sidecar's cache for the suites above.
describeOnRuntimes(
  "OpenAI conversations, a fresh store",
  () => [stack.sidecar.url],
  (edge) => {
    it(
      "keeps a conversation's items through a streamed and a plain response, items added and deleted, metadata, " +
        "delete",
      async () => {
        const client = new OpenAI({ baseURL: `${edge().url}/v1`, apiKey: "not-needed", maxRetries: 0 });
        const msg = (text: string) => userItem(expect.stringMatching(/^msg_/), text);
        const conversation = await client.conversations.create({ metadata: { topic: "weather" } });
        expect(conversation).toMatchObject({
          id: expect.stringMatching(/^conv_/),
          object: "conversation",
          metadata: { topic: "weather" },
        });

        const stream = await client.responses.create({
          model: "m",
          conversation: conversation.id,
          input: "Hello!",
          stream: true,
        });
        let first: OpenAI.Responses.Response | undefined;
        for await (const event of stream) if (event.type === "response.completed") first = event.response;
        expect(first).toMatchObject({
          status: "completed",
          output_text: CHAT_REPLY,
          conversation: { id: conversation.id },
        });
        expect(first?.usage?.input_tokens).toBe(await chatPromptTokens(stack.sidecar.url, "Hello!"));

        const second = await client.responses.create({
          model: "m",
          conversation: { id: conversation.id },
          input: "And tomorrow?",
        });
        expect(second).toMatchObject({
          status: "completed",
          output_text: CHAT_REPLY,
          conversation: { id: conversation.id },
        });
        expect(second.usage?.input_tokens).toBeGreaterThan(
          (first?.usage?.input_tokens ?? 0) + (first?.usage?.output_tokens ?? 0),
        );
        expect(second.usage?.input_tokens_details.cached_tokens).toBeGreaterThan(0);
        expect(await allItems(conversation.id, client)).toEqual([
          msg("Hello!"),
          first?.output[0],
          msg("And tomorrow?"),
          second.output[0],
        ]);

        const added = await client.conversations.items.create(conversation.id, {
          items: [{ role: "user", content: "Thanks." }],
        });
        expect(added.data).toEqual([msg("Thanks.")]);
        const retrieved = withoutRequestId(
          await client.conversations.items.retrieve(added.data[0]?.id ?? "", { conversation_id: conversation.id }),
        );
        expect(retrieved).toEqual(added.data[0]);
        await client.conversations.items.delete(added.data[0]?.id ?? "", { conversation_id: conversation.id });
        expect(await allItems(conversation.id, client)).toHaveLength(4);

        expect((await client.conversations.update(conversation.id, { metadata: { topic: "rain" } })).metadata).toEqual({
          topic: "rain",
        });
        expect(await client.conversations.delete(conversation.id)).toMatchObject({
          id: conversation.id,
          object: "conversation.deleted",
          deleted: true,
        });
        expect(await client.conversations.retrieve(conversation.id).catch((e: unknown) => e)).toBeInstanceOf(
          OpenAI.NotFoundError,
        );
        expect(
          await client.responses
            .create({ model: "m", conversation: conversation.id, input: "Hi" })
            .catch((e: unknown) => e),
        ).toBeInstanceOf(OpenAI.NotFoundError);
      },
    );
  },
);
