// The edge under `wrangler dev` (workerd), against the test gRPC-Web server: health,
// a stream arriving chunk by chunk, and client cancellation reaching the sidecar
// (needs `enable_request_signal`; docs/decisions.md, "Cancellation chain").
import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { delay, FakeSidecar, finish, start, token, type Step } from "../support/fake-sidecar.js";
import { serveGrpcWeb, type GrpcWebTestServer } from "../support/grpc-web-server.js";
import { parseText } from "../support/sse.js";
import { checkChatStream } from "../support/contract.js";
import { startWrangler, type Wrangler } from "../support/wrangler.js";

describe("under wrangler dev (workerd)", () => {
  const script: Step[] = [
    start("fake-model", 4),
    token("Once"),
    delay(150),
    token(" upon"),
    delay(150),
    token(" a time"),
    finish("stop", { completionTokens: 3 }),
  ];
  const fake = new FakeSidecar(script);
  let sidecar: GrpcWebTestServer;
  let wrangler: Wrangler;
  let base = "";

  beforeAll(async () => {
    sidecar = await serveGrpcWeb(fake);
    wrangler = await startWrangler({ SIDECAR_URL: sidecar.url, KEEP_ALIVE_MS: "300" });
    base = wrangler.url;
  }, 70_000);

  afterAll(async () => {
    await wrangler?.stop();
    await sidecar?.close();
  });

  it("answers /health", async () => {
    const response = await fetch(`${base}/health`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: "ok", sidecar: "ok", models: ["fake-model"] });
  });

  it("streams a chat that keeps the contract, chunk by chunk", async () => {
    const response = await fetch(`${base}/v1/chat/completions`, {
      method: "POST",
      body: JSON.stringify({ messages: [{ role: "user", content: "hi" }], stream: true }),
    });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    const arrivals: number[] = [];
    let text = "";
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      arrivals.push(Date.now());
      text += new TextDecoder().decode(value);
    }
    expect(checkChatStream(parseText(text)).text).toBe("Once upon a time");
    expect(arrivals.at(-1)! - arrivals[0]!).toBeGreaterThan(200); // not buffered until the end
  });

  // workerd aborts request.signal only once it writes to the closed connection: the
  // keep-alive ping (300 ms here) is that write while the sidecar is silent.
  it("a client that disconnects during a silence cancels the sidecar call", async () => {
    fake.script = [start(), token("Hi"), delay(60_000), finish()];
    // node:http, so that "going away" is certainly a closed socket.
    await new Promise<void>((resolve, reject) => {
      const req = httpRequest(`${base}/v1/chat/completions`, { method: "POST" }, (res) => {
        res.once("data", () => {
          req.destroy();
          resolve();
        });
      });
      req.on("error", () => undefined);
      req.end(JSON.stringify({ messages: [{ role: "user", content: "hi" }], stream: true }));
      setTimeout(() => reject(new Error("no data")), 5000);
    });
    const deadline = Date.now() + 5000;
    while (fake.lastCall?.signal?.aborted !== true && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    expect(fake.lastCall?.signal?.aborted).toBe(true);
  });

  it("a 40 MB body (over the 32 MiB default) is a 413, with or without content-length", async () => {
    const sized = await fetch(`${base}/v1/chat/completions`, { method: "POST", body: "x".repeat(40 * 1024 * 1024) });
    expect(sized.status).toBe(413);
    expect(((await sized.json()) as { error: { code: string } }).error.code).toBe("request_too_large");
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= 40 * 1024 * 1024) controller.close();
        else {
          controller.enqueue(new Uint8Array(65536).fill(0x78));
          sent += 65536;
        }
      },
    });
    const chunked = await fetch(`${base}/v1/chat/completions`, { method: "POST", body, duplex: "half" } as RequestInit);
    expect(chunked.status).toBe(413);
    expect(((await chunked.json()) as { error: { code: string } }).error.code).toBe("request_too_large");
  });
});
