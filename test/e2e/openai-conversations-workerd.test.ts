// OpenAI's Conversations API under workerd (`wrangler dev` with the D1 binding, migrations/ applied
// to its local database first, as `npm start` does) in front of a real sidecar and the scripted
// model, through the official `openai` client: the main flow of the Node suite
// (openai-conversations.test.ts) — create with items, a streamed and a plain response on the
// conversation, its items in order, items added and deleted, metadata, delete.
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningSidecar } from "../../sidecar/server.js";
import { CHAT_REPLY, chatPromptTokens } from "../support/scripted.js";
import { startWranglerStack, type WranglerStack } from "../support/edge.js";
import type { Wrangler } from "../support/wrangler.js";

let stack: WranglerStack;
let sidecar: RunningSidecar;
let wrangler: Wrangler;
let client: OpenAI;
beforeAll(async () => {
  stack = await startWranglerStack();
  ({ sidecar, wrangler } = stack);
  client = new OpenAI({ baseURL: `${wrangler.url}/v1`, apiKey: "not-needed", maxRetries: 0 });
}, 120_000);
afterAll(() => stack?.stop());

async function allItems(id: string): Promise<OpenAI.Conversations.ConversationItem[]> {
  const items: OpenAI.Conversations.ConversationItem[] = [];
  for await (const item of client.conversations.items.list(id, { order: "asc", limit: 2 })) items.push(item);
  return items;
}

const userItem = (text: string) => ({ id: expect.stringMatching(/^msg_/), type: "message", status: "completed", role: "user", content: [{ type: "input_text", text }] });

describe("OpenAI conversations under wrangler dev (D1)", () => {
  it("keeps a conversation's items through a streamed and a plain response, items added and deleted, metadata, delete", async () => {
    const conversation = await client.conversations.create({ metadata: { topic: "weather" } });
    expect(conversation).toMatchObject({ id: expect.stringMatching(/^conv_/), object: "conversation", metadata: { topic: "weather" } });

    const stream = await client.responses.create({ model: "m", conversation: conversation.id, input: "Hello!", stream: true });
    let first: OpenAI.Responses.Response | undefined;
    for await (const event of stream) if (event.type === "response.completed") first = event.response;
    expect(first).toMatchObject({ status: "completed", output_text: CHAT_REPLY, conversation: { id: conversation.id } });
    expect(first?.usage?.input_tokens).toBe(await chatPromptTokens(sidecar.url, "Hello!"));

    const second = await client.responses.create({ model: "m", conversation: { id: conversation.id }, input: "And tomorrow?" });
    expect(second).toMatchObject({ status: "completed", output_text: CHAT_REPLY, conversation: { id: conversation.id } });
    expect(second.usage?.input_tokens).toBeGreaterThan((first?.usage?.input_tokens ?? 0) + (first?.usage?.output_tokens ?? 0));
    expect(second.usage?.input_tokens_details.cached_tokens).toBeGreaterThan(0);
    expect(await allItems(conversation.id)).toEqual([userItem("Hello!"), first?.output[0], userItem("And tomorrow?"), second.output[0]]);

    const added = await client.conversations.items.create(conversation.id, { items: [{ role: "user", content: "Thanks." }] });
    expect(added.data).toEqual([userItem("Thanks.")]);
    const { _request_id: _ignored, ...retrieved } = await client.conversations.items.retrieve(added.data[0]?.id ?? "", { conversation_id: conversation.id });
    expect(retrieved).toEqual(added.data[0]);
    await client.conversations.items.delete(added.data[0]?.id ?? "", { conversation_id: conversation.id });
    expect(await allItems(conversation.id)).toHaveLength(4);

    expect((await client.conversations.update(conversation.id, { metadata: { topic: "rain" } })).metadata).toEqual({ topic: "rain" });
    expect(await client.conversations.delete(conversation.id)).toMatchObject({ id: conversation.id, object: "conversation.deleted", deleted: true });
    expect(await client.conversations.retrieve(conversation.id).catch((e: unknown) => e)).toBeInstanceOf(OpenAI.NotFoundError);
    expect(await client.responses.create({ model: "m", conversation: conversation.id, input: "Hi" }).catch((e: unknown) => e)).toBeInstanceOf(OpenAI.NotFoundError);
  });
});
