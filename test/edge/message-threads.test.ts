// Anthropic message threads in the edge alone (a fake sidecar, the SQLite store in memory): what
// the sidecar is sent on a continue (the thread's system, tools and messages, then the new turn),
// what a failed reply stores (nothing), and the refusal of a server without a store.
import { Code } from "@connectrpc/connect";
import { afterEach, describe, expect, it } from "vitest";
import { openSqliteStore, type SqliteStore } from "../../edge/hosts/node/store.js";
import { Role } from "../../proto/gen/inference/v1/inference_pb.js";
import { post, sentChat, testApp } from "../support/app.js";
import { fail, finish, start, token, toolCall, type Step } from "../support/fake-sidecar.js";

const PATH = "/v1/messages";
const reply = (text: string): Step[] => [
  start("m", 9, 0),
  token(text),
  finish("stop", { promptTokens: 9, completionTokens: 1 }),
];
const tools = [
  {
    name: "get_weather",
    description: "Weather",
    input_schema: { type: "object", properties: { city: { type: "string" } } },
  },
];

let opened: SqliteStore | undefined;
afterEach(() => opened?.close());

function threadApp(script: (call: number) => readonly Step[]) {
  opened = openSqliteStore(":memory:");
  const ids: string[] = [];
  let calls = 0;
  const newId = (): string => {
    ids.push(`id${ids.length + 1}`);
    return ids.at(-1) ?? "";
  };
  return { ...testApp(() => script(calls++), { store: opened.store, newId }), ids };
}

describe("a thread continued", () => {
  it("stores no breakpoints: a continue's cache marks are its own turn's, however many earlier turns had", async () => {
    const { app, sidecar } = threadApp(() => reply("Sunny."));
    const marked = (text: string) => ({ type: "text", text, cache_control: { type: "ephemeral" } });
    const fourMarked = (text: string) => ({ role: "user", content: [1, 2, 3, 4].map((n) => marked(`${text} ${n}`)) });
    const created = await post(app, PATH, {
      model: "m",
      max_tokens: 16,
      system: "Be brief.",
      messages: [fourMarked("Weather?")],
      thread: { type: "create" },
    });
    expect(created.status).toBe(200);
    expect(sidecar.lastCall?.request.cacheMarks.map((m) => m.messages)).toEqual([2]);
    const first = (await created.json()) as { id: string };
    const continued = await post(app, PATH, {
      model: "m",
      max_tokens: 16,
      messages: [fourMarked("And tomorrow?")],
      thread: { type: "continue", previous_message_id: first.id },
    });
    expect(continued.status).toBe(200);
    // Chat: system, user, assistant, user: the new turn's four breakpoints end at its message.
    expect(sidecar.lastCall?.request.cacheMarks.map((m) => m.messages)).toEqual([4]);
  });

  it("sends the sidecar the thread's system and tools, its messages and the new turn's", async () => {
    const { app, sidecar } = threadApp((call) =>
      call === 0
        ? [
            start("m", 9, 0),
            ...toolCall(0, "call_1", "get_weather", ['{"city":"Tokyo"}']),
            finish("tool_calls", { promptTokens: 9, completionTokens: 3 }),
          ]
        : reply("Sunny."),
    );
    const created = await post(app, PATH, {
      model: "m",
      max_tokens: 16,
      system: "Be brief.",
      tools,
      messages: [{ role: "user", content: "Weather?" }],
      thread: { type: "create" },
    });
    expect(created.status).toBe(200);
    const first = (await created.json()) as { id: string; content: unknown[] };
    expect(first.content).toEqual([{ type: "tool_use", id: "call_1", name: "get_weather", input: { city: "Tokyo" } }]);

    const result = { role: "user", content: [{ type: "tool_result", tool_use_id: "call_1", content: "22°C" }] };
    const continued = await post(app, PATH, {
      model: "m",
      max_tokens: 16,
      messages: [result],
      thread: { type: "continue", previous_message_id: first.id },
    });
    expect(continued.status).toBe(200);
    const chat = sentChat(sidecar);
    expect(chat.messages.map((m) => [m.role, m.content, m.toolCalls.map((c) => c.id), m.toolCallId])).toEqual([
      [Role.SYSTEM, "Be brief.", [], ""],
      [Role.USER, "Weather?", [], ""],
      [Role.ASSISTANT, "", ["call_1"], ""],
      [Role.TOOL, "22°C", [], "call_1"],
    ]);
    expect(chat.tools.map((t) => [t.name, t.description])).toEqual([["get_weather", "Weather"]]);
  });

  it("stores nothing of a reply that failed, streamed or not: no id but the first continues anything", async () => {
    for (const stream of [false, true]) {
      const { app, ids } = threadApp((call) =>
        call === 0 ? reply("Hi.") : [start("m", 9, 0), token("Par"), fail(Code.Internal, "engine died")],
      );
      const first = (await (
        await post(app, PATH, {
          model: "m",
          max_tokens: 16,
          messages: [{ role: "user", content: "Hi" }],
          thread: { type: "create" },
        })
      ).json()) as { id: string };
      const failed = await post(app, PATH, {
        model: "m",
        max_tokens: 16,
        stream,
        messages: [{ role: "user", content: "More" }],
        thread: { type: "continue", previous_message_id: first.id },
      });
      // A stream's status is sent before the failure: its end is an error event.
      expect(stream ? await failed.text() : String(failed.status)).toMatch(
        stream ? /event: error\ndata: \{"type":"error","error":\{"type":"api_error"/ : /^500$/,
      );
      const threads = await Promise.all(
        ids.map(async (id) => [`msg_${id}`, await opened?.store.threads.getThread("anonymous", `msg_${id}`)] as const),
      );
      expect(threads.filter(([, thread]) => thread !== undefined)).toEqual([
        [
          first.id,
          {
            fixed: { system: null, tools: null },
            messages: [
              { role: "user", content: "Hi" },
              { role: "assistant", content: [{ type: "text", text: "Hi." }] },
            ],
          },
        ],
      ]);
      opened?.close();
    }
  });
});

describe("without a store", () => {
  it(
    "refuses as the API refuses what it cannot thread, before the sidecar is called: create 400, continue " + "404",
    async () => {
      const { app, sidecar } = testApp(reply("Hi."));
      const create = await post(app, PATH, {
        model: "m",
        max_tokens: 8,
        messages: [{ role: "user", content: "Hi" }],
        thread: { type: "create" },
      });
      expect(create.status).toBe(400);
      expect(await create.json()).toEqual({
        type: "error",
        error: {
          type: "invalid_request_error",
          message: "This server does not keep message threads; send the whole conversation in 'messages'.",
          details: { error_code: "thread_unsupported_request", unsupported: ["thread"] },
        },
      });
      const cont = await post(app, PATH, {
        model: "m",
        max_tokens: 8,
        messages: [{ role: "user", content: "Hi" }],
        thread: { type: "continue", previous_message_id: "msg_x" },
      });
      expect(cont.status).toBe(404);
      expect(await cont.json()).toMatchObject({
        type: "error",
        error: { type: "not_found_error", details: { error_code: "thread_not_found" } },
      });
      expect(sidecar.calls).toHaveLength(0);
    },
  );
});
