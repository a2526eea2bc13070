// OpenAI's Conversations API on the Node edge (the store in memory) in front of a real sidecar and
// the scripted model, through the official `openai` client: conversations created with items and
// metadata, read, updated and deleted; items added, listed (paged), read and deleted; and
// `responses.create({conversation})`, streamed and not: the conversation's items are the context,
// and the response's input and output items are appended when it finishes.
import OpenAI, { APIError } from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Role } from "../../proto/gen/inference/v1/inference_pb.js";
import { startStack, type Stack } from "../support/edge.js";
import { CHAT_REPLY } from "../support/scripted.js";
import { clientsFor } from "../support/sidecar.js";

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
  const { tokens } = await clientsFor(stack.sidecar.url).grpc.tokenize({ input: { case: "chat", value: { messages: [...messages] } } });
  return tokens.length;
}

const user = (content: string): Message => ({ role: Role.USER, content });
const reply: Message = { role: Role.ASSISTANT, content: CHAT_REPLY };

const userItem = (id: unknown, text: string) => ({ id, type: "message", status: "completed", role: "user", content: [{ type: "input_text", text }] });
const withoutRequestId = <T extends object>(value: T): Omit<T, "_request_id"> => {
  const { _request_id: _ignored, ...rest } = value as T & { _request_id?: unknown };
  return rest;
};

async function allItems(id: string): Promise<OpenAI.Conversations.ConversationItem[]> {
  const items: OpenAI.Conversations.ConversationItem[] = [];
  for await (const item of client.conversations.items.list(id, { order: "asc", limit: 2 })) items.push(item);
  return items;
}

describe("conversations through the openai client", () => {
  it("creates one with items and metadata; retrieve, update and delete it", async () => {
    const created = await client.conversations.create({ metadata: { topic: "weather" }, items: [{ type: "message", role: "user", content: "Hello!" }] });
    expect(withoutRequestId(created)).toEqual({ id: expect.stringMatching(/^conv_[0-9A-Za-z]{24}$/), object: "conversation", created_at: expect.any(Number), metadata: { topic: "weather" } });
    expect(Math.abs(created.created_at - Date.now() / 1000)).toBeLessThan(60);
    expect(withoutRequestId(await client.conversations.retrieve(created.id))).toEqual(withoutRequestId(created));
    expect((await client.conversations.items.list(created.id)).data).toEqual([userItem(expect.stringMatching(/^msg_/), "Hello!")]);

    const updated = await client.conversations.update(created.id, { metadata: { topic: "rain", lang: "en" } });
    expect(withoutRequestId(updated)).toEqual({ ...withoutRequestId(created), metadata: { topic: "rain", lang: "en" } });
    expect((await client.conversations.retrieve(created.id)).metadata).toEqual({ topic: "rain", lang: "en" });

    expect(withoutRequestId(await client.conversations.delete(created.id))).toEqual({ id: created.id, object: "conversation.deleted", deleted: true });
    const gone = await client.conversations.retrieve(created.id).catch((e: unknown) => e);
    expect(gone).toBeInstanceOf(OpenAI.NotFoundError);
    expect((gone as APIError).error).toEqual({ message: `Conversation with id '${created.id}' not found.`, type: "invalid_request_error", param: null, code: "conversation_not_found" });
    expect(await client.conversations.delete(created.id).catch((e: unknown) => e)).toBeInstanceOf(OpenAI.NotFoundError);
  });

  it("creates an empty one without a body", async () => {
    const created = await client.conversations.create();
    expect(created).toMatchObject({ object: "conversation", metadata: {} });
    expect((await client.conversations.items.list(created.id)).data).toEqual([]);
  });

  it("adds items, lists them in pages either way, retrieves and deletes one", async () => {
    const { id } = await client.conversations.create({ items: [{ type: "message", role: "user", content: "Weather in Tokyo?" }] });
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
        { id: expect.stringMatching(/^fc_/), type: "function_call", status: "completed", call_id: "call_1", name: "get_weather", arguments: '{"city":"Tokyo"}' },
        { id: expect.stringMatching(/^fco_/), type: "function_call_output", status: "completed", call_id: "call_1", output: '{"sky":"sunny"}' },
        { id: expect.stringMatching(/^msg_/), type: "message", status: "completed", role: "assistant", content: [{ type: "output_text", text: "Sunny." }] },
      ],
      first_id: added.data[0]?.id,
      last_id: added.data[2]?.id,
      has_more: false,
    });
    const all = await allItems(id);
    expect(all.slice(1)).toEqual(added.data);
    expect(all[0]).toEqual(userItem(expect.stringMatching(/^msg_/), "Weather in Tokyo?"));
    const newest = await client.conversations.items.list(id, { limit: 3 });
    expect(newest.data.map((item) => item.id)).toEqual(all.map((item) => item.id).reverse().slice(0, 3));
    expect(newest.has_more).toBe(true);

    const call = added.data[0] as OpenAI.Conversations.ConversationItem;
    expect(withoutRequestId(await client.conversations.items.retrieve(call.id ?? "", { conversation_id: id }))).toEqual(call);
    const afterDelete = await client.conversations.items.delete(call.id ?? "", { conversation_id: id });
    expect(afterDelete).toMatchObject({ id, object: "conversation", metadata: {} });
    const gone = await client.conversations.items.retrieve(call.id ?? "", { conversation_id: id }).catch((e: unknown) => e);
    expect(gone).toBeInstanceOf(OpenAI.NotFoundError);
    expect((gone as APIError).error).toEqual({ message: `Item with id '${call.id ?? ""}' not found.`, type: "invalid_request_error", param: null, code: "item_not_found" });
    expect((await allItems(id)).map((item) => item.id)).toEqual([all[0]?.id, all[2]?.id, all[3]?.id]);
  });
});

