// /c1/chat's turn handling against the fake sidecar and an in-memory SQLite store: what the
// sidecar is sent, a failed generation stores nothing, two turns racing on one conversation
// (the second to finish is refused and stores nothing), and the header on every answer.
import { Code } from "@connectrpc/connect";
import { afterEach, describe, expect, it } from "vitest";
import { openSqliteStore, type SqliteStore } from "../../edge/hosts/node/store.js";
import { Role } from "../../proto/gen/inference/v1/inference_pb.js";
import { get, post, sentChat, testApp } from "../support/app.js";
import { delay, fail, finish, start, token, type Step } from "../support/fake-sidecar.js";
import { readEvents } from "../support/sse.js";

let opened: SqliteStore | undefined;
afterEach(() => opened?.close());

function appWith(script: readonly Step[]) {
  opened = openSqliteStore(":memory:");
  let n = 0;
  return testApp(script, { store: opened.store, newId: () => `id${String(++n).padStart(22, "0")}` });
}

const hello = [start(), token("Hi"), finish("stop", { completionTokens: 1 })];

describe("POST /c1/chat", () => {
  it("sends the stored history before the new turn", async () => {
    const { app, sidecar } = appWith(hello);
    const id =
      (
        await post(app, "/c1/chat", {
          messages: [
            { role: "system", content: "Be brief." },
            { role: "user", content: "One" },
          ],
        })
      ).headers.get("x-conversation-id") ?? "";
    await post(
      app,
      "/c1/chat",
      { messages: [{ role: "user", content: "Two" }] },
      { headers: { "x-conversation-id": id } },
    );
    expect(sentChat(sidecar).messages.map((m) => [m.role, m.content])).toEqual([
      [Role.SYSTEM, "Be brief."],
      [Role.USER, "One"],
      [Role.ASSISTANT, "Hi"],
      [Role.USER, "Two"],
    ]);
  });

  it("stores nothing of a generation that fails mid-stream; the stream ends with its error", async () => {
    const { app, sidecar } = appWith(hello);
    const id =
      (await post(app, "/c1/chat", { messages: [{ role: "user", content: "One" }] })).headers.get(
        "x-conversation-id",
      ) ?? "";
    sidecar.script = [start(), token("Par"), fail(Code.Internal, "engine crashed")];
    const failed = await post(
      app,
      "/c1/chat",
      { messages: [{ role: "user", content: "Two" }], stream: true },
      { headers: { "x-conversation-id": id } },
    );
    expect(failed.headers.get("x-conversation-id")).toBe(id);
    const events = await readEvents(failed.body);
    expect(events.at(-1)?.event).toBe("error");
    expect(events.some((e) => e.data === "[DONE]")).toBe(false);
    const stored = (await (await get(app, `/c1/conversations/${id}`)).json()) as { message_count: number };
    expect(stored.message_count).toBe(2);
    // A new conversation whose first turn failed does not exist.
    const first = await post(app, "/c1/chat", { messages: [{ role: "user", content: "New" }] });
    expect(first.status).toBe(500);
    const newId = first.headers.get("x-conversation-id") ?? "";
    expect((await get(app, `/c1/conversations/${newId}`)).status).toBe(404);
  });

  it(
    "refuses the second of two turns racing on one conversation, JSON (409) and streamed (error event), storing " +
      "only the first",
    async () => {
      const { app, sidecar } = appWith(hello);
      const id =
        (await post(app, "/c1/chat", { messages: [{ role: "user", content: "One" }] })).headers.get(
          "x-conversation-id",
        ) ?? "";
      const headers = { "x-conversation-id": id };
      sidecar.script = (request) => {
        const chat = request.input.case === "chat" ? request.input.value : undefined;
        const slow = chat?.messages.at(-1)?.content === "slow";
        return [
          start(),
          token(slow ? "late" : "early"),
          ...(slow ? [delay(150)] : []),
          finish("stop", { completionTokens: 1 }),
        ];
      };
      const [late, early] = await Promise.all([
        post(app, "/c1/chat", { messages: [{ role: "user", content: "slow" }] }, { headers }),
        post(app, "/c1/chat", { messages: [{ role: "user", content: "fast" }] }, { headers }),
      ]);
      expect(early.status).toBe(200);
      expect([late.status, ((await late.json()) as { error: { code: string } }).error.code]).toEqual([
        409,
        "conversation_conflict",
      ]);
      const lateStream = post(
        app,
        "/c1/chat",
        { messages: [{ role: "user", content: "slow" }], stream: true },
        { headers },
      );
      await new Promise((r) => setTimeout(r, 20));
      await (await post(app, "/c1/chat", { messages: [{ role: "user", content: "fast" }] }, { headers })).arrayBuffer();
      const events = await readEvents((await lateStream).body);
      expect(events.at(-1)?.event).toBe("error");
      expect(JSON.parse(events.at(-1)?.data ?? "{}")).toMatchObject({
        error: { type: "server_error", message: expect.stringContaining("this turn was not stored") },
      });
      const stored = (await (await get(app, `/c1/conversations/${id}`)).json()) as { messages: { content: string }[] };
      expect(stored.messages.map((m) => m.content)).toEqual(["One", "Hi", "fast", "early", "fast", "early"]);
    },
  );

  it("refuses a header and a conversation_id that disagree", async () => {
    const { app } = appWith(hello);
    const response = await post(
      app,
      "/c1/chat",
      { conversation_id: "conv_a", messages: [{ role: "user", content: "x" }] },
      { headers: { "x-conversation-id": "conv_b" } },
    );
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { param: string } }).error.param).toBe("conversation_id");
  });
});
