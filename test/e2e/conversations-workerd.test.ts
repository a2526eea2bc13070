// /c1 under workerd (`wrangler dev` with the D1 binding, migrations/ applied to its local
// database first, as `npm start` does) in front of a real sidecar and the scripted model.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningSidecar } from "../../sidecar/server.js";
import { checkChatStream } from "../support/contract.js";
import { CHAT_REPLY } from "../support/scripted.js";
import { startTestSidecar } from "../support/sidecar.js";
import { readEvents } from "../support/sse.js";
import { startWrangler, type Wrangler } from "../support/wrangler.js";

let sidecar: RunningSidecar;
let wrangler: Wrangler;
beforeAll(async () => {
  sidecar = await startTestSidecar({ sequences: 2, contextSize: 1024 });
  wrangler = await startWrangler({ SIDECAR_URL: sidecar.url });
}, 120_000);
afterAll(async () => {
  await wrangler?.stop();
  await sidecar?.stop();
});

function chat(body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${wrangler.url}/c1/chat`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify({ model: "m", ...body }) });
}

const reply = { role: "assistant", content: CHAT_REPLY };

describe("/c1 under wrangler dev (D1)", () => {
  it("keeps a two-turn conversation, streamed then not, and lists, reads and deletes it", async () => {
    const first = await chat({ messages: [{ role: "user", content: "Hello!" }], stream: true });
    expect(first.status).toBe(200);
    const id = first.headers.get("x-conversation-id") ?? "";
    expect(id).toMatch(/^conv_[0-9A-Za-z]{24}$/);
    const one = checkChatStream(await readEvents(first.body));
    expect([one.text, one.finishReason, one.done]).toEqual([CHAT_REPLY, "stop", true]);

    const second = await chat({ messages: [{ role: "user", content: "And tomorrow?" }] }, { "x-conversation-id": id });
    expect(second.headers.get("x-conversation-id")).toBe(id);
    const two = (await second.json()) as { choices: { message: unknown }[]; usage: { prompt_tokens_details: { cached_tokens: number } } };
    expect(two.choices[0]?.message).toEqual({ ...reply, refusal: null });
    expect(two.usage.prompt_tokens_details.cached_tokens).toBeGreaterThan(0);

    const stored = (await (await fetch(`${wrangler.url}/c1/conversations/${id}`)).json()) as Record<string, unknown>;
    expect(stored).toEqual({
      id,
      object: "conversation",
      created_at: expect.any(Number),
      updated_at: expect.any(Number),
      message_count: 4,
      messages: [{ role: "user", content: "Hello!" }, reply, { role: "user", content: "And tomorrow?" }, reply],
    });
    const list = (await (await fetch(`${wrangler.url}/c1/conversations`)).json()) as { data: { id: string }[] };
    expect(list.data.map((c) => c.id)).toEqual([id]);
    const deleted = await fetch(`${wrangler.url}/c1/conversations/${id}`, { method: "DELETE" });
    expect(await deleted.json()).toEqual({ id, object: "conversation.deleted", deleted: true });
    expect((await fetch(`${wrangler.url}/c1/conversations/${id}`)).status).toBe(404);
  });
});
