// A busy sidecar is passed over, not marked down: two real sidecars of the scripted model with one
// sequence and no queue each. While A's sequence sings (a generation called on A directly), a /c1
// turn whose conversation lives on A is refused by A (RESOURCE_EXHAUSTED) before any token and is
// answered by C with the exact reply; A stays up, and once free it gets the conversation back.
import { afterAll, beforeAll, expect, it } from "vitest";
import { startNodeEdge, type RunningEdge } from "../../edge/hosts/node/main.js";
import type { RunningSidecar } from "../../sidecar/start-sidecar.js";
import { CHAT_REPLY } from "../support/scripted.js";
import { clientsFor, startTestSidecar } from "../support/sidecar.js";

let a: RunningSidecar;
let c: RunningSidecar;
let edge: RunningEdge;
beforeAll(async () => {
  [a, c] = [
    await startTestSidecar({ modelId: "scripted", sequences: 1, maxQueue: 0 }),
    await startTestSidecar({ modelId: "scripted", sequences: 1, maxQueue: 0 }),
  ];
  edge = await startNodeEdge({ sidecarUrls: [a.url, c.url], port: 0 });
}, 120_000);
afterAll(async () => {
  await edge?.close();
  await a?.stop();
  await c?.stop();
});

async function turn(
  conversationId: string | undefined,
  content: string,
): Promise<{ id: string; text: string; on: "A" | "C" }> {
  const before = [a.metrics.requestsStarted, c.metrics.requestsStarted];
  const response = await fetch(`${edge.url}/c1/chat`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      model: "scripted",
      messages: [{ role: "user", content }],
      ...(conversationId === undefined ? {} : { conversation_id: conversationId }),
    }),
  });
  expect(response.status).toBe(200);
  const body = (await response.json()) as { choices: { message: { content: string } }[] };
  const moved = [a.metrics.requestsStarted - (before[0] ?? 0), c.metrics.requestsStarted - (before[1] ?? 0)];
  expect(moved.sort()).toEqual([0, 1]);
  return {
    id: response.headers.get("x-conversation-id") ?? "",
    text: body.choices[0]?.message.content ?? "",
    on: a.metrics.requestsStarted > (before[0] ?? 0) ? "A" : "C",
  };
}

it("passes a busy sidecar over before the first token, without marking it down", async () => {
  let onA: string | undefined;
  for (let i = 0; i < 24 && onA === undefined; i++) {
    const first = await turn(undefined, `Looking for A, try ${i}.`);
    if (first.on === "A") onA = first.id;
  }
  expect(onA).toBeDefined();

  // A's only sequence sings until the call is cancelled.
  const hold = new AbortController();
  const singing = (async () => {
    for await (const event of clientsFor(a.url).grpc.generate(
      { input: { case: "prompt", value: "Let us sing. Sing" }, maxTokens: 4000 },
      { signal: hold.signal },
    )) {
      if (event.event.case === "finish") break;
    }
  })().catch(() => undefined);
  await expect.poll(() => a.metrics.generationsActive, { timeout: 5000 }).toBe(1);

  const busy = await turn(onA, "Are you busy?");
  expect(busy).toEqual({ id: onA, text: CHAT_REPLY, on: "C" });
  const info = (await (await fetch(`${edge.url}/v1/info`)).json()) as {
    sidecars: { status: string; requests: { busy: number } }[];
  };
  expect(info.sidecars.map((s) => [s.status, s.requests.busy])).toEqual([
    ["ok", 1],
    ["ok", 0],
  ]);

  hold.abort();
  await singing;
  await expect.poll(() => a.metrics.generationsActive, { timeout: 5000 }).toBe(0);
  expect(await turn(onA, "And now?")).toEqual({ id: onA, text: CHAT_REPLY, on: "A" });
});
