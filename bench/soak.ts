/**
 * `npm run soak`: mixed requests on each runtime (the edge on Node, its Worker under Miniflare, and
 * under `wrangler dev`) in front of a real sidecar process with the demo model, 8 at a time: all
 * four generation endpoints, streaming and not, one in ten cancelled mid-way; SOAK_ROUNDS rounds of
 * SOAK_REQUESTS (2 × 1,000). Counts the answers that break the contract (anything but 200, or a
 * reply that is not exactly the model's text), and after a warm-up and after each round reads,
 * once every JavaScript runtime has collected its garbage, the JS heap of the sidecar and of the
 * edge's code and the resident memory of every process; prints a table. Bounded: 30 s a request;
 * traffic to 127.0.0.1 only.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { ensureModels } from "../gguf/models.js";
import { startProcess, type Started } from "../test/support/processes.js";
import { createServer, type AddressInfo } from "node:net";
import { collectGarbage, inspectorTarget, nodeInspectorUrl } from "./collect-garbage.js";

const REQUESTS = Number(process.env["SOAK_REQUESTS"] ?? 1000);
const ROUNDS = Number(process.env["SOAK_ROUNDS"] ?? 2);
const INSPECT = "--inspect=127.0.0.1:0";
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
  const children = listed
    .split("\n")
    .map(Number)
    .filter((n) => n > 0);
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
/** Each endpoint's body, and the demo model's reply to it as the tokens it streams. */
const BODIES: ReadonlyArray<readonly [string, Record<string, unknown>, readonly string[]]> = [
  ["/v1/chat/completions", { messages: chat, max_tokens: 16 }, ["Hi", " there"]],
  ["/v1/completions", { prompt: "Once upon a time", max_tokens: 16 }, [" Once", " upon", " a"]],
  ["/v1/responses", { input: "Hello!", max_output_tokens: 16 }, ["Hi", " there"]],
  ["/v1/messages", { model: "m", max_tokens: 16, messages: chat }, ["Hi", " there"]],
];

/**
 * Whether a reply carries exactly the expected text: the whole text as one JSON string when not
 * streamed; each token as a JSON string, in order, followed by the stream's end when streamed.
 */
function exact(text: string, pieces: readonly string[], stream: boolean): boolean {
  if (!stream) return text.includes(JSON.stringify(pieces.join("")));
  let at = 0;
  for (const piece of pieces) {
    at = text.indexOf(JSON.stringify(piece), at);
    if (at === -1) return false;
  }
  return /data: \[DONE\]|event: message_stop|event: response\.completed/.test(text.slice(at));
}

