// The Node edge's connection limits: a client that trickles its headers is answered 408 and
// closed within the headers timeout (on the render port too), connections over the cap are closed at once, normal
// requests are served meanwhile, and a stream that lasts longer than the timeouts is not cut.
import { spawn } from "node:child_process";
import { connect, type Socket } from "node:net";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startNodeEdge, type RunningEdge } from "../../edge/hosts/node/main.js";
import { DEFAULT_LIMITS, nodeServerOptions } from "../../edge/hosts/node/server.js";
import { delay, FakeSidecar, finish, start, token } from "../support/fake-sidecar.js";
import { openSocket } from "../support/raw-socket.js";
import { freePort } from "../support/wrangler.js";

const HEADERS_TIMEOUT_MS = 600;

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
  const sidecar = new FakeSidecar([
    start(),
    ...Array.from({ length: 6 }, (_, i) => [delay(250), token(`t${i}`)]).flat(),
    finish("stop", { completionTokens: 6 }),
  ]);
  let edge: RunningEdge;
  beforeAll(async () => {
    edge = await startNodeEdge({
      sidecar,
      port: 0,
      renderPort: 0,
      limits: {
        headersTimeoutMs: HEADERS_TIMEOUT_MS,
        requestTimeoutMs: 800,
        keepAliveTimeoutMs: 500,
        maxConnections: 8,
      },
    });
  });
  afterAll(async () => {
    await edge.close();
  });

  it("closes connections that trickle their headers, with 408, while serving others", async () => {
    const slow = await Promise.all(Array.from({ length: 4 }, () => openSocket(edge.url)));
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

  it("holds the keyless render port (RENDER_PORT) to the same headers timeout", async () => {
    const url = edge.renderUrl ?? "";
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const socket = await openSocket(url);
    const ended = closedWithin(socket, HEADERS_TIMEOUT_MS * 6);
    socket.write("POST /v1/completions/render HTTP/1.1\r\nHost: 127.0.0.1\r\n");
    const trickle = setInterval(() => socket.writable && socket.write("X-Slow: a\r\n"), 100);
    const result = await ended;
    clearInterval(trickle);
    expect(result.closed).toBe(true);
    expect(result.received).toMatch(/^HTTP\/1\.1 408/);
  });

  it("refuses connections over the cap at once", async () => {
    const held = await Promise.all(Array.from({ length: 8 }, () => openSocket(edge.url)));
    const extra = await openSocket(edge.url);
    expect((await closedWithin(extra, 500)).closed).toBe(true);
    held.forEach((socket) => {
      socket.destroy();
    });
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

/** A connection that sends a request line, then a header line every 100 ms, never finishing. */
function trickle(url: string): { closed: Promise<{ answer: string; afterMs: number }> } {
  const { hostname, port } = new URL(url);
  const began = Date.now();
  const socket = connect(Number(port), hostname);
  let answer = "";
  socket.on("data", (d: Buffer) => (answer += d.toString("latin1")));
  socket.on("error", () => undefined);
  socket.write("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n");
  const timer = setInterval(() => socket.writable && socket.write("X-Slow: a\r\n"), 100);
  const closed = new Promise<{ answer: string; afterMs: number }>((resolve) =>
    socket.once("close", () => {
      clearInterval(timer);
      resolve({ answer, afterMs: Date.now() - began });
    }),
  );
  return { closed };
}

describe("Node edge connection limits, many clients and settings", () => {
  it(
    "answers 200 connections that trickle headers with 408 within the headers timeout, serving a normal request " +
      "meanwhile",
    async () => {
      const edge = await startNodeEdge({
        sidecar: new FakeSidecar(),
        port: 0,
        limits: { headersTimeoutMs: 1000, maxConnections: 250 },
      });
      try {
        const slow = Array.from({ length: 200 }, () => trickle(edge.url));
        await new Promise((r) => setTimeout(r, 300));
        const health = await fetch(`${edge.url}/health`);
        expect(health.status).toBe(200);
        await health.arrayBuffer();
        for (const { answer, afterMs } of await Promise.all(slow.map((s) => s.closed))) {
          expect(answer).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
          expect(afterMs).toBeGreaterThanOrEqual(900);
          // The timeout, Node's check interval (a quarter of it) and room for a loaded machine.
          expect(afterMs).toBeLessThan(4000);
        }
      } finally {
        await edge.close();
      }
    },
  );

  it("starts with a headers timeout above the request timeout (the request timeout is raised to it)", async () => {
    const edge = await startNodeEdge({ sidecar: new FakeSidecar(), port: 0, limits: { headersTimeoutMs: 120_000 } });
    await edge.close();
    expect(nodeServerOptions({ ...DEFAULT_LIMITS, headersTimeoutMs: 120_000 })).toEqual({
      headersTimeout: 120_000,
      requestTimeout: 120_000,
      connectionsCheckingInterval: 1000,
    });
  });

  it(
    "checks deadlines a quarter of the shortest timeout apart, at most a second, and not in a loop when both are " +
      "off",
    () => {
      expect(nodeServerOptions(DEFAULT_LIMITS)).toEqual({
        headersTimeout: 10_000,
        requestTimeout: 60_000,
        connectionsCheckingInterval: 1000,
      });
      expect(
        nodeServerOptions({ ...DEFAULT_LIMITS, headersTimeoutMs: 600, requestTimeoutMs: 800 })
          .connectionsCheckingInterval,
      ).toBe(150);
      expect(nodeServerOptions({ ...DEFAULT_LIMITS, headersTimeoutMs: 0, requestTimeoutMs: 0 })).toEqual({
        headersTimeout: 0,
        requestTimeout: 0,
        connectionsCheckingInterval: 1000,
      });
      expect(nodeServerOptions({ ...DEFAULT_LIMITS, headersTimeoutMs: 0 })).toEqual({
        headersTimeout: 0,
        requestTimeout: 60_000,
        connectionsCheckingInterval: 1000,
      });
    },
  );

  it("reads its limits from the environment (npm run edge)", async () => {
    const port = await freePort();
    const env = {
      ...process.env,
      EDGE_PORT: String(port),
      SIDECAR_URL: "http://127.0.0.1:1",
      HEADERS_TIMEOUT_MS: "500",
      MAX_CONNECTIONS: "1",
      LOG_REQUESTS: "false",
    };
    const root = fileURLToPath(new URL("../..", import.meta.url));
    const child = spawn("node_modules/.bin/tsx", ["edge/hosts/node/main.ts"], {
      cwd: root,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    try {
      await new Promise<void>((resolve, reject) => {
        child.stderr.on("data", (d: Buffer) => d.toString().includes("edge listening") && resolve());
        child.once("exit", (code) => reject(new Error(`the edge exited (${code})`)));
      });
      const url = `http://127.0.0.1:${port}`;
      const slow = trickle(url);
      await new Promise((r) => setTimeout(r, 100));
      expect((await trickle(url).closed).answer).toBe(""); // over MAX_CONNECTIONS=1: closed unanswered
      const { answer, afterMs } = await slow.closed;
      expect(answer).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
      expect(afterMs).toBeGreaterThanOrEqual(400);
      expect(afterMs).toBeLessThan(3000);
    } finally {
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await exited;
    }
  });
});
