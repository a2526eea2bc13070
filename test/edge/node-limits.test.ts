// The Node edge's connection limits: a client that trickles its headers is answered 408 and
// closed within the headers timeout, connections over the cap are closed at once, normal
// requests are served meanwhile, and a stream that lasts longer than the timeouts is not cut.
import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startNodeEdge, type RunningEdge } from "../../edge/node.js";
import { delay, FakeSidecar, finish, start, token } from "../support/fake-sidecar.js";

const HEADERS_TIMEOUT_MS = 600;

function open(url: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => resolve(socket));
    socket.once("error", reject);
  });
}

/** Resolves with what the server sent once it closes the connection (or after `ms`). */
function closedWithin(socket: Socket, ms: number): Promise<{ closed: boolean; received: string }> {
  return new Promise((resolve) => {
    let received = "";
    socket.on("data", (d: Buffer) => (received += d.toString()));
    const timer = setTimeout(() => resolve({ closed: false, received }), ms);
    socket.once("close", () => {
      clearTimeout(timer);
      resolve({ closed: true, received });
    });
  });
}

describe("Node edge connection limits", () => {
  const sidecar = new FakeSidecar([start(), ...Array.from({ length: 6 }, (_, i) => [delay(250), token(`t${i}`)]).flat(), finish("stop", { completionTokens: 6 })]);
  let edge: RunningEdge;
  beforeAll(async () => {
    edge = await startNodeEdge({ sidecar, port: 0, limits: { headersTimeoutMs: HEADERS_TIMEOUT_MS, requestTimeoutMs: 800, keepAliveTimeoutMs: 500, maxConnections: 8 } });
  });
  afterAll(async () => {
    await edge.close();
  });

  it("closes connections that trickle their headers, with 408, while serving others", async () => {
    const slow = await Promise.all(Array.from({ length: 4 }, () => open(edge.url)));
    const ended = slow.map((socket) => closedWithin(socket, HEADERS_TIMEOUT_MS * 6));
    const tricklers = slow.map((socket) => {
      socket.write("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n");
      return setInterval(() => socket.writable && socket.write("X-Slow: a\r\n"), 100);
    });
    expect((await fetch(`${edge.url}/health`)).status).toBe(200);
    const results = await Promise.all(ended);
    tricklers.forEach(clearInterval);
    for (const result of results) {
      expect(result.closed).toBe(true);
      expect(result.received).toMatch(/^HTTP\/1\.1 408/);
    }
  });

  it("refuses connections over the cap at once", async () => {
    const held = await Promise.all(Array.from({ length: 8 }, () => open(edge.url)));
    const extra = await open(edge.url);
    expect((await closedWithin(extra, 500)).closed).toBe(true);
    held.forEach((socket) => socket.destroy());
    await new Promise((r) => setTimeout(r, 50));
    expect((await fetch(`${edge.url}/health`)).status).toBe(200);
  });

  it("does not cut a stream that lasts longer than the timeouts", async () => {
    const response = await fetch(`${edge.url}/v1/chat/completions`, {
      method: "POST",
      body: JSON.stringify({ messages: [{ role: "user", content: "hi" }], stream: true }),
    });
    const text = await response.text();
    expect(text).toContain("t5");
    expect(text.trimEnd().endsWith("data: [DONE]")).toBe(true);
  });
});
