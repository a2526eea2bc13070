// The store's OpenAI conversations (migrations/0003_item_conversations.sql), run against both
// drivers: items kept in order with their ids, appends whole or not at all, metadata, deletion,
// and each owner's conversations hidden from every other owner.
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import type { Stores } from "../../edge/state/stores.js";
import { storeDrivers } from "../support/store-drivers.js";

const drivers = storeDrivers();
afterAll(() => drivers.close());

const message = (id: string, text: string) => ({
  id,
  type: "message",
  status: "completed",
  role: "user",
  content: [{ type: "input_text", text }],
});
const call = {
  id: "fc_1",
  type: "function_call",
  status: "completed",
  call_id: "call_1",
  name: "get_weather",
  arguments: '{"city":"Tokyo"}',
};

describe.each(["d1", "sqlite"] as const)("OpenAI conversations in the store on %s", (name) => {
  let store: Stores;
  beforeEach(async () => {
    store = await drivers.open[name]();
  }, 30_000);

  const created = {
    id: "conv_1",
    owner: "key-a",
    createdAt: 1_700_000_000_000,
    metadata: { topic: "weather" },
    items: [message("msg_1", "Hi"), call],
  };

  it("keeps a conversation with its first items in order, then appends at the end", async () => {
    await store.conversations.createConversation(created);
    expect(await store.conversations.getConversation("key-a", "conv_1")).toEqual({
      id: "conv_1",
      createdAt: 1_700_000_000_000,
      metadata: { topic: "weather" },
    });
    expect(await store.conversations.conversationItems("key-a", "conv_1")).toEqual([message("msg_1", "Hi"), call]);
    expect(
      await store.conversations.appendConversationItems("key-a", "conv_1", [
        message("msg_2", "And then?"),
        message("msg_3", "Sunny."),
      ]),
    ).toBe(true);
    expect((await store.conversations.conversationItems("key-a", "conv_1"))?.map((item) => item["id"])).toEqual([
      "msg_1",
      "fc_1",
      "msg_2",
      "msg_3",
    ]);
    // An empty conversation, then its first append.
    await store.conversations.createConversation({ ...created, id: "conv_2", metadata: {}, items: [] });
    expect(await store.conversations.conversationItems("key-a", "conv_2")).toEqual([]);
    expect(await store.conversations.appendConversationItems("key-a", "conv_2", [message("msg_4", "x")])).toBe(true);
    expect(await store.conversations.conversationItems("key-a", "conv_2")).toEqual([message("msg_4", "x")]);
  });

  it("replaces the metadata; deletes one item, leaving the others in order; appends after a deleted item", async () => {
    await store.conversations.createConversation(created);
    expect(await store.conversations.updateConversation("key-a", "conv_1", { topic: "rain", lang: "en" })).toEqual({
      id: "conv_1",
      createdAt: 1_700_000_000_000,
      metadata: { topic: "rain", lang: "en" },
    });
    expect(await store.conversations.deleteConversationItem("key-a", "conv_1", "msg_1")).toBe(true);
    expect(await store.conversations.deleteConversationItem("key-a", "conv_1", "msg_1")).toBe(false);
    expect(await store.conversations.appendConversationItems("key-a", "conv_1", [message("msg_2", "Later")])).toBe(
      true,
    );
    expect(await store.conversations.conversationItems("key-a", "conv_1")).toEqual([call, message("msg_2", "Later")]);
  });

  it("hides a conversation from every other owner: nothing read, changed, appended or deleted", async () => {
    await store.conversations.createConversation(created);
    expect(await store.conversations.getConversation("key-b", "conv_1")).toBeUndefined();
    expect(await store.conversations.conversationItems("key-b", "conv_1")).toBeUndefined();
    expect(await store.conversations.updateConversation("key-b", "conv_1", {})).toBeUndefined();
    expect(await store.conversations.appendConversationItems("key-b", "conv_1", [message("msg_9", "x")])).toBe(false);
    expect(await store.conversations.deleteConversationItem("key-b", "conv_1", "msg_1")).toBe(false);
    expect(await store.conversations.deleteConversation("key-b", "conv_1")).toBe(false);
    expect(await store.responses.getItem("key-b", "msg_1")).toBeUndefined();
    expect(await store.responses.getItem("key-a", "msg_1")).toEqual(message("msg_1", "Hi"));
    expect(await store.conversations.getConversation("key-a", "conv_1")).toMatchObject({
      metadata: { topic: "weather" },
    });
    expect(await store.conversations.conversationItems("key-a", "conv_1")).toEqual([message("msg_1", "Hi"), call]);
  });

  it("deletes a conversation with its items; appending to it afterwards stores nothing", async () => {
    await store.conversations.createConversation(created);
    expect(await store.conversations.deleteConversation("key-a", "conv_1")).toBe(true);
    expect(await store.conversations.getConversation("key-a", "conv_1")).toBeUndefined();
    expect(await store.conversations.appendConversationItems("key-a", "conv_1", [message("msg_2", "x")])).toBe(false);
    expect(await store.responses.getItem("key-a", "msg_1")).toBeUndefined();
    expect(await store.conversations.deleteConversation("key-a", "conv_1")).toBe(false);
    // Recreated under the same id, it starts with its own items only.
    await store.conversations.createConversation({ ...created, items: [] });
    expect(await store.conversations.conversationItems("key-a", "conv_1")).toEqual([]);
  });

  it("creates nothing when the id is taken", async () => {
    await store.conversations.createConversation(created);
    await expect(
      store.conversations.createConversation({ ...created, metadata: {}, items: [message("msg_new", "x")] }),
    ).rejects.toThrow(/constraint/i);
    expect(await store.conversations.conversationItems("key-a", "conv_1")).toEqual([message("msg_1", "Hi"), call]);
    expect(await store.conversations.getConversation("key-a", "conv_1")).toMatchObject({
      metadata: { topic: "weather" },
    });
  });
});
