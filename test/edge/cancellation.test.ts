// docs/decisions.md, "Cancellation chain": client disconnect → request.signal → abort of the sidecar call. The
// fake sidecar records the signal the edge passed to Generate.
import { request as httpRequest } from "node:http";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterEach, describe, expect, it } from "vitest";
import { createApp } from "../../edge/http/app.js";
import { startNodeEdge, type RunningEdge } from "../../edge/hosts/node/main.js";
import { createSidecarClient, type FetchImpl } from "../../edge/upstream/connection.js";
import { openGeneration } from "../../edge/upstream/generation.js";
import { GenerateRequestSchema } from "../../proto/gen/inference/v1/inference_pb.js";
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

  // The order of docs/decisions.md, "Cancellation under wrangler dev": the client leaves after the
  // edge took its request and before it opened the sidecar call (here while it routes among two
  // sidecars, on a ListModels report the test holds back). The call is then opened on an aborted
  // signal, so it never runs a step.
  it("an abort that arrives before the sidecar call is opened is not lost", async () => {
    const [a, b] = [new FakeSidecar(), new FakeSidecar()];
    let report!: () => void;
    let asked!: () => void;
    const held = new Promise<void>((resolve) => (report = resolve));
    const routing = new Promise<void>((resolve) => (asked = resolve));
    for (const fake of [a, b]) {
      const answer = fake.listModels;
      fake.listModels = async (request, options) => {
        asked();
        await held;
        return answer(request, options);
      };
    }
    const signalsAtCall: boolean[] = [];
    for (const fake of [a, b]) {
      const generate = fake.generate;
      fake.generate = (request, options) => {
        signalsAtCall.push(options?.signal?.aborted === true);
        return generate(request, options);
      };
    }
    const sidecars = [
      { url: "http://a.test", client: a },
      { url: "http://b.test", client: b },
    ];
    const app = createApp({ sidecars, access: { allowOpen: true }, onUnexpectedError: () => undefined });
    const client = new AbortController();
    const pending = app.fetch(chatRequest(chat, client.signal));
    await routing; // the edge is routing, on the held report
    expect(a.calls.length + b.calls.length).toBe(0);
    client.abort();
    report();
    await pending;
    // One call, opened on the aborted signal (no failover after an abort), which runs no step.
    expect(signalsAtCall).toEqual([true]);
    expect(a.stepsRun + b.stepsRun).toBe(0);
  });

  it("the gRPC-Web transport never sends a call opened on an aborted signal", async () => {
    const sent: boolean[] = [];
    const fetchImpl: FetchImpl = (_input, init) => {
      sent.push(init?.signal?.aborted === true);
      return Promise.reject(new DOMException("aborted", "AbortError"));
    };
    const client = createSidecarClient("http://sidecar.test", fetchImpl);
    const signal = AbortSignal.abort();
    const opened = await openGeneration(client, create(GenerateRequestSchema, {}), signal).catch(
      (error: unknown) => error,
    );
    expect(ConnectError.from(opened).code).toBe(Code.Canceled);
    // Not sent at all, or sent with the aborted signal (fetch then fails at once).
    expect(sent.every((aborted) => aborted)).toBe(true);
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
