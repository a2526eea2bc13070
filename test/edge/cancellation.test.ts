// docs/decisions.md, "Cancellation chain": client disconnect → request.signal → abort of the sidecar call. The
// fake sidecar records the signal the edge passed to Generate.
import { request as httpRequest } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { createApp } from "../../edge/http/app.js";
import { startNodeEdge, type RunningEdge } from "../../edge/node.js";
import { BASE, testApp } from "../support/app.js";
import { delay, FakeSidecar, finish, start, token, type Step } from "../support/fake-sidecar.js";

const slow: Step[] = [start(), token("one"), delay(60_000), token("two"), finish()];
const chat = { messages: [{ role: "user", content: "Hello!" }], stream: true };

function until(predicate: () => boolean, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const tick = () => {
      if (predicate()) resolve();
      else if (Date.now() > deadline) reject(new Error("condition not reached in time"));
      else setTimeout(tick, 5);
    };
    tick();
  });
}

function chatRequest(body: unknown, signal?: AbortSignal): Request {
  return new Request(`${BASE}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
    ...(signal === undefined ? {} : { signal }),
  });
}

describe("cancellation reaches the sidecar call", () => {
  it("aborting the client's request mid-stream aborts the signal the sidecar got", async () => {
    const { app, sidecar } = testApp(slow);
    const client = new AbortController();
    const response = await app.fetch(chatRequest(chat, client.signal));
    const reader = response.body!.getReader();
    await reader.read(); // role frame
    await reader.read(); // "one"
    const signal = sidecar.lastCall?.signal;
    expect(signal?.aborted).toBe(false);
    client.abort();
    await until(() => signal?.aborted === true);
    // the stream ends quietly: no error event for a client that left
    let rest = "";
    for (;;) {
      const { done, value } = await reader.read().catch(() => ({ done: true, value: undefined }));
      if (done) break;
      rest += new TextDecoder().decode(value);
    }
    expect(rest).toBe("");
  });

  it("cancelling the response body (Node's way of saying the client left) aborts it too", async () => {
    const { app, sidecar } = testApp(slow);
    const response = await app.fetch(chatRequest(chat));
    const reader = response.body!.getReader();
    await reader.read();
    await reader.cancel("client went away");
    await until(() => sidecar.lastCall?.signal?.aborted === true);
  });

  it("aborting while waiting for `start` aborts it", async () => {
    const { app, sidecar } = testApp([delay(60_000), start(), finish()]);
    const client = new AbortController();
    const pending = app.fetch(chatRequest(chat, client.signal));
    await until(() => sidecar.calls.length === 1);
    client.abort();
    await until(() => sidecar.lastCall?.signal?.aborted === true);
    await pending; // settles (with an error response nobody reads)
  });

  it("aborting a non-streaming request aborts it", async () => {
    const { app, sidecar } = testApp(slow);
    const client = new AbortController();
    const pending = app.fetch(chatRequest({ ...chat, stream: false }, client.signal));
    await until(() => sidecar.stepsRun >= 3);
    client.abort();
    await until(() => sidecar.lastCall?.signal?.aborted === true);
    await pending;
  });

  it("a finished stream does not abort anything", async () => {
    const { app, sidecar } = testApp();
    const response = await app.fetch(chatRequest(chat));
    await response.text();
    expect(sidecar.lastCall?.signal?.aborted).toBe(false);
  });
});

describe("backpressure", () => {
  it("reads from the sidecar only as fast as the client reads", async () => {
    const many: Step[] = [start(), ...Array.from({ length: 1000 }, (_, i) => token(`t${i} `)), finish()];
    const { app, sidecar } = testApp(many);
    const response = await app.fetch(chatRequest(chat));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(sidecar.stepsRun).toBe(1); // only `start`, awaited before the response
    const reader = response.body!.getReader();
    await reader.read();
    await reader.read();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(sidecar.stepsRun).toBeLessThanOrEqual(3);
    await reader.cancel();
  });
});

describe("on Node (@hono/node-server)", () => {
  let edge: RunningEdge | undefined;
  afterEach(async () => {
    await edge?.close();
    edge = undefined;
  });

  it("a client that disconnects mid-stream aborts the sidecar call", async () => {
    const sidecar = new FakeSidecar(slow);
    edge = await startNodeEdge({ sidecar, port: 0, onUnexpectedError: () => undefined });
    const url = new URL("/v1/chat/completions", edge.url);
    const firstBytes = await new Promise<string>((resolve, reject) => {
      const req = httpRequest(url, { method: "POST", headers: { "content-type": "application/json" } }, (res) => {
        res.once("data", (chunk: Buffer) => {
          resolve(chunk.toString("utf8"));
          req.destroy(); // the client goes away
        });
      });
      req.on("error", () => undefined);
      req.end(JSON.stringify(chat));
      setTimeout(() => reject(new Error("no data")), 2000);
    });
    expect(firstBytes).toContain('"role":"assistant"');
    await until(() => sidecar.lastCall?.signal?.aborted === true);
  });

  it("serves a whole stream over real HTTP", async () => {
    const sidecar = new FakeSidecar();
    edge = await startNodeEdge({ sidecar, port: 0 });
    const response = await fetch(new URL("/v1/chat/completions", edge.url), {
      method: "POST",
      body: JSON.stringify(chat),
    });
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text.endsWith("data: [DONE]\n\n")).toBe(true);
  });
});

it("createApp needs nothing but a sidecar", () => {
  expect(typeof createApp({ sidecar: new FakeSidecar() }).fetch).toBe("function");
});