describe("responses.create({conversation})", () => {
  it("takes the conversation's items as context and appends the input and output items", async () => {
    const conversation = await client.conversations.create({ items: [{ role: "user", content: "Hello!" }, { role: "assistant", content: CHAT_REPLY }] });
    const before = await allItems(conversation.id);
    const response = await client.responses.create({ model: "m", conversation: conversation.id, input: "And tomorrow?" });
    expect(response).toMatchObject({ status: "completed", output_text: CHAT_REPLY, conversation: { id: conversation.id }, previous_response_id: null, store: true });
    expect(response.usage?.input_tokens).toBe(await promptTokens([user("Hello!"), reply, user("And tomorrow?")]));
    expect(response.usage?.input_tokens_details.cached_tokens).toBe(0);

    const [asked] = (await client.responses.inputItems.list(response.id)).data;
    expect(await allItems(conversation.id)).toEqual([...before, { ...asked, status: "completed" }, response.output[0]]);
    expect(response.output[0]).toEqual({ id: expect.stringMatching(/^msg_/), type: "message", status: "completed", role: "assistant", content: [{ type: "output_text", text: CHAT_REPLY, annotations: [], logprobs: [] }] });
    expect(await client.responses.retrieve(response.id)).toEqual(response);
  });

  it("streamed, with {id}: the completed response names the conversation; the next turn sees every item", async () => {
    const conversation = await client.conversations.create();
    const stream = await client.responses.create({ model: "m", conversation: { id: conversation.id }, input: "Hello!", stream: true });
    let completed: OpenAI.Responses.Response | undefined;
    let created: OpenAI.Responses.Response | undefined;
    for await (const event of stream) {
      if (event.type === "response.created") created = event.response;
      if (event.type === "response.completed") completed = event.response;
    }
    expect(created?.conversation).toEqual({ id: conversation.id });
    expect(completed).toMatchObject({ status: "completed", output_text: CHAT_REPLY, conversation: { id: conversation.id } });
    const items = await allItems(conversation.id);
    expect(items).toEqual([userItem(expect.stringMatching(/^msg_/), "Hello!"), completed?.output[0]]);

    const next = await client.responses.create({ model: "m", conversation: conversation.id, input: "And tomorrow?", store: false });
    expect(next).toMatchObject({ store: false, output_text: CHAT_REPLY });
    expect(next.usage?.input_tokens).toBe(await promptTokens([user("Hello!"), reply, user("And tomorrow?")]));
    expect(next.usage?.input_tokens_details.cached_tokens).toBeGreaterThan(0);
    // store: false keeps no response, but the conversation still gets the turn.
    expect(await client.responses.retrieve(next.id).catch((e: unknown) => e)).toBeInstanceOf(OpenAI.NotFoundError);
    expect((await allItems(conversation.id)).slice(2)).toEqual([userItem(expect.stringMatching(/^msg_/), "And tomorrow?"), next.output[0]]);
  });

  it("an incomplete response (max_output_tokens) is appended as it was answered", async () => {
    const conversation = await client.conversations.create();
    const response = await client.responses.create({ model: "m", conversation: conversation.id, input: "Hello!", max_output_tokens: 3 });
    expect(response.status).toBe("incomplete");
    expect((await allItems(conversation.id))[1]).toEqual(response.output[0]);
    expect(response.output[0]).toMatchObject({ status: "incomplete" });
  });

  it("a refused generation (the conversation outgrew the context) appends nothing", async () => {
    const context = stack.sidecar.models[0]?.contextSize ?? 0;
    const long = "sunny ".repeat(Math.floor(context / 2));
    const conversation = await client.conversations.create({ items: [{ role: "user", content: long }] });
    const refused = await client.responses.create({ model: "m", conversation: conversation.id, input: long }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect((refused as APIError).code).toBe("context_length_exceeded");
    expect(await allItems(conversation.id)).toHaveLength(1);
  });

  it("item_reference finds a conversation's items", async () => {
    const conversation = await client.conversations.create({ items: [{ role: "user", content: "Hello!" }] });
    const [hello] = await allItems(conversation.id);
    const response = await client.responses.create({ model: "m", input: [{ type: "item_reference", id: hello?.id ?? "" }, { role: "user", content: "And tomorrow?" }] });
    expect(response.usage?.input_tokens).toBe(await promptTokens([user("Hello!"), user("And tomorrow?")]));
  });
});
