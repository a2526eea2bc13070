/**
 * `npm run bench`: writes the 60M-parameter random test model if absent, starts every
 * party on 127.0.0.1, measures them in one run, prints a markdown table on stdout (progress goes
 * to stderr) and writes bench/results/latest.json plus a timestamped copy (report.ts). See
 * bench/README.md.
 */
import { existsSync, mkdirSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { ensureModels, isModelName, MODEL_NAMES } from "../gguf/models.js";
import { nameOf } from "../sidecar/catalogue/model-catalogue.js";
import { startWrangler, type Wrangler } from "../test/support/wrangler.js";
import { startMiniflare, type RunningMiniflare } from "./miniflare-party.js";
import { startChild, type Child } from "./children.js";
import type { EngineArgs, EngineReady } from "./children/args.js";
import type { EdgeReady } from "./children/edge.js";
import type { EncoderArgs, EncoderReport } from "./children/encoders.js";
import type { SidecarReady } from "./children/sidecar.js";
import { grpcClient, type GrpcClient } from "./clients/grpc.js";
import { CpuMeter, machineSnapshot, otherLoad } from "./cpu.js";
import { readFlags, USAGE, type BenchFlags, type Section } from "./flags.js";
import { cpuBackend, descendantsNamed, peakRssMiB } from "./machine.js";
import { footprint, SETTLE_MS, type Footprint, type MemoryRow } from "./memory.js";
import { grpcParty, httpParty, inProcessParty, type Party, type Workload } from "./parties.js";
import type { PeerSettings } from "./peer.js";
import { peerProcesses, peersFor, startPeers, type PeerGroup } from "./peers.js";
import { finishRun, type Measured, type RunRecord } from "./report.js";
import { readPrevious, resultsDir } from "./results-file.js";
import { runConcurrent, type ConcurrentRun } from "./sections/concurrent.js";
import { runEngine, threadsLabel, type EngineParty, type EngineResult } from "./sections/engine.js";
import { runJoin } from "./sections/join.js";
import { runFim, type FimResult } from "./sections/fim.js";
import { runNewcomer, type NewcomerResult } from "./sections/newcomer.js";
import { runNewcomerSessions } from "./sections/newcomer-sessions.js";
import { readPeerInfo } from "./peer-paths.js";
import { longContextSize, runLong, type LongResult } from "./sections/long.js";
import { runBatch, type BatchResult } from "./sections/batch.js";
import { runEmbeddings, type EmbeddingsResult } from "./sections/embeddings.js";
import { runCatalogueCost, runLoadOnDemand, type ModelsResult } from "./sections/many-models.js";
import { calibrate, runPrefix } from "./sections/prefix.js";
import {
  runSessionParty,
  sessionsContextSize,
  type SessionsOptions,
  type SessionsResult,
} from "./sections/sessions.js";
import { runSingle, type SingleResult } from "./sections/single.js";
import { parseQuantized, quantized } from "./quantize.js";
import { runStateful } from "./sections/stateful.js";
import { runSweep, sweepVariant, type SweepResult } from "./sections/sweep.js";
import type { ProcessInfo } from "./table.js";

const log = (message: string): void => {
  process.stderr.write(`bench: ${message}\n`);
};

/**
 * The model's file: a catalogue model written if missing or outdated (`name:TYPE`: quantized, quantize.ts), or a path
 * to a GGUF file.
 */
async function resolveModel(model: string): Promise<string> {
  const quant = existsSync(model) ? undefined : parseQuantized(model);
  if (quant !== undefined) return quantized(await resolveModel(quant.name), quant.name, quant.type, log);
  if (isModelName(model)) return (await ensureModels("models", [model]))[model];
  if (existsSync(model)) return resolve(model);
  throw new Error(`--model: "${model}" is neither a model of gguf/models.ts (${MODEL_NAMES.join(", ")}) nor a file`);
}

interface Running {
  inProcess?: Child<EngineReady>;
  sidecar?: Child<SidecarReady>;
  edge?: Child<EdgeReady>;
  wrangler?: Wrangler;
  miniflare?: RunningMiniflare;
  peers?: PeerGroup;
  rejectSidecar?: Child<SidecarReady>;
  rejectEdge?: Child<EdgeReady>;
  /** The many-models run's second sidecar (the model alone) and its edge. */
  aloneSidecar?: Child<SidecarReady>;
  aloneEdge?: Child<EdgeReady>;
}

async function stopAll(running: Running): Promise<void> {
  const stops: Promise<void>[] = [];
  for (const key of Object.keys(running) as (keyof Running)[]) {
    const part = running[key];
    if (part !== undefined) stops.push(part.stop().catch((e: unknown) => log(`stopping ${key}: ${String(e)}`)));
    delete running[key];
  }
  await Promise.all(stops);
}

/** Runs `work` and notes how busy the rest of the machine was meanwhile (a shared machine is noisy). */
async function watched<T>(
  section: string,
  notes: string[],
  loads: Record<string, unknown>,
  work: () => Promise<T>,
): Promise<T> {
  const before = machineSnapshot();
  const result = await work();
  const load = otherLoad(before, machineSnapshot());
  loads[section] = load;
  if (load.otherCores >= 0.1 || load.stealCores >= 0.05) {
    notes.push(
      `During the ${section} section, other processes used ${load.otherCores.toFixed(2)} cores on average and the ` +
        `hypervisor ` +
        `stole ${load.stealCores.toFixed(2)}: its figures are noisier.`,
    );
  }
  return result;
}

/** Runs `work` with V8 CPU profiles of `children` when `dir` is set: `<dir>/<section>-<child>.cpuprofile`. */
async function profiled<T>(
  dir: string | undefined,
  section: string,
  children: readonly (Child<unknown> | undefined)[],
  work: () => Promise<T>,
): Promise<T> {
  const list = children.filter((c): c is Child<unknown> => c !== undefined);
  if (dir === undefined) return work();
  mkdirSync(dir, { recursive: true });
  await Promise.all(list.map((c) => c.call("profile-start")));
  try {
    return await work();
  } finally {
    const files = await Promise.all(
      list.map((c) => c.call<string>("profile-stop", join(dir, `${section}-${c.name}.cpuprofile`))),
    );
    log(`profiles: ${files.join(", ")} (read them with: npx tsx bench/profile-summary.ts <file>)`);
  }
}

/** What the sections of one run share: the settings, the processes running, what they noted. */
interface Run extends RunRecord {
  readonly has: (s: Section) => boolean;
  readonly notes: string[];
  readonly processes: ProcessInfo[];
  readonly running: Running;
  readonly workload: Workload;
  readonly engineArgs: EngineArgs;
  readonly profileDir: string | undefined;
}

/** The test model written if absent, the peers found (or built), the settings every party shares. */
async function prepareRun(flags: BenchFlags, startedAt: string): Promise<Run> {
  const has = (s: Section): boolean => flags.sections.includes(s);
  const notes: string[] = [];
  const profileDir = flags.profile ? join(resultsDir(flags.out), "profiles") : undefined;
  const modelPath = await resolveModel(flags.model);
  const withPeers = has("single") || has("sweep") || has("long") || has("embeddings") || has("sessions") || has("fim");
  const peerInfos = withPeers ? peersFor(flags, notes, log) : [];
  const workload: Workload = { maxTokens: flags.maxTokens, timeoutMs: flags.streamTimeoutMs };
  const engineArgs: EngineArgs = {
    modelPath,
    threads: flags.threads,
    threadsBatch: flags.threadsBatch,
    engine: flags.engine,
    sequences: flags.sequences,
    contextSize: flags.contextSize,
    maxQueue: flags.maxQueue,
  };
  return {
    flags,
    startedAt,
    has,
    notes,
    loads: {},
    processes: [],
    raw: {},
    running: {},
    workload,
    engineArgs,
    modelPath,
    peerInfos,
    profileDir,
  };
}

async function main(): Promise<void> {
  const flags = readFlags(process.argv.slice(2));
  if (flags === "help") {
    console.log(USAGE);
    return;
  }
  const startedAt = new Date().toISOString();
  const previous = readPrevious(flags.out);
  const run = await prepareRun(flags, startedAt);
  const measured: Measured = {};

  const onSignal = (): void => {
    log("interrupted: stopping what the bench started");
    stopAll(run.running).finally(() => process.exit(130));
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);

  try {
    await measureAll(run, measured);
  } finally {
    await stopAll(run.running);
  }
  finishRun(run, measured, previous);
}

/** Every section asked for, in order, each on the processes it needs. */
async function measureAll(run: Run, m: Measured): Promise<void> {
  const { flags, has, notes, loads } = run;
  // 0. What a newcomer measures: `npm start` beside llama-server's default build, alone on the machine.
  if (has("newcomer")) m.newcomer = await watched("newcomer", notes, loads, () => measureNewcomer(flags, notes));
  // 1. Encoders first, alone on the machine.
  if (has("encoders")) {
    log("SSE encoder micro-bench");
    const child = await startChild<unknown>("encoders", "encoders.ts", {
      reps: flags.encoderReps,
      ms: flags.encoderMs,
      tokens: flags.maxTokens,
    } satisfies EncoderArgs);
    m.encoders = await child.call<EncoderReport>("run");
    await child.stop();
  }

  // 2. The engine builds side by side, in-process, alone on the machine.
  if (has("engine"))
    m.engine = await watched("engine", notes, loads, () => compareEngines(run.engineArgs, flags, run.workload, notes));

  await measureOnServers(run, m);
  await stopAll(run.running);

  // 7. A small queue: the streams beyond sequences + queue must get an immediate 429.
  if (has("reject")) m.reject = await measureReject(run);
  // 8. An agent-sized prompt on a context of its own, cold and with its prefix cached.
  if (has("long")) m.long = await measureLong(run);
  // 9. Embeddings per second at 1 and 8 clients, the edge and each peer side by side.
  if (has("embeddings")) m.embeddings = await measureEmbeddings(run);
  // 10. Many models on one sidecar: load on demand, and the catalogue's cost on a loaded model.
  if (has("models")) m.models = await measureModels(run);
  // 11. Many sessions on few sequences, round-robin (its table comes first in the report).
  if (has("sessions")) m.sessions = await measureSessions(run);
  // 12. Batch lines in idle capacity: interactive TTFT with and without them, their idle throughput.
  if (has("batch")) m.batch = await measureBatch(run);
  // 13. Fill-in-the-middle: repeated one-line edits of a file, this server's /infill beside llama-server's.
  if (has("fim")) m.fim = await measureFim(run);
}

/** The many-sessions workload's settings (`--sessions`, `--session-*`), for section 11 and the newcomer's sessions. */
function sessionsOptionsOf(flags: BenchFlags): SessionsOptions {
  return {
    sessions: flags.sessions,
    sequences: flags.sessionSequences,
    tokens: flags.sessionTokens,
    turns: flags.sessionTurns,
    timeoutMs: flags.streamTimeoutMs,
  };
}

/**
 * Section 0: fresh `npm start`s beside fresh default llama-servers (none when that build is missing: a note says how
 * to make it).
 */
async function measureNewcomer(flags: BenchFlags, notes: string[]): Promise<NewcomerResult | undefined> {
  if (readPeerInfo("default") === undefined) {
    notes.push("newcomer: not measured, no default llama-server build (npm run bench:peer-build -- --variant default)");
    return undefined;
  }
  log(`newcomer: ${flags.newcomerRuns} fresh starts of npm start and llama-server on ${flags.newcomerModel}`);
  const modelPath = await resolveModel(flags.newcomerModel);
  const settings = {
    runs: flags.newcomerRuns,
    rounds: flags.newcomerRounds,
    maxTokens: flags.newcomerTokens,
    timeoutMs: flags.streamTimeoutMs,
  };
  const result = await runNewcomer(modelPath, basename(modelPath, ".gguf"), settings, log);
  if (flags.newcomerSessionsModel === "none") return result;
  const sessionsModel = await resolveModel(flags.newcomerSessionsModel);
  const options = sessionsOptionsOf(flags);
  log(`newcomer: ${options.sessions} sessions on ${flags.newcomerSessionsModel}`);
  const sessions = await runNewcomerSessions(sessionsModel, options, log);
  return { ...result, sessions: { model: basename(sessionsModel, ".gguf"), result: sessions } };
}

/** Section 12: a fresh sidecar and edge; batch lines straight to the sidecar, interactive streams through the edge. */
async function measureBatch(run: Run): Promise<BatchResult> {
  const { flags, running } = run;
  running.sidecar = await startChild<SidecarReady>("sidecar-batch", "sidecar.ts", run.engineArgs);
  running.edge = await startChild<EdgeReady>("edge-batch", "edge.ts", { sidecarUrl: running.sidecar.ready.url });
  const edge = httpParty("c", "edge on Node", running.edge.ready.url, run.workload);
  // One warm-up stream through the edge.
  await httpParty("c", "edge on Node", running.edge.ready.url, { ...run.workload, maxTokens: 8 }).run(9_001);
  const options = {
    lines: flags.batchLines,
    lineTokens: flags.batchTokens,
    inFlight: flags.sequences,
    streams: 4,
    rounds: flags.batchRounds,
    timeoutMs: flags.streamTimeoutMs,
  };
  const client = grpcClient(running.sidecar.ready.url);
  const batch = await watched("batch", run.notes, run.loads, () => runBatch(client, edge, options, log));
  run.raw["batchSidecarMetrics"] = await running.sidecar.call("metrics");
  await stopAll(running);
  return batch;
}

/** The sidecar, the edge on Node and the peers, for the sections that share them. */
async function startServers(run: Run): Promise<void> {
  const { flags, running, engineArgs } = run;
  log(
    `starting the sidecar (threads ${flags.threads}, batch threads ${flags.threadsBatch}, engine ${flags.engine}, ` +
      `${flags.sequences} sequences × ${flags.contextSize} tokens, queue ${flags.maxQueue})`,
  );
  running.sidecar = await startChild<SidecarReady>("sidecar", "sidecar.ts", engineArgs);
  run.notes.push(
    `The model runs on: ${running.sidecar.ready.gpu ?? "?"} (the figures of docs/performance.md were measured on ` +
      `CPU-only hosts).`,
  );
  running.edge = await startChild<EdgeReady>("edge", "edge.ts", { sidecarUrl: running.sidecar.ready.url });
  // The peers take part in the single-stream section and the sweep only.
  const peerInfos = run.has("single") || run.has("sweep") ? run.peerInfos : [];
  running.peers = await startPeers(peerInfos, peerSettings(run, flags.sequences, flags.contextSize), log);
}

/** Every peer's settings: the run's model and threads, `sequences` × `contextSize` tokens. */
function peerSettings(run: Run, sequences: number, contextSize: number, extraArgs?: readonly string[]): PeerSettings {
  const { flags } = run;
  return {
    modelPath: run.modelPath,
    threads: flags.threads,
    threadsBatch: flags.threadsBatch,
    sequences,
    contextSize,
    ...(extraArgs ? { extraArgs } : {}),
  };
}

type Footprints = (gc: boolean) => Promise<Record<string, Footprint> | undefined>;

/** Sections 3 to 6 on one sidecar and edge (and the peers), with the memory they leave behind. */
async function measureOnServers(run: Run, m: Measured): Promise<void> {
  const { has, running, workload } = run;
  if (has("single") || has("sweep") || has("prefix") || has("stateful") || has("join")) await startServers(run);
  const sidecar = running.sidecar;
  const edge = running.edge;
  const client = sidecar ? grpcClient(sidecar.ready.url) : undefined;
  const peerParties: Party[] = (running.peers?.peers ?? []).map((p) =>
    httpParty(`peer-${p.variant}`, p.label, p.peer.url, workload),
  );
  const footprints: Footprints = async (gc) =>
    sidecar && edge ? { sidecar: await footprint(sidecar, gc), "edge on Node": await footprint(edge, gc) } : undefined;
  // The idle footprint: after start-up and one warm-up request through the edge, after a GC.
  if (edge) await httpParty("c", "edge on Node", edge.ready.url, { ...workload, maxTokens: 8 }).run(9_000);
  const idle = await footprints(true);

  // 3. Single stream: (a) (b) (c) (d) and the peers, interleaved.
  if (has("single") && sidecar && edge && client)
    m.single = await measureSingle(run, sidecar, edge, client, peerParties);
  // 4. Concurrency sweep through the edge on Node (and each peer at 1, 4 and `sequences` streams).
  if (has("sweep") && edge) m.sweep = await measureSweep(run, sidecar, edge, peerParties);
  if (running.peers) {
    run.processes.push(...peerProcesses(running.peers));
    await running.peers.stop();
    delete running.peers;
  }
  if (client && edge) await measureCaches(run, m, client, edge);
  // 6. A long prompt joins two decoding streams.
  if (has("join") && client) {
    m.joining = await watched("join", run.notes, run.loads, () =>
      runJoin(client, { rounds: run.flags.joinRounds, tokens: run.flags.prefixTokens }, log),
    );
  }
  const memory = await measureMemory(run, footprints, idle, client, edge);
  if (memory) m.memory = memory;
  if (sidecar && edge) {
    run.raw["sidecarMetrics"] = await sidecar.call("metrics");
    run.processes.unshift(
      { name: "sidecar", build: engineBuild(sidecar), peakRssMiB: peakRssMiB(sidecar.pid) },
      { name: "edge on Node", build: "–", peakRssMiB: peakRssMiB(edge.pid) },
    );
  }
}

/** The parties of the single-stream section, each started here but the sidecar, the edge and the peers. */
async function singleParties(
  run: Run,
  sidecar: Child<SidecarReady>,
  edge: Child<EdgeReady>,
  client: GrpcClient,
  peerParties: readonly Party[],
): Promise<Party[]> {
  const { flags, running, workload } = run;
  running.inProcess = await startChild<EngineReady>("in-process", "inprocess.ts", run.engineArgs);
  if (flags.wrangler) {
    log("starting the edge under wrangler dev");
    running.wrangler = await startWrangler({ SIDECAR_URL: sidecar.ready.url });
    running.miniflare = await startMiniflare(sidecar.ready.url);
  } else run.notes.push("(d) wrangler dev: left out (--no-wrangler).");
  const parties: Party[] = [
    inProcessParty(running.inProcess, workload),
    grpcParty(client, workload),
    httpParty("c", "(c) edge on Node, HTTP/SSE", edge.ready.url, workload),
    // The cost of a resumable stream: the sidecar keeps its events, the edge numbers its frames.
    httpParty("r", "(r) edge on Node, resumable (x-resumable)", edge.ready.url, workload, { "x-resumable": "true" }),
  ];
  if (running.wrangler) parties.push(httpParty("d", "(d) edge under wrangler dev", running.wrangler.url, workload));
  // The same Worker on workerd without wrangler's local proxy: what of (d) is the proxy's.
  if (running.miniflare)
    parties.push(
      httpParty("m", "(m) edge under Miniflare (workerd, no wrangler proxy)", running.miniflare.url, workload),
    );
  parties.push(...peerParties);
  return parties;
}

/** Section 3: one stream at a time through each party, interleaved. */
async function measureSingle(
  run: Run,
  sidecar: Child<SidecarReady>,
  edge: Child<EdgeReady>,
  client: GrpcClient,
  peerParties: readonly Party[],
): Promise<SingleResult> {
  const { flags, running } = run;
  const parties = await singleParties(run, sidecar, edge, client, peerParties);
  const inProcess = running.inProcess as Child<EngineReady>;
  log(`single stream: ${flags.runs} runs × ${parties.length} parties, ${flags.maxTokens} tokens each`);
  const meter = new CpuMeter(
    new Map([
      [inProcess.pid, "in-process"],
      [sidecar.pid, "sidecar"],
      [edge.pid, "edge (Node)"],
      ...(running.peers?.peers ?? []).map((p) => [p.peer.pid, p.label] as const),
      ...(running.miniflare ? [[running.miniflare.pid, "Miniflare (node)"] as const] : []),
    ]),
  );
  const single = await watched("single-stream", run.notes, run.loads, () =>
    profiled(run.profileDir, "single", [inProcess, sidecar, edge], () => runSingle(parties, flags.runs, meter, log)),
  );
  run.processes.push({
    name: "(a) in-process node-llama-cpp",
    build: engineBuild(inProcess),
    peakRssMiB: peakRssMiB(inProcess.pid),
  });
  for (const pid of descendantsNamed(process.pid, "workerd"))
    run.processes.push({ name: `workerd (wrangler dev) pid ${pid}`, build: "–", peakRssMiB: peakRssMiB(pid) });
  await inProcess.stop();
  delete running.inProcess;
  await running.wrangler?.stop();
  delete running.wrangler;
  await running.miniflare?.stop();
  delete running.miniflare;
  return single;
}

/** Section 4: concurrent streams through the edge on Node at each level. */
async function measureSweep(
  run: Run,
  sidecar: Child<SidecarReady> | undefined,
  edge: Child<EdgeReady>,
  peerParties: readonly Party[],
): Promise<SweepResult> {
  const { flags } = run;
  const edgeParty = httpParty("c", "edge on Node", edge.ready.url, run.workload);
  // 1 and 4 streams for the first-token targets, `sequences` for the aggregate one.
  const peerLevels = [1, 4, flags.sequences].filter((l) => flags.levels.includes(l));
  log(`sweep: levels ${flags.levels.join(", ")} × ${flags.sweepRuns} runs`);
  return watched("sweep", run.notes, run.loads, () =>
    profiled(run.profileDir, "sweep", [sidecar, edge], () =>
      runSweep(edgeParty, peerParties, flags.levels, peerLevels, flags.sweepRuns, log),
    ),
  );
}

/** Sections 5 and 5b: prefix reuse, and stored conversations' next turns against cold ones. */
async function measureCaches(run: Run, m: Measured, client: GrpcClient, edge: Child<EdgeReady>): Promise<void> {
  const { flags, has } = run;
  // 5. Prefix reuse.
  if (has("prefix")) {
    const options = {
      rounds: flags.prefixRounds,
      warm: flags.prefixWarm,
      tokens: flags.prefixTokens,
      timeoutMs: flags.streamTimeoutMs,
    };
    m.prefix = await watched("prefix", run.notes, run.loads, () => runPrefix(client, edge.ready.url, options, log));
  }
  // 5b. Stateful conversations: a stored conversation's next turn vs cold, the store on vs off.
  if (has("stateful")) {
    const options = { rounds: flags.prefixRounds, tokens: flags.prefixTokens, timeoutMs: flags.streamTimeoutMs };
    m.stateful = await watched("stateful", run.notes, run.loads, () =>
      runStateful(client, edge.ready.url, options, log),
    );
  }
}

/**
 * The footprint right after the load (single stream, sweep, prefix reuse), once settled, and after
 * a second, shorter load of the same kinds with new prompts: it must leave nothing more behind.
 */
async function measureMemory(
  run: Run,
  footprints: Footprints,
  idle: Record<string, Footprint> | undefined,
  client: GrpcClient | undefined,
  edge: Child<EdgeReady> | undefined,
): Promise<MemoryRow[] | undefined> {
  const { flags, has } = run;
  const loaded = await footprints(false);
  const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
  await settle();
  const settled = await footprints(true);
  let again: Record<string, Footprint> | undefined;
  if (settled && edge && client && (has("sweep") || has("prefix"))) {
    log("memory: a second load (one sweep run at the two highest levels, one prefix round)");
    if (has("sweep")) {
      const edgeParty = httpParty("c", "edge on Node", edge.ready.url, run.workload);
      await runSweep(edgeParty, [], flags.levels.slice(-2), [], 1, log, flags.sweepRuns);
    }
    if (has("prefix")) {
      const options = {
        rounds: 1,
        warm: flags.prefixWarm,
        tokens: flags.prefixTokens,
        timeoutMs: flags.streamTimeoutMs,
        firstRound: flags.prefixRounds,
      };
      await runPrefix(client, edge.ready.url, options, log);
    }
    await settle();
    again = await footprints(true);
  }
  if (!(idle && loaded && settled)) return undefined;
  return Object.keys(idle).map(
    (name) =>
      ({ name, idle: idle[name], loaded: loaded[name], settled: settled[name], again: again?.[name] }) as MemoryRow,
  );
}

/** Section 7: a sidecar with a small queue behind its own edge; the streams beyond it get a 429. */
async function measureReject(run: Run): Promise<ConcurrentRun> {
  const { flags, running } = run;
  log(`rejection run: ${flags.rejectStreams} streams, ${flags.sequences} sequences, queue ${flags.rejectQueue}`);
  running.rejectSidecar = await startChild<SidecarReady>("sidecar-small-queue", "sidecar.ts", {
    ...run.engineArgs,
    maxQueue: flags.rejectQueue,
  });
  running.rejectEdge = await startChild<EdgeReady>("edge-small-queue", "edge.ts", {
    sidecarUrl: running.rejectSidecar.ready.url,
  });
  const party = httpParty("c", "edge on Node", running.rejectEdge.ready.url, run.workload);
  const reject = await runConcurrent(flags.rejectStreams, (i) => party.run(sweepVariant(90, flags.rejectStreams, i)));
  run.raw["rejectSidecarMetrics"] = await running.rejectSidecar.call("metrics");
  await stopAll(running);
  return reject;
}

/** Section 8: a long prompt on a sidecar (and each peer) of one sequence and a context of its own. */
async function measureLong(run: Run): Promise<LongResult> {
  const { flags, running } = run;
  const contextSize = longContextSize(flags.longTokens, flags.longDecodeTokens);
  running.sidecar = await startChild<SidecarReady>("sidecar-long", "sidecar.ts", {
    ...run.engineArgs,
    sequences: 1,
    contextSize,
  });
  const peers = await startPeers(run.peerInfos, peerSettings(run, 1, contextSize), log);
  running.peers = peers;
  const options = {
    tokens: flags.longTokens,
    contextSize,
    decodeTokens: flags.longDecodeTokens,
    timeoutMs: 30 * 60_000,
  };
  const longClient = grpcClient(running.sidecar.ready.url);
  const urls = peers.peers.map((p) => ({ label: p.label, url: p.peer.url }));
  const long = await watched("long", run.notes, run.loads, () => runLong(longClient, urls, options, log));
  await stopAll(running);
  return long;
}

/** The fill-in-the-middle run's context: the file's window and its middles, with room. */
const FIM_CONTEXT = 4096;

/**
 * Section 13: the `qwen2.5-coder` twin on a sidecar of one sequence behind an edge on Node, beside each
 * peer on the same model and settings; `/infill` requests of repeated one-line edits (sections/fim.ts).
 */
async function measureFim(run: Run): Promise<FimResult> {
  const { flags, running } = run;
  const modelPath = await resolveModel("qwen2.5-coder");
  running.sidecar = await startChild<SidecarReady>("sidecar-fim", "sidecar.ts", {
    ...run.engineArgs,
    modelPath,
    sequences: 1,
    contextSize: FIM_CONTEXT,
  });
  running.edge = await startChild<EdgeReady>("edge-fim", "edge.ts", { sidecarUrl: running.sidecar.ready.url });
  const peers = await startPeers(run.peerInfos, { ...peerSettings(run, 1, FIM_CONTEXT), modelPath }, log);
  running.peers = peers;
  const parties = [
    { name: "edge on Node", url: running.edge.ready.url },
    ...peers.peers.map((p) => ({ name: p.label, url: p.peer.url })),
  ];
  const options = { tokens: 2000, rounds: flags.fimRounds, timeoutMs: flags.streamTimeoutMs };
  const fim = await watched("fim", run.notes, run.loads, () => runFim(parties, options, log));
  await stopAll(running);
  return fim;
}

/** Section 9: embeddings through a fresh sidecar and edge, and each peer. */
async function measureEmbeddings(run: Run): Promise<EmbeddingsResult> {
  const { flags, running } = run;
  running.sidecar = await startChild<SidecarReady>("sidecar-embeddings", "sidecar.ts", run.engineArgs);
  running.edge = await startChild<EdgeReady>("edge-embeddings", "edge.ts", { sidecarUrl: running.sidecar.ready.url });
  const extraArgs = ["--embeddings", "--pooling", "last"];
  const peers = await startPeers(run.peerInfos, peerSettings(run, flags.sequences, flags.contextSize, extraArgs), log);
  running.peers = peers;
  const parties = [
    { name: "edge on Node", url: running.edge.ready.url },
    ...peers.peers.map((p) => ({ name: p.label, url: p.peer.url })),
  ];
  const options = { levels: [1, 8], perClient: flags.embeddingRequests, timeoutMs: flags.streamTimeoutMs };
  const embeddings = await watched("embeddings", run.notes, run.loads, () => runEmbeddings(parties, options, log));
  await stopAll(running);
  return embeddings;
}

/**
 * Section 10: two fresh sidecars, each behind an edge of its own: one whose catalogue holds the bench
 * model and `--models-other` (none loaded at start), one serving the model alone (loaded at start).
 * Requests to both in turn first (the same history for both), then, on the catalogue's alone,
 * load-on-demand rounds.
 */
async function measureModels(run: Run): Promise<ModelsResult> {
  const { flags, running } = run;
  const otherPath = await resolveModel(flags.modelsOther);
  const [model, other] = [nameOf(run.modelPath), nameOf(otherPath)];
  if (model === other)
    throw new Error(`--models-other: "${flags.modelsOther}" has the bench model's name (${model}); pick another model`);
  const options = {
    model,
    other,
    runs: flags.modelsRuns,
    requests: flags.modelsRequests,
    maxTokens: flags.maxTokens,
    timeoutMs: flags.streamTimeoutMs,
  };
  log(
    `models: a catalogue of ${model} and ${other} beside ${model} alone, ${options.requests} requests each, then ` +
      `${options.runs} load rounds`,
  );
  const sidecar = await startChild<SidecarReady>("sidecar-catalogue", "sidecar.ts", {
    ...run.engineArgs,
    catalogue: [run.modelPath, otherPath],
  });
  running.sidecar = sidecar;
  running.edge = await startChild<EdgeReady>("edge-catalogue", "edge.ts", { sidecarUrl: sidecar.ready.url });
  const alone = await startChild<SidecarReady>("sidecar-alone", "sidecar.ts", run.engineArgs);
  running.aloneSidecar = alone;
  running.aloneEdge = await startChild<EdgeReady>("edge-alone", "edge.ts", { sidecarUrl: alone.ready.url });
  const [edgeUrl, aloneUrl] = [running.edge.ready.url, running.aloneEdge.ready.url];
  const cost = await watched("models (the catalogue's cost)", run.notes, run.loads, () =>
    runCatalogueCost(aloneUrl, edgeUrl, options, log),
  );
  run.raw["modelsAloneSidecarMetrics"] = await alone.call("metrics");
  await Promise.all([running.aloneEdge.stop(), alone.stop()]);
  delete running.aloneEdge;
  delete running.aloneSidecar;
  const load = await watched("models (load on demand)", run.notes, run.loads, () =>
    runLoadOnDemand(grpcClient(sidecar.ready.url), edgeUrl, options, log),
  );
  run.raw["modelsSidecarMetrics"] = await sidecar.call("metrics");
  await stopAll(running);
  return { ...load, ...cost };
}

/**
 * Section 11: many sessions on few sequences through a fresh sidecar and edge without the KV tier
 * (`--cache-ram 0`), the same with it (`auto`, the default), and each peer with its own prompt cache.
 */
async function measureSessions(run: Run): Promise<SessionsResult> {
  const { flags, running } = run;
  const contextSize = sessionsContextSize(flags.sessionTokens, flags.sessionTurns);
  const options = sessionsOptionsOf(flags);
  const result: SessionsResult = { options, contextSize, parties: [] };
  const engineArgs: EngineArgs = { ...run.engineArgs, sequences: flags.sessionSequences, contextSize };
  let words: number | undefined;
  for (const cacheRam of [0, "auto"] as const) {
    const label = `edge on Node, sidecar --cache-ram ${cacheRam}`;
    log(`sessions: ${label}, ${options.sessions} sessions, ${options.sequences} sequences × ${contextSize} tokens`);
    const sidecar = await startChild<SidecarReady>(`sidecar-sessions-${cacheRam}`, "sidecar.ts", {
      ...engineArgs,
      cacheRam,
    });
    running.sidecar = sidecar;
    const edge = await startChild<EdgeReady>(`edge-sessions-${cacheRam}`, "edge.ts", { sidecarUrl: sidecar.ready.url });
    running.edge = edge;
    words ??= (await calibrate(grpcClient(sidecar.ready.url), flags.sessionTokens)).words;
    const w = words;
    result.parties.push(
      await watched(`sessions (${label})`, run.notes, run.loads, () =>
        runSessionParty(label, edge.ready.url, w, options, log),
      ),
    );
    run.raw[`sessionsSidecarMetrics ${cacheRam}`] = await sidecar.call("metrics");
    await stopAll(running);
  }
  // Each peer alone on the machine, a fresh server each: its prompt cache holds only its own run.
  for (const info of words === undefined ? [] : run.peerInfos) {
    const peers = await startPeers([info], peerSettings(run, flags.sessionSequences, contextSize), log);
    running.peers = peers;
    const w = words ?? 0;
    for (const { label, peer } of peers.peers) {
      result.parties.push(
        await watched(`sessions (${label})`, run.notes, run.loads, () =>
          runSessionParty(label, peer.url, w, options, log),
        ),
      );
    }
    await stopAll(running);
  }
  return result;
}

/** The engine section's thread settings: [threads, batch threads]. */
const ENGINE_THREADS = [
  [1, 1],
  [2, 2],
  [1, 2],
] as const;

/**
 * In-process children on the prebuilt library and on this host's own build (when there is one),
 * on 1 and 2 threads and on 1 with 2 for batches, all loaded before the first round.
 */
async function compareEngines(
  args: EngineArgs,
  flags: BenchFlags,
  w: Workload,
  notes: string[],
): Promise<EngineResult> {
  const parties: EngineParty[] = [];
  try {
    for (const library of ["prebuilt", "local"] as const) {
      for (const [threads, threadsBatch] of ENGINE_THREADS) {
        let child: Child<EngineReady>;
        try {
          child = await startChild<EngineReady>(`in-process ${library} ${threads}/${threadsBatch}`, "inprocess.ts", {
            ...args,
            engine: library,
            threads,
            threadsBatch,
          });
        } catch (error) {
          if (library === "local") {
            notes.push(
              "engine builds: no local build here (`npm run build:engine`), so only the prebuilt library is shown.",
            );
            break;
          }
          throw error;
        }
        parties.push({
          library: library === "local" ? "local build (thread pool)" : "prebuilt",
          threads,
          threadsBatch,
          child,
        });
      }
    }
    log(
      `engine builds: ${parties.length} configurations × ${flags.engineRounds} rounds, 1 and ${flags.sequences} ` +
        `streams`,
    );
    return await runEngine(parties, w, flags.sequences, flags.engineRounds, log);
  } finally {
    // A child that fails to start has exited; the parent going away ends the others (ipc.ts).
    for (const party of parties) await party.child.stop();
  }
}

/** Batches are always ordered by sequence: a model whose context lacks the internals for it does not load. */
function engineBuild(child: Child<EngineReady>): string {
  const r = child.ready;
  return `${r.buildType}, ${cpuBackend(child.pid) ?? "?"}, ${threadsLabel(r.threads, r.threadsBatch)}, batches ordered`;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
