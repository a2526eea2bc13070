/**
 * `npm run faults`: the faults a deployment meets, each provoked on 127.0.0.1 and measured, in one
 * run of a couple of minutes; prints a table. A real sidecar process behind the edge on Node:
 *   1. the sidecar killed mid-stream: the error event at once, 503 while it is down, recovery;
 *   2. a hostile schema (a 50,000-value enum) while another client streams;
 *   3. a client that leaves during a long prompt: its sequence is free again within a chunk;
 *   4. the sidecar stopped (SIGSTOP): 504 after the stall deadline, service after SIGCONT;
 *   5. 200 connections that trickle their headers: closed with 408, others served meanwhile;
 *   6. a slow reader (one event a second, max_tokens 4,000): the sidecar's memory stays bounded.
 */
import { connect } from "node:net";
import { startNodeEdge, type RunningEdge } from "../edge/hosts/node/main.js";
import { ensureModels, modelPath } from "../gguf/models.js";
import { startSidecarProcess, type Started } from "../test/support/processes.js";

type Sidecar = Started;

const rows: [string, string, string][] = [];
const note = (fault: string, measured: string, expected: string): void => {
  rows.push([fault, measured, expected]);
  console.error(`faults: ${fault}: ${measured}`);
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ms = (since: number) => `${Math.round(performance.now() - since)} ms`;

function startSidecar(model: string, port = 0): Promise<Sidecar> {
  return startSidecarProcess(model, [
    "--port",
    String(port),
    "--sequences",
    "2",
    "--context-size",
    "8192",
    "--heartbeat-ms",
    "500",
  ]);
}

const post = (edge: RunningEdge, path: string, body: unknown, signal?: AbortSignal) =>
  fetch(`${edge.url}${path}`, { method: "POST", body: JSON.stringify(body), ...(signal ? { signal } : {}) });

async function rssMiB(pid: number | undefined): Promise<number> {
  const { readFileSync } = await import("node:fs");
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024);
}

async function killedMidStream(model: string): Promise<void> {
  let sidecar = await startSidecar(model);
  const port = Number(new URL(sidecar.url).port);
  const edge = await startNodeEdge({ port: 0, sidecarUrl: sidecar.url });
  const response = await post(edge, "/v1/completions", { prompt: "Let us sing. Sing", max_tokens: 4000, stream: true });
  const reader = response.body!.getReader();
  await reader.read();
  const killedAt = performance.now();
  sidecar.child.kill("SIGKILL");
  let text = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  note(
    "sidecar killed mid-stream: error event",
    `${ms(killedAt)} (${text.includes("event: error") ? "event: error" : "no error event"})`,
    "at once",
  );
  const down = performance.now();
  const status = (await post(edge, "/v1/completions", { prompt: "x", max_tokens: 1 })).status;
  note("sidecar down: answer", `${status} in ${ms(down)}`, "503 at once");
  sidecar = await startSidecar(model, port);
  const back = performance.now();
  while ((await post(edge, "/v1/completions", { prompt: "x", max_tokens: 1 })).status !== 200) await sleep(10);
  note("sidecar back: first 200 after it listens", ms(back), "< 100 ms, by itself");
  await edge.close();
  sidecar.child.kill("SIGKILL");
}

async function hostileSchemaAndStream(sidecar: Sidecar, edge: RunningEdge): Promise<void> {
  const stream = post(edge, "/v1/completions", { prompt: "Let us sing. Sing", max_tokens: 200, stream: true }).then(
    (r) => r.text(),
  );
  const schema = { type: "object", properties: { k: { enum: Array.from({ length: 50_000 }, (_, i) => `v${i}`) } } };
  const began = performance.now();
  const refused = await post(edge, "/v1/chat/completions", {
    messages: [{ role: "user", content: "x" }],
    response_format: { type: "json_schema", json_schema: { name: "s", schema } },
  });
  note("50,000-value enum schema", `${refused.status} in ${ms(began)}`, "400 at once, naming the limit");
  const streamed = performance.now();
  await stream;
  note("the other client's 200-token stream", `done ${ms(streamed)} after the refusal`, "undisturbed");
  void sidecar;
}

