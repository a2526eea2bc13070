/**
 * `npm run soak`: 2,000 mixed requests on each runtime (the edge on Node, and under `wrangler dev`)
 * in front of a real sidecar process with the demo model, 8 at a time: all four generation
 * endpoints, streaming and not, one in ten cancelled mid-way. Counts the answers that break the
 * contract (anything but 200, or a cancelled one), and reads the resident memory of every process
 * involved at idle, right after the load, and after a settle; prints a table. Bounded: 2,000
 * requests a runtime, 30 s a request; traffic to 127.0.0.1 only.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { ensureModels } from "../gguf/models.js";
import { startProcess, type Started } from "../test/support/processes.js";

const REQUESTS = Number(process.env["SOAK_REQUESTS"] ?? 2000);
const CONCURRENCY = 8;
const SETTLE_MS = 5000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Proc = Started;
const launch = startProcess;

/** The pids of a process and all its descendants (wrangler runs workerd as a child). */
function tree(pid: number): number[] {
  let listed = "";
  try {
    listed = execFileSync("ps", ["-o", "pid=", "--ppid", String(pid)], { encoding: "utf8" });
  } catch {
    // ps exits 1 when the process has no children
  }
  const children = listed.split("\n").map(Number).filter((n) => n > 0);
  return [pid, ...children.flatMap(tree)];
}

function rssMiB(pids: readonly number[]): number {
  let kib = 0;
  for (const pid of pids) {
    try {
      kib += Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0);
    } catch {
      // gone
    }
  }
  return Math.round(kib / 1024);
}

const chat = [{ role: "user", content: "Hello!" }];
const BODIES: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
  ["/v1/chat/completions", { messages: chat, max_tokens: 16 }],
  ["/v1/completions", { prompt: "Once upon a time", max_tokens: 16 }],
  ["/v1/responses", { input: "Hello!", max_output_tokens: 16 }],
  ["/v1/messages", { model: "m", max_tokens: 16, messages: chat }],
];

async function one(base: string, i: number): Promise<string | undefined> {
  const [path, body] = BODIES[i % BODIES.length]!;
  const stream = i % 2 === 0;
  const cancel = i % 10 === 9;
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), 30_000);
  try {
    const response = await fetch(`${base}${path}`, { method: "POST", body: JSON.stringify({ ...body, stream }), signal: controller.signal });
    if (response.status !== 200) return `${path}: status ${response.status}`;
    if (cancel) {
      await response.body?.cancel();
      return undefined;
    }
    const text = await response.text();
    const complete = stream ? /data: \[DONE\]|event: message_stop/.test(text) : text.includes("Hi there") || text.includes("Once upon a");
    return complete ? undefined : `${path}: unexpected reply ${text.slice(0, 600)}`;
  } catch (error) {
    return `${path}: ${String(error)}`;
  } finally {
    clearTimeout(timer);
  }
}

async function load(base: string): Promise<string[]> {
  const errors: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < REQUESTS) {
        const problem = await one(base, next++);
        if (problem !== undefined) errors.push(problem);
      }
    }),
  );
  return errors;
}

async function soak(runtime: "node" | "workerd", sidecar: Proc): Promise<string[]> {
  const edge =
    runtime === "node"
      ? await launch(process.execPath, ["--import", "tsx", "edge/node.ts"], { SIDECAR_URL: sidecar.url, EDGE_PORT: "0", LOG_REQUESTS: "false" }, /edge listening on (\S+)/)
      : await launch("node_modules/.bin/wrangler", ["dev", "--ip", "127.0.0.1", "--port", "0", "--inspector-port", "0", "--var", `SIDECAR_URL:${sidecar.url}`, "--var", "LOG_REQUESTS:false", "--show-interactive-dev-session=false"], { CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false", NO_COLOR: "1" }, /Ready on (http:\/\/\S+)/);
  const procs = { sidecar: tree(sidecar.child.pid ?? 0), edge: tree(edge.child.pid ?? 0) };
  const names = procs.edge.map((pid) => `${pid}:${readFileSync(`/proc/${pid}/comm`, "utf8").trim()}`);
  const perProcess = () => procs.edge.map((pid, i) => `${names[i]} ${rssMiB([pid])}`).join(", ");
  for (let i = 0; i < 20; i++) await one(edge.url, i % 8); // warm up
  await sleep(SETTLE_MS);
  const idle = { sidecar: rssMiB(procs.sidecar), edge: rssMiB(procs.edge) };
  console.error(`soak ${runtime}: edge processes idle: ${perProcess()}`);
  const began = performance.now();
  const errors = await load(edge.url);
  const seconds = (performance.now() - began) / 1000;
  const loaded = { sidecar: rssMiB(procs.sidecar), edge: rssMiB(procs.edge) };
  await sleep(SETTLE_MS);
  const settled = { sidecar: rssMiB(procs.sidecar), edge: rssMiB(procs.edge) };
  console.error(`soak ${runtime}: edge processes settled: ${perProcess()}`);
  process.kill(-(edge.child.pid ?? 0), "SIGTERM");
  const within = (a: number, b: number) => (b <= a * 1.1 + 4 ? "yes" : "no");
  return [
    `| ${runtime} | ${REQUESTS} in ${seconds.toFixed(0)} s | ${errors.length} | sidecar ${idle.sidecar} → ${loaded.sidecar} → ${settled.sidecar} MiB (${within(idle.sidecar, settled.sidecar)}) | edge ${idle.edge} → ${loaded.edge} → ${settled.edge} MiB (${within(idle.edge, settled.edge)}) |`,
    ...errors.slice(0, 5).map((e) => `  error: ${e}`),
  ];
}

async function main(): Promise<void> {
  const { demo } = await ensureModels("models", ["demo"]);
  const sidecar = await launch(process.execPath, ["--import", "tsx", "sidecar/main.ts", "--port", "0", "--sequences", "4", "--context-size", "2048"], { MODEL: demo }, /on (http:\/\/127\.0\.0\.1:\d+)/);
  const lines = ["| runtime | requests | errors | memory idle → after load → settled (within 10%) | |", "| --- | --- | --- | --- | --- |"];
  try {
    for (const runtime of (process.env["SOAK_RUNTIMES"] ?? "node,workerd").split(",") as ("node" | "workerd")[]) lines.push(...(await soak(runtime, sidecar)));
  } finally {
    process.kill(-(sidecar.child.pid ?? 0), "SIGTERM");
  }
  console.log(lines.join("\n"));
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
