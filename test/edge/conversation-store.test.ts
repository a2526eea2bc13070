// The conversation store's contract, run against both drivers: D1 (miniflare's, real SQLite under
// workerd's D1 API) and SQLite on Node (better-sqlite3 in a temporary file). The tables come from
// migrations/, applied as each runtime applies them.
import Database from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { migrate, openSqliteStore } from "../../edge/hosts/node/store.js";
import { TurnConflictError } from "../../edge/state/c1/store.js";
import type { Stores } from "../../edge/state/stores.js";
import { storeDrivers } from "../support/store-drivers.js";

const drivers = storeDrivers();
afterAll(() => drivers.close());
const dir = mkdtempSync(join(tmpdir(), "llm-edge-migrate-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const user = (content: string) => ({ role: "user", content });
const assistant = (content: string) => ({ role: "assistant", content });

describe.each(Object.keys(drivers.open))("the conversation store on %s", (name) => {
  let store: Stores;
  beforeEach(async () => {
    store = await drivers.open[name as "d1" | "sqlite"]();
  }, 30_000);

  it("keeps turns in order, with their times and count", async () => {
    await store.c1.commit({
      owner: "key_a",
      conversationId: "conv_1",
      base: 0,
      messages: [user("hi"), assistant("hello")],
      at: 1000,
    });
    const call = {
      role: "assistant",
      content: null,
      tool_calls: [{ id: "call_1", type: "function", function: { name: "f", arguments: "{}" } }],
      reasoning_content: "r",
    };
    await store.c1.commit({
      owner: "key_a",
      conversationId: "conv_1",
      base: 2,
      messages: [user("again"), call],
      at: 2000,
    });
    expect(await store.c1.get("key_a", "conv_1")).toEqual({
      id: "conv_1",
      createdAt: 1000,
      updatedAt: 2000,
      messageCount: 4,
      messages: [user("hi"), assistant("hello"), user("again"), call],
    });
  });

  it("hides a conversation from every other owner: get, list and delete find nothing", async () => {
    await store.c1.commit({ owner: "key_a", conversationId: "conv_1", base: 0, messages: [user("hi")], at: 1000 });
    expect(await store.c1.get("key_b", "conv_1")).toBeUndefined();
    expect(await store.c1.list("key_b", { limit: 10 })).toEqual({ items: [], hasMore: false });
    expect(await store.c1.delete("key_b", "conv_1")).toBe(false);
    await expect(
      store.c1.commit({ owner: "key_b", conversationId: "conv_1", base: 1, messages: [user("x")], at: 2000 }),
    ).rejects.toBeInstanceOf(TurnConflictError);
    expect((await store.c1.get("key_a", "conv_1"))?.messages).toEqual([user("hi")]);
  });

  it("lists newest first, a page at a time, from the id the last page ended with", async () => {
    for (const [i, at] of [1000, 3000, 2000, 3000].entries()) {
      await store.c1.commit({ owner: "key_a", conversationId: `conv_${i}`, base: 0, messages: [user(String(i))], at });
    }
    const first = await store.c1.list("key_a", { limit: 2 });
    expect(first).toEqual({
      items: [
        { id: "conv_3", createdAt: 3000, updatedAt: 3000, messageCount: 1 },
        { id: "conv_1", createdAt: 3000, updatedAt: 3000, messageCount: 1 },
      ],
      hasMore: true,
    });
    const second = await store.c1.list("key_a", { limit: 2, after: "conv_1" });
    expect(second?.items.map((c) => c.id)).toEqual(["conv_2", "conv_0"]);
    expect(second?.hasMore).toBe(false);
    expect(await store.c1.list("key_a", { limit: 2, after: "conv_unknown" })).toBeUndefined();
    expect(await store.c1.list("key_b", { limit: 2, after: "conv_1" })).toBeUndefined();
  });

  it("commits a turn whole or not at all: one that raced another changes nothing", async () => {
    await store.c1.commit({
      owner: "key_a",
      conversationId: "conv_1",
      base: 0,
      messages: [user("hi"), assistant("hello")],
      at: 1000,
    });
    await store.c1.commit({
      owner: "key_a",
      conversationId: "conv_1",
      base: 2,
      messages: [user("first"), assistant("one")],
      at: 2000,
    });
    // A turn that began when the conversation had 2 messages, finishing after another turn.
    await expect(
      store.c1.commit({
        owner: "key_a",
        conversationId: "conv_1",
        base: 2,
        messages: [user("late"), assistant("two"), user("x")],
        at: 3000,
      }),
    ).rejects.toBeInstanceOf(TurnConflictError);
    // A conversation id taken already.
    await expect(
      store.c1.commit({ owner: "key_a", conversationId: "conv_1", base: 0, messages: [user("new")], at: 3000 }),
    ).rejects.toBeInstanceOf(TurnConflictError);
    expect(await store.c1.get("key_a", "conv_1")).toMatchObject({
      updatedAt: 2000,
      messageCount: 4,
      messages: [user("hi"), assistant("hello"), user("first"), assistant("one")],
    });
  });

  it("deletes a conversation with its messages; a turn on a deleted conversation is refused", async () => {
    await store.c1.commit({
      owner: "key_a",
      conversationId: "conv_1",
      base: 0,
      messages: [user("hi"), assistant("hello")],
      at: 1000,
    });
    expect(await store.c1.delete("key_a", "conv_1")).toBe(true);
    expect(await store.c1.get("key_a", "conv_1")).toBeUndefined();
    expect(await store.c1.delete("key_a", "conv_1")).toBe(false);
    await expect(
      store.c1.commit({ owner: "key_a", conversationId: "conv_1", base: 2, messages: [user("x")], at: 2000 }),
    ).rejects.toBeInstanceOf(TurnConflictError);
    // Recreated under the same id, it starts empty: no message of the deleted one comes back.
    await store.c1.commit({ owner: "key_a", conversationId: "conv_1", base: 0, messages: [user("new")], at: 3000 });
    expect((await store.c1.get("key_a", "conv_1"))?.messages).toEqual([user("new")]);
  });
});

describe.each(Object.keys(drivers.open))("stored responses on %s", (name) => {
  let store: Stores;
  beforeEach(async () => {
    store = await drivers.open[name as "d1" | "sqlite"]();
  }, 30_000);

  const input = { id: "msg_in1", type: "message", role: "user", content: [{ type: "input_text", text: "Hi" }] };
  const output = {
    id: "msg_out1",
    type: "message",
    status: "completed",
    role: "assistant",
    content: [{ type: "output_text", text: "Hello", annotations: [], logprobs: [] }],
  };
  const stored = {
    id: "resp_1",
    owner: "key-a",
    createdAt: 1_700_000_000_000,
    response: { id: "resp_1", object: "response", output: [output] },
    inputItems: [input],
    context: [input],
  };

  it("keeps a response whole, for its owner only", async () => {
    await store.responses.putResponse(stored);
    expect(await store.responses.getResponse("key-a", "resp_1")).toEqual(stored);
    expect(await store.responses.getResponse("key-b", "resp_1")).toBeUndefined();
    expect(await store.responses.getResponse("key-a", "resp_2")).toBeUndefined();
  });

  it("finds its input and output items by id, for its owner only", async () => {
    await store.responses.putResponse(stored);
    expect(await store.responses.getItem("key-a", "msg_in1")).toEqual(input);
    expect(await store.responses.getItem("key-a", "msg_out1")).toEqual(output);
    expect(await store.responses.getItem("key-b", "msg_out1")).toBeUndefined();
  });

  it("deletes a response and its items; another owner deletes nothing", async () => {
    await store.responses.putResponse(stored);
    expect(await store.responses.deleteResponse("key-b", "resp_1")).toBe(false);
    expect(await store.responses.getItem("key-a", "msg_out1")).toEqual(output);
    expect(await store.responses.deleteResponse("key-a", "resp_1")).toBe(true);
    expect(await store.responses.getResponse("key-a", "resp_1")).toBeUndefined();
    expect(await store.responses.getItem("key-a", "msg_out1")).toBeUndefined();
    expect(await store.responses.deleteResponse("key-a", "resp_1")).toBe(false);
  });

  it("stores nothing when a response's id is taken", async () => {
    await store.responses.putResponse(stored);
    const again = { ...stored, response: { id: "resp_1", output: [{ ...output, id: "msg_out2" }] } };
    await expect(store.responses.putResponse(again)).rejects.toThrow(/constraint/i);
    expect(await store.responses.getItem("key-a", "msg_out2")).toBeUndefined();
    expect(await store.responses.getResponse("key-a", "resp_1")).toEqual(stored);
  });
});

describe.each(Object.keys(drivers.open))("message threads on %s", (name) => {
  let store: Stores;
  beforeEach(async () => {
    store = await drivers.open[name as "d1" | "sqlite"]();
  }, 30_000);

  const fixed = { system: "Be brief.", tools: [{ name: "f", input_schema: { type: "object" } }] };
  const reply = (text: string) => ({ role: "assistant", content: [{ type: "text", text }] });
  const create = {
    id: "msg_1",
    owner: "key-a",
    parent: null,
    createdAt: 1000,
    fixed,
    messages: [user("hi"), reply("hello")],
  };

  it(
    "reads a thread back from any of its replies: what its first turn fixed, every message up to that " + "reply",
    async () => {
      await store.threads.putThreadTurn(create);
      await store.threads.putThreadTurn({
        id: "msg_2",
        owner: "key-a",
        parent: "msg_1",
        createdAt: 2000,
        messages: [user("again"), reply("once more")],
      });
      await store.threads.putThreadTurn({
        id: "msg_3",
        owner: "key-a",
        parent: "msg_2",
        createdAt: 3000,
        messages: [user("last"), reply("done")],
      });
      expect(await store.threads.getThread("key-a", "msg_3")).toEqual({
        fixed,
        messages: [user("hi"), reply("hello"), user("again"), reply("once more"), user("last"), reply("done")],
      });
      expect(await store.threads.getThread("key-a", "msg_1")).toEqual({
        fixed,
        messages: [user("hi"), reply("hello")],
      });
      // A reply continued twice branches: each continuation reads its own history.
      await store.threads.putThreadTurn({
        id: "msg_2b",
        owner: "key-a",
        parent: "msg_1",
        createdAt: 4000,
        messages: [user("other"), reply("branch")],
      });
      expect((await store.threads.getThread("key-a", "msg_2b"))?.messages).toEqual([
        user("hi"),
        reply("hello"),
        user("other"),
        reply("branch"),
      ]);
    },
  );

  it("finds nothing for an unknown id, another owner's, or a turn whose chain does not reach its first", async () => {
    await store.threads.putThreadTurn(create);
    expect(await store.threads.getThread("key-a", "msg_x")).toBeUndefined();
    expect(await store.threads.getThread("key-b", "msg_1")).toBeUndefined();
    await store.threads.putThreadTurn({
      id: "msg_orphan",
      owner: "key-a",
      parent: "msg_gone",
      createdAt: 2000,
      messages: [user("x"), reply("y")],
    });
    expect(await store.threads.getThread("key-a", "msg_orphan")).toBeUndefined();
  });

  it("stores nothing when a turn's id is taken", async () => {
    await store.threads.putThreadTurn(create);
    await expect(store.threads.putThreadTurn({ ...create, messages: [user("other")] })).rejects.toThrow(/constraint/i);
    expect(await store.threads.getThread("key-a", "msg_1")).toEqual({ fixed, messages: [user("hi"), reply("hello")] });
  });
});

describe("migrations on Node", () => {
  it("are applied once, recorded as wrangler records them, and kept across reopening", () => {
    const path = join(dir, "migrate.sqlite");
    const db = new Database(path);
    expect(migrate(db)).toEqual([
      "0001_conversations.sql",
      "0002_responses.sql",
      "0003_item_conversations.sql",
      "0004_message_threads.sql",
      "0005_batches.sql",
    ]);
    expect(migrate(db)).toEqual([]);
    expect(db.prepare("SELECT name FROM d1_migrations").all()).toEqual([
      { name: "0001_conversations.sql" },
      { name: "0002_responses.sql" },
      { name: "0003_item_conversations.sql" },
      { name: "0004_message_threads.sql" },
      { name: "0005_batches.sql" },
    ]);
    db.close();
    const reopened = openSqliteStore(path);
    reopened.close();
  });
});