async function leaveDuringPrompt(sidecar: Sidecar, edge: RunningEdge): Promise<void> {
  const prompt = "the quick brown fox jumps over the lazy dog ".repeat(600);
  const leaving = new AbortController();
  const request = post(edge, "/v1/completions", { prompt, max_tokens: 4 }, leaving.signal).catch(() => undefined);
  await sleep(400);
  const left = performance.now();
  leaving.abort();
  await request;
  const next = await post(edge, "/v1/completions", { prompt: "Once upon a time", max_tokens: 4 });
  await next.text();
  note(
    "client leaves during a ~6,000-token prompt",
    `next request answered ${ms(left)} later`,
    "within a chunk (< 1 s)",
  );
  void sidecar;
}

async function stopped(model: string): Promise<void> {
  const sidecar = await startSidecar(model);
  const edge = await startNodeEdge({ port: 0, sidecarUrl: sidecar.url, sidecarStallMs: 3000 });
  sidecar.child.kill("SIGSTOP");
  const began = performance.now();
  const status = (await post(edge, "/v1/completions", { prompt: "x", max_tokens: 1 })).status;
  note("sidecar stopped (SIGSTOP), stall deadline 3 s", `${status} after ${ms(began)}`, "504 after ~3 s");
  sidecar.child.kill("SIGCONT");
  const resumed = performance.now();
  const again = (await post(edge, "/v1/completions", { prompt: "x", max_tokens: 1 })).status;
  note("after SIGCONT", `${again} in ${ms(resumed)}`, "200");
  await edge.close();
  sidecar.child.kill("SIGKILL");
}

async function trickledHeaders(edge: RunningEdge): Promise<void> {
  const { hostname, port } = new URL(edge.url);
  const closed: number[] = [];
  const began = performance.now();
  const sockets = Array.from({ length: 200 }, () => {
    const socket = connect(Number(port), hostname, () => socket.write("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n"));
    socket.on("error", () => undefined);
    socket.on("close", () => closed.push(performance.now() - began));
    const timer = setInterval(() => socket.writable && socket.write("X-Slow: a\r\n"), 500);
    socket.on("close", () => clearInterval(timer));
    return socket;
  });
  const normal = performance.now();
  const health = (await fetch(`${edge.url}/health`)).status;
  note("200 connections trickling headers: a normal request", `${health} in ${ms(normal)}`, "served meanwhile");
  while (closed.length < sockets.length && performance.now() - began < 20_000) await sleep(100);
  note(
    "…the trickling connections",
    `${closed.length} of 200 closed, the last after ${Math.round(Math.max(...closed))} ms`,
    "all, within the 2 s headers timeout (+ check interval)",
  );
  for (const socket of sockets) socket.destroy();
}

async function slowReader(sidecar: Sidecar, edge: RunningEdge): Promise<void> {
  const before = await rssMiB(sidecar.child.pid);
  const response = await post(edge, "/v1/completions", { prompt: "Let us sing. Sing", max_tokens: 4000, stream: true });
  const reader = response.body!.getReader();
  for (let i = 0; i < 15; i++) {
    await reader.read();
    await sleep(1000);
  }
  const during = await rssMiB(sidecar.child.pid);
  await reader.cancel();
  note(
    "slow reader (1 event/s, max_tokens 4,000) for 15 s: sidecar RSS",
    `${before} → ${during} MiB`,
    "bounded (read-ahead of 256 events)",
  );
}

async function main(): Promise<void> {
  await ensureModels("models", ["scripted"]);
  const model = modelPath("scripted");
  const { "random-60m": random } = await ensureModels("models", ["random-60m"]);
  await killedMidStream(model);
  const sidecar = await startSidecar(model);
  const edge = await startNodeEdge({ port: 0, sidecarUrl: sidecar.url, limits: { headersTimeoutMs: 2000 } });
  await hostileSchemaAndStream(sidecar, edge);
  await trickledHeaders(edge);
  await slowReader(sidecar, edge);
  await edge.close();
  sidecar.child.kill("SIGKILL");
  const long = await startSidecar(random);
  const longEdge = await startNodeEdge({ port: 0, sidecarUrl: long.url });
  await leaveDuringPrompt(long, longEdge);
  await longEdge.close();
  long.child.kill("SIGKILL");
  await stopped(model);
  console.log("| fault | measured | expected |\n| --- | --- | --- |");
  for (const row of rows) console.log(`| ${row.join(" | ")} |`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