async function one(base: string, i: number): Promise<string | undefined> {
  const [path, body, pieces] = BODIES[i % BODIES.length]!;
  const stream = i % 2 === 0;
  const cancel = i % 10 === 9;
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), 30_000);
  try {
    const response = await fetch(`${base}${path}`, {
      method: "POST",
      body: JSON.stringify({ ...body, stream }),
      signal: controller.signal,
    });
    if (response.status !== 200) return `${path}: status ${response.status}`;
    if (cancel) {
      await response.body?.cancel();
      return undefined;
    }
    const text = await response.text();
    return exact(text, pieces, stream) ? undefined : `${path}: unexpected reply ${text.slice(0, 600)}`;
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

/** A free TCP port on 127.0.0.1 (for wrangler's inspector, which does not report a port 0's pick). */
function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

type Runtime = "node" | "workerd" | "miniflare";

interface Edge {
  readonly edge: Proc;
  /** Inspector URLs of the Node processes involved, and of the Worker where it can be inspected. */
  readonly node: string[];
  readonly worker?: string;
}

async function startEdge(runtime: Runtime, sidecar: Proc): Promise<Edge> {
  const env = { SIDECAR_URL: sidecar.url, LOG_REQUESTS: "false" };
  if (runtime === "node") {
    const edge = await launch(
      process.execPath,
      [INSPECT, "--import", "tsx", "edge/hosts/node/main.ts"],
      { ...env, EDGE_PORT: "0" },
      /edge listening on (\S+)/,
    );
    return { edge, node: [nodeInspectorUrl(edge.output()) ?? ""] };
  }
  const port = await freePort();
  if (runtime === "miniflare") {
    const edge = await launch(
      process.execPath,
      [INSPECT, "--import", "tsx", "bench/miniflare-edge.ts"],
      { ...env, INSPECTOR_PORT: String(port) },
      /Ready on (http:\/\/\S+)/,
    );
    return { edge, node: [nodeInspectorUrl(edge.output()) ?? ""], worker: await inspectorTarget(port) };
  }
  // wrangler's inspector port is its DevTools relay: attaching to it changes what the Worker keeps
  // (bench/README.md), so the Worker is read as it is.
  const edge = await launch(
    "node_modules/.bin/wrangler",
    [
      "dev",
      "--ip",
      "127.0.0.1",
      "--port",
      "0",
      "--inspector-port",
      String(port),
      "--var",
      `SIDECAR_URL:${sidecar.url}`,
      "--var",
      "LOG_REQUESTS:false",
      "--show-interactive-dev-session=false",
    ],
    { CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false", NO_COLOR: "1", NODE_OPTIONS: INSPECT },
    /Ready on (http:\/\/\S+)/,
  );
  return { edge, node: [nodeInspectorUrl(edge.output()) ?? ""] };
}

interface Reading {
  /** JS heap in use after a full collection, MiB: the sidecar's, and the edge's own code's. */
  readonly heap: { readonly sidecar: number; readonly edge: number | undefined };
  /** Resident memory, MiB: the sidecar process, and every process of the edge. */
  readonly rss: { readonly sidecar: number; readonly edge: number };
  readonly processes: string;
}

const mib = (bytes: number): number => Math.round((bytes / 2 ** 20) * 10) / 10;

async function soak(runtime: Runtime, sidecar: Proc): Promise<string[]> {
  const { edge, node, worker } = await startEdge(runtime, sidecar);
  const procs = { sidecar: tree(sidecar.child.pid ?? 0), edge: tree(edge.child.pid ?? 0) };
  const names = procs.edge.map((pid) => `${pid}:${readFileSync(`/proc/${pid}/comm`, "utf8").trim()}`);
  const perProcess = () => procs.edge.map((pid, i) => `${names[i]} ${rssMiB([pid])}`).join(", ");
  const sidecarInspector = nodeInspectorUrl(sidecar.output()) ?? "";
  /** Memory after a full collection in every JavaScript runtime that can be inspected. */
  const reading = async (): Promise<Reading> => {
    await sleep(SETTLE_MS);
    const sidecarHeap = mib(await collectGarbage(sidecarInspector, "collect"));
    const nodeHeaps = await Promise.all(node.map((url) => collectGarbage(url, "collect")));
    // The edge's own code: the Node edge's heap, or the Worker's (Miniflare's host process is not ours).
    const edgeHeap =
      worker !== undefined
        ? mib(await collectGarbage(worker, "snapshot"))
        : runtime === "node"
          ? mib(nodeHeaps[0] ?? 0)
          : undefined;
    await sleep(500);
    return {
      heap: { sidecar: sidecarHeap, edge: edgeHeap },
      rss: { sidecar: rssMiB(procs.sidecar), edge: rssMiB(procs.edge) },
      processes: perProcess(),
    };
  };
  for (let i = 0; i < 40; i++) await one(edge.url, i); // warm up: every endpoint, streaming and not
  const idle = await reading();
  const began = performance.now();
  const errors: string[] = [];
  const rounds: Reading[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    errors.push(...(await load(edge.url)));
    rounds.push(await reading());
    console.error(
      `soak ${runtime}: after round ${r + 1}: heap ${JSON.stringify(rounds.at(-1)?.heap)}, ${rounds.at(-1)?.processes}`,
    );
  }
  const seconds = (performance.now() - began) / 1000;
  // Objects of the last requests (closed HTTP/2 streams and the like) may outlive a collection by
  // a few seconds: the lowest of three readings, a settle apart, is what stays.
  const after = [rounds.at(-1) ?? idle, await reading(), await reading()];
  const total = (r: Reading) => r.heap.sidecar + (r.heap.edge ?? 0) + r.rss.edge / 1024;
  const settled = after.reduce((a, b) => (total(b) < total(a) ? b : a));
  console.error(`soak ${runtime}: idle: heap ${JSON.stringify(idle.heap)}, ${idle.processes}`);
  process.kill(-(edge.child.pid ?? 0), "SIGTERM");
  const heap = (a: number | undefined, b: number | undefined) =>
    a === undefined || b === undefined
      ? "not inspectable"
      : `${a} → ${b} (${b <= a * 1.1 ? "within 10%" : "NOT within 10%"})`;
  const rss = [idle, ...rounds, settled].map((r) => `${r.rss.sidecar}/${r.rss.edge}`).join(" → ");
  return [
    `| ${runtime} | ${REQUESTS * ROUNDS} in ${seconds.toFixed(0)} s | ${errors.length} | ` +
      `${heap(idle.heap.sidecar, settled.heap.sidecar)} | ${heap(idle.heap.edge, settled.heap.edge)} | ${rss} |`,
    ...errors.slice(0, 5).map((e) => `  error: ${e}`),
  ];
}

async function main(): Promise<void> {
  const { demo } = await ensureModels("models", ["demo"]);
  const sidecar = await launch(
    process.execPath,
    [INSPECT, "--import", "tsx", "sidecar/main.ts", "--port", "0", "--sequences", "4", "--context-size", "2048"],
    { MODEL: demo },
    /on (http:\/\/127\.0\.0\.1:\d+)/,
  );
  const lines = [
    "| runtime | requests | errors | sidecar JS heap after GC, idle → settled (MiB) | edge JS heap after GC, idle → " +
      "settled " +
      "(MiB) | resident MiB sidecar/edge: idle → after each round → settled |",
    "| --- | --- | --- | --- | --- | --- |",
  ];
  try {
    for (const runtime of (process.env["SOAK_RUNTIMES"] ?? "node,miniflare,workerd").split(",") as Runtime[])
      lines.push(...(await soak(runtime, sidecar)));
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
