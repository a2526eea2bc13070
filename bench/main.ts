/**
 * `npm run bench`: writes the 60M-parameter random test model if absent, starts every
 * party on 127.0.0.1, measures them in one run, prints a markdown table on stdout (progress goes
 * to stderr) and writes bench/results/latest.json plus a timestamped copy. See bench/README.md.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { ensureModels } from "../gguf/models.js";
import { startWrangler, type Wrangler } from "../test/support/wrangler.js";
import { startMiniflare, type RunningMiniflare } from "./miniflare-party.js";
import { startChild, type Child } from "./children.js";
import type { EngineArgs, EngineReady } from "./children/args.js";
import type { EdgeReady } from "./children/edge.js";
import type { EncoderArgs, EncoderReport } from "./children/encoders.js";
import type { SidecarReady } from "./children/sidecar.js";
import { grpcClient } from "./clients/grpc.js";
import { CpuMeter, machineSnapshot, otherLoad } from "./cpu.js";
import { readFlags, USAGE, type BenchFlags, type Section } from "./flags.js";
import { cpuBackend, descendantsNamed, machine, peakRssMiB } from "./machine.js";
import { footprint, SETTLE_MS, type Footprint, type MemoryRow } from "./memory.js";
import { grpcParty, httpParty, inProcessParty, type Party, type Workload } from "./parties.js";
import { buildPeer } from "./peer-build.js";
import { readPeerInfo, type PeerInfo } from "./peer-paths.js";
import { startPeer, type RunningPeer } from "./peer.js";
import { compare, readPrevious, resultsDir, writeResults, type ResultsFile } from "./results.js";
import { runConcurrent, type ConcurrentRun } from "./sections/concurrent.js";
import { runEngine, summarizeEngine, threadsLabel, type EngineParty, type EngineResult } from "./sections/engine.js";
import { runJoin, summarizeJoin, type JoinResult } from "./sections/join.js";
import { LONG_CONTEXT_MARGIN, promptRate, runLong, type LongResult } from "./sections/long.js";
import { runEmbeddings, type EmbeddingsResult } from "./sections/embeddings.js";
import { runPrefix, type PrefixResult } from "./sections/prefix.js";
import { runSingle, type SingleResult } from "./sections/single.js";
import { renderStateful, runStateful, statefulTargets, summarizeStateful, type StatefulResult } from "./sections/stateful.js";
import { runSweep, sweepVariant, type SweepResult } from "./sections/sweep.js";
import { summarizeLevel, summarizePrefix, summarizeSingle, summarizeSweep } from "./summary.js";
import { renderReport, type ProcessInfo } from "./table.js";
import { evaluateTargets } from "./targets.js";

const log = (message: string): void => {
  process.stderr.write(`bench: ${message}\n`);
};

function peerFor(flags: BenchFlags, notes: string[]): PeerInfo | undefined {
  if (flags.noPeer) {
    notes.push("llama-server: left out (--no-peer).");
    return undefined;
  }
  const built = readPeerInfo();
  if (built) return built;
  if (flags.peer) {
    log("llama-server is not built yet: building it now (npm run bench:peer-build, ~5 minutes)");
    return buildPeer();
  }
  const skip = "llama-server: SKIPPED — not built. Run `npm run bench:peer-build` once (~5 minutes) or pass --peer.";
  log(skip);
  notes.push(skip);
  return undefined;
}

interface Running {
  inProcess?: Child<EngineReady>;
  sidecar?: Child<SidecarReady>;
  edge?: Child<EdgeReady>;
  wrangler?: Wrangler;
  miniflare?: RunningMiniflare;
  peer?: RunningPeer;
  rejectSidecar?: Child<SidecarReady>;
  rejectEdge?: Child<EdgeReady>;
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
async function watched<T>(section: string, notes: string[], loads: Record<string, unknown>, work: () => Promise<T>): Promise<T> {
  const before = machineSnapshot();
  const result = await work();
  const load = otherLoad(before, machineSnapshot());
  loads[section] = load;
  if (load.otherCores >= 0.1 || load.stealCores >= 0.05) {
    notes.push(`During the ${section} section, other processes used ${load.otherCores.toFixed(2)} cores on average and the hypervisor stole ${load.stealCores.toFixed(2)}: its figures are noisier.`);
  }
  return result;
}

/** Runs `work` with V8 CPU profiles of `children` when `dir` is set: `<dir>/<section>-<child>.cpuprofile`. */
async function profiled<T>(dir: string | undefined, section: string, children: readonly (Child<unknown> | undefined)[], work: () => Promise<T>): Promise<T> {
  const list = children.filter((c): c is Child<unknown> => c !== undefined);
  if (dir === undefined) return work();
  mkdirSync(dir, { recursive: true });
  await Promise.all(list.map((c) => c.call("profile-start")));
  try {
    return await work();
  } finally {
    const files = await Promise.all(list.map((c) => c.call<string>("profile-stop", join(dir, `${section}-${c.name}.cpuprofile`))));
    log(`profiles: ${files.join(", ")} (read them with: npx tsx bench/profile-summary.ts <file>)`);
  }
}

async function main(): Promise<void> {
  const flags = readFlags(process.argv.slice(2));
  if (flags === "help") {
    console.log(USAGE);
    return;
  }
  const startedAt = new Date().toISOString();
  const has = (s: Section): boolean => flags.sections.includes(s);
  const notes: string[] = [];
  const previous = readPrevious(flags.out);
  const profileDir = flags.profile ? join(resultsDir(flags.out), "profiles") : undefined;

  const { "random-60m": modelPath } = await ensureModels("models", ["random-60m"]);
  const peerInfo = has("single") || has("sweep") || has("long") || has("embeddings") ? peerFor(flags, notes) : undefined;
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
  const processes: ProcessInfo[] = [];
  const raw: Record<string, unknown> = {};
  const loads: Record<string, unknown> = {};
  let single: SingleResult | undefined;
  let sweep: SweepResult | undefined;
  let reject: ConcurrentRun | undefined;
  let prefix: PrefixResult | undefined;
  let stateful: StatefulResult | undefined;
  let encoders: EncoderReport | undefined;
  let memory: MemoryRow[] | undefined;
  let engine: EngineResult | undefined;
  let joining: JoinResult | undefined;
  let long: LongResult | undefined;
  let embeddings: EmbeddingsResult | undefined;
  const running: Running = {};

  const onSignal = (): void => {
    log("interrupted: stopping what the bench started");
    stopAll(running).finally(() => process.exit(130));
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);

  try {
    // 1. Encoders first, alone on the machine.
    if (has("encoders")) {
      log("SSE encoder micro-bench");
      const child = await startChild<unknown>("encoders", "encoders.ts", { reps: flags.encoderReps, ms: flags.encoderMs, tokens: flags.maxTokens } satisfies EncoderArgs);
      encoders = await child.call<EncoderReport>("run");
      await child.stop();
    }

    // 2. The engine builds side by side, in-process, alone on the machine.
    if (has("engine")) engine = await watched("engine", notes, loads, () => compareEngines(engineArgs, flags, workload, notes));

    const needServers = has("single") || has("sweep") || has("prefix") || has("stateful") || has("join");
    if (needServers) {
      log(`starting the sidecar (threads ${flags.threads}, batch threads ${flags.threadsBatch}, engine ${flags.engine}, ${flags.sequences} sequences × ${flags.contextSize} tokens, queue ${flags.maxQueue})`);
      running.sidecar = await startChild<SidecarReady>("sidecar", "sidecar.ts", engineArgs);
      notes.push(`The model runs on: ${running.sidecar.ready.gpu ?? "?"} (the figures of docs/performance.md were measured on CPU-only hosts).`);
      running.edge = await startChild<EdgeReady>("edge", "edge.ts", { sidecarUrl: running.sidecar.ready.url });
      if (peerInfo) {
        running.peer = await startPeer(peerInfo, { modelPath, threads: flags.threads, threadsBatch: flags.threadsBatch, sequences: flags.sequences, contextSize: flags.contextSize });
        log(`llama-server: ${running.peer.args.join(" ")}`);
      }
    }
    const sidecar = running.sidecar;
    const edge = running.edge;
    const client = sidecar ? grpcClient(sidecar.ready.url) : undefined;
    const peerParty: Party | undefined = running.peer ? httpParty("peer", "llama-server (peer)", running.peer.url, workload) : undefined;
    const footprints = async (gc: boolean): Promise<Record<string, Footprint> | undefined> =>
      sidecar && edge ? { sidecar: await footprint(sidecar, gc), "edge on Node": await footprint(edge, gc) } : undefined;
    // The idle footprint: after start-up and one warm-up request through the edge, after a GC.
    if (edge) await httpParty("c", "edge on Node", edge.ready.url, { ...workload, maxTokens: 8 }).run(9_000);
    const idle = await footprints(true);

    // 3. Single stream: (a) (b) (c) (d) and the peer, interleaved.
    if (has("single") && sidecar && edge && client) {
      running.inProcess = await startChild<EngineReady>("in-process", "inprocess.ts", engineArgs);
      if (flags.wrangler) {
        log("starting the edge under wrangler dev");
        running.wrangler = await startWrangler({ SIDECAR_URL: sidecar.ready.url });
        running.miniflare = await startMiniflare(sidecar.ready.url);
      } else notes.push("(d) wrangler dev: left out (--no-wrangler).");
      const parties: Party[] = [
        inProcessParty(running.inProcess, workload),
        grpcParty(client, workload),
        httpParty("c", "(c) edge on Node, HTTP/SSE", edge.ready.url, workload),
        // The cost of a resumable stream: the sidecar keeps its events, the edge numbers its frames.
        httpParty("r", "(r) edge on Node, resumable (x-resumable)", edge.ready.url, workload, { "x-resumable": "true" }),
      ];
      if (running.wrangler) parties.push(httpParty("d", "(d) edge under wrangler dev", running.wrangler.url, workload));
      // The same Worker on workerd without wrangler's local proxy: what of (d) is the proxy's.
      if (running.miniflare) parties.push(httpParty("m", "(m) edge under Miniflare (workerd, no wrangler proxy)", running.miniflare.url, workload));
      if (peerParty) parties.push(peerParty);
      log(`single stream: ${flags.runs} runs × ${parties.length} parties, ${flags.maxTokens} tokens each`);
      const meter = new CpuMeter(
        new Map([
          [running.inProcess.pid, "in-process"],
          [sidecar.pid, "sidecar"],
          [edge.pid, "edge (Node)"],
          ...(running.peer ? [[running.peer.pid, "llama-server"] as const] : []),
          ...(running.miniflare ? [[running.miniflare.pid, "Miniflare (node)"] as const] : []),
        ]),
      );
      const inProcess = running.inProcess;
      single = await watched("single-stream", notes, loads, () =>
        profiled(profileDir, "single", [inProcess, sidecar, edge], () => runSingle(parties, flags.runs, meter, log)),
      );
      processes.push({ name: "(a) in-process node-llama-cpp", build: engineBuild(running.inProcess), peakRssMiB: peakRssMiB(running.inProcess.pid) });
      for (const pid of descendantsNamed(process.pid, "workerd")) processes.push({ name: `workerd (wrangler dev) pid ${pid}`, build: "–", peakRssMiB: peakRssMiB(pid) });
      await running.inProcess.stop();
      delete running.inProcess;
      await running.wrangler?.stop();
      delete running.wrangler;
      await running.miniflare?.stop();
      delete running.miniflare;
    }

    // 4. Concurrency sweep through the edge on Node (and the peer at 1 and `sequences` streams).
    if (has("sweep") && edge) {
      const edgeParty = httpParty("c", "edge on Node", edge.ready.url, workload);
      const peerLevels = [1, flags.sequences].filter((l) => flags.levels.includes(l));
      log(`sweep: levels ${flags.levels.join(", ")} × ${flags.sweepRuns} runs`);
      sweep = await watched("sweep", notes, loads, () =>
        profiled(profileDir, "sweep", [sidecar, edge], () => runSweep(edgeParty, peerParty, flags.levels, peerLevels, flags.sweepRuns, log)),
      );
    }
    if (running.peer) {
      processes.push({ name: "llama-server (peer)", build: `peer build, ${cpuBackend(running.peer.pid) ?? "?"}`, peakRssMiB: peakRssMiB(running.peer.pid) });
      await running.peer.stop();
      delete running.peer;
    }

    // 5. Prefix reuse.
    if (has("prefix") && client && edge) {
      const options = { rounds: flags.prefixRounds, warm: flags.prefixWarm, tokens: flags.prefixTokens, timeoutMs: flags.streamTimeoutMs };
      prefix = await watched("prefix", notes, loads, () => runPrefix(client, edge.ready.url, options, log));
    }
    // 5b. Stateful conversations: a stored conversation's next turn vs cold, the store on vs off.
    if (has("stateful") && client && edge) {
      const options = { rounds: flags.prefixRounds, tokens: flags.prefixTokens, timeoutMs: flags.streamTimeoutMs };
      stateful = await watched("stateful", notes, loads, () => runStateful(client, edge.ready.url, options, log));
    }
    // 6. A long prompt joins two decoding streams.
    if (has("join") && client) {
      joining = await watched("join", notes, loads, () => runJoin(client, { rounds: flags.joinRounds, tokens: flags.prefixTokens }, log));
    }
    // The footprint right after the load (single stream, sweep, prefix reuse), and once settled.
    const loaded = await footprints(false);
    const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    await settle();
    const settled = await footprints(true);
    // A second, shorter load of the same kinds with new prompts: it must leave nothing more behind.
    let again: Record<string, Footprint> | undefined;
    if (settled && edge && client && (has("sweep") || has("prefix"))) {
      log("memory: a second load (one sweep run at the two highest levels, one prefix round)");
      if (has("sweep")) {
        const edgeParty = httpParty("c", "edge on Node", edge.ready.url, workload);
        await runSweep(edgeParty, undefined, flags.levels.slice(-2), [], 1, log, flags.sweepRuns);
      }
      if (has("prefix")) {
        const options = { rounds: 1, warm: flags.prefixWarm, tokens: flags.prefixTokens, timeoutMs: flags.streamTimeoutMs, firstRound: flags.prefixRounds };
        await runPrefix(client, edge.ready.url, options, log);
      }
      await settle();
      again = await footprints(true);
    }
    if (idle && loaded && settled) {
      memory = Object.keys(idle).map((name) => ({ name, idle: idle[name], loaded: loaded[name], settled: settled[name], again: again?.[name] }) as MemoryRow);
    }
    if (sidecar && edge) {
      raw["sidecarMetrics"] = await sidecar.call("metrics");
      processes.unshift(
        { name: "sidecar", build: engineBuild(sidecar), peakRssMiB: peakRssMiB(sidecar.pid) },
        { name: "edge on Node", build: "–", peakRssMiB: peakRssMiB(edge.pid) },
      );
    }
    await stopAll(running);

    // 7. A small queue: the streams beyond sequences + queue must get an immediate 429.
    if (has("reject")) {
      log(`rejection run: ${flags.rejectStreams} streams, ${flags.sequences} sequences, queue ${flags.rejectQueue}`);
      running.rejectSidecar = await startChild<SidecarReady>("sidecar-small-queue", "sidecar.ts", { ...engineArgs, maxQueue: flags.rejectQueue });
      running.rejectEdge = await startChild<EdgeReady>("edge-small-queue", "edge.ts", { sidecarUrl: running.rejectSidecar.ready.url });
      const party = httpParty("c", "edge on Node", running.rejectEdge.ready.url, workload);
      reject = await runConcurrent(flags.rejectStreams, (i) => party.run(sweepVariant(90, flags.rejectStreams, i)));
      raw["rejectSidecarMetrics"] = await running.rejectSidecar.call("metrics");
      await stopAll(running);
    }

    // 8. An agent-sized prompt on a context of its own, cold and with its prefix cached.
    if (has("long")) {
      const contextSize = flags.longTokens + LONG_CONTEXT_MARGIN;
      running.sidecar = await startChild<SidecarReady>("sidecar-long", "sidecar.ts", { ...engineArgs, sequences: 1, contextSize });
      if (peerInfo) running.peer = await startPeer(peerInfo, { modelPath, threads: flags.threads, threadsBatch: flags.threadsBatch, sequences: 1, contextSize });
      const options = { tokens: flags.longTokens, contextSize, timeoutMs: 30 * 60_000 };
      const longClient = grpcClient(running.sidecar.ready.url);
      long = await watched("long", notes, loads, () => runLong(longClient, running.peer?.url, options, log));
      await stopAll(running);
    }

    // 9. Embeddings per second at 1 and 8 clients, the edge and the peer side by side.
    if (has("embeddings")) {
      running.sidecar = await startChild<SidecarReady>("sidecar-embeddings", "sidecar.ts", engineArgs);
      running.edge = await startChild<EdgeReady>("edge-embeddings", "edge.ts", { sidecarUrl: running.sidecar.ready.url });
      const extraArgs = ["--embeddings", "--pooling", "last"];
      if (peerInfo) running.peer = await startPeer(peerInfo, { modelPath, threads: flags.threads, threadsBatch: flags.threadsBatch, sequences: flags.sequences, contextSize: flags.contextSize, extraArgs });
      const parties = [{ name: "edge on Node", url: running.edge.ready.url }, ...(running.peer ? [{ name: "llama-server (peer)", url: running.peer.url }] : [])];
      const options = { levels: [1, 8], perClient: flags.embeddingRequests, timeoutMs: flags.streamTimeoutMs };
      embeddings = await watched("embeddings", notes, loads, () => runEmbeddings(parties, options, log));
      await stopAll(running);
    }
  } finally {
    await stopAll(running);
  }

  const singleSummary = single ? summarizeSingle(single) : undefined;
  const sweepSummary = sweep ? summarizeSweep(sweep) : undefined;
  const rejectSummary = reject ? summarizeLevel([reject]) : undefined;
  const prefixRows = prefix ? summarizePrefix(prefix) : undefined;
  const engineRows = engine ? summarizeEngine(engine) : undefined;
  const joinSummary = joining ? summarizeJoin(joining) : undefined;
  const statefulRows = stateful ? summarizeStateful(stateful) : undefined;
  const targets = [
    ...evaluateTargets({ single: singleSummary, sweep: sweepSummary, reject: rejectSummary, prefix: prefixRows, memory, concurrent: flags.sequences }),
    ...(statefulRows ? statefulTargets(statefulRows) : []),
  ];
  const m = machine();
  const settings =
    `random-60m (F16), ${flags.maxTokens} tokens per stream, temperature 0, threads ${flags.threads} (batches of several tokens: ${flags.threadsBatch}) for every party, ` +
    `${flags.sequences} sequences × ${flags.contextSize} tokens, sidecar queue ${flags.maxQueue}` +
    (single ? `; single stream ${flags.runs} runs per party` : "") +
    (sweep ? `; sweep ${flags.sweepRuns} runs per level` : "");
  const report = appendStateful(renderReport({
    machine: m,
    date: startedAt.slice(0, 16).replace("T", " ") + " UTC",
    settings,
    notes,
    single: singleSummary,
    sweep: sweepSummary,
    reject: rejectSummary ? { summary: rejectSummary, queue: flags.rejectQueue } : undefined,
    prefix: prefixRows && prefix ? { rows: prefixRows, systemPromptTokens: prefix.systemPromptTokens } : undefined,
    encoders,
    engine: engineRows && engine ? { rows: engineRows, streams: engine.streams, rounds: engine.rounds } : undefined,
    join: joinSummary ? { summary: joinSummary, rounds: joining?.rounds.length ?? 0 } : undefined,
    long,
    embeddings,
    processes,
    memory,
    targets,
  }), statefulRows && stateful ? renderStateful(statefulRows, stateful.conversationTokens) : undefined);

  const headline: Record<string, number> = {};
  for (const p of singleSummary ?? []) {
    headline[`single ${p.key} decode tok/s`] = p.decodeTps;
    headline[`single ${p.key} TTFT ms`] = p.ttftMs;
  }
  for (const l of sweepSummary?.edge ?? []) headline[`edge ${l.streams} streams aggregate tok/s`] = l.aggregateTps;
  for (const l of sweepSummary?.peer ?? []) headline[`llama-server ${l.streams} streams aggregate tok/s`] = l.aggregateTps;
  for (const p of prefixRows ?? []) headline[`prefix ${p.path} ${p.kind} engine prompt ms`] = p.enginePromptMs;
  for (const r of statefulRows ?? []) {
    headline[`stateful ${r.path} next turn TTFT ms`] = r.nextTtftMs;
    headline[`stateful ${r.path} cold TTFT ms`] = r.coldTtftMs;
  }
  for (const r of engineRows ?? []) {
    headline[`engine ${r.library} ${r.threads} 1 stream tok/s`] = r.singleTps;
    headline[`engine ${r.library} ${r.threads} ${engine?.streams ?? 0} streams tok/s`] = r.concurrentTps;
  }
  if (joinSummary) {
    headline["join: streams' longest token gap ms"] = joinSummary.longestGapMs;
    headline["join: long prompt TTFT ms"] = joinSummary.joinedTtftMs;
  }
  for (const p of embeddings?.parties ?? []) {
    for (const l of p.levels) headline[`embeddings ${p.name} ${l.clients} client(s) per s`] = l.perSecond;
  }
  for (const p of long?.parties ?? []) {
    headline[`long prompt ${p.name} cold prompt tok/s`] = promptRate(p.cold);
    headline[`long prompt ${p.name} prefix-cached prompt ms`] = p.cached.promptMs;
  }
  for (const e of encoders?.results ?? []) headline[`encoder ${e.protocol} chunks/s`] = e.medianChunksPerSecond;
  for (const p of processes) if (p.peakRssMiB !== undefined) headline[`peak RSS ${p.name} MiB`] = p.peakRssMiB;
  for (const row of memory ?? []) headline[`settled RSS ${row.name} MiB`] = row.settled.rssMiB;

  const results: ResultsFile = {
    version: 1,
    startedAt,
    finishedAt: new Date().toISOString(),
    headline,
    machine: m,
    flags,
    peer: peerInfo ?? null,
    notes,
    otherLoad: loads,
    summaries: { engine: engineRows, join: joinSummary, single: singleSummary, sweep: sweepSummary, reject: rejectSummary, prefix: prefixRows, stateful: statefulRows },
    targets,
    raw: { ...raw, engine, join: joining, long, embeddings, single, sweep, reject, prefix, stateful, encoders },
    processes,
    memory: memory ?? null,
    table: report,
  };
  const files = writeResults(flags.out, results);
  process.stdout.write(report);
  if (previous) process.stdout.write(`\n${compare(previous, results)}\n`);
  log(`results: ${files.join(", ")}`);
}

/** The engine section's thread settings: [threads, batch threads]. */
const ENGINE_THREADS = [[1, 1], [2, 2], [1, 2]] as const;

/**
 * In-process children on the prebuilt library and on this host's own build (when there is one),
 * on 1 and 2 threads and on 1 with 2 for batches, all loaded before the first round.
 */
async function compareEngines(args: EngineArgs, flags: BenchFlags, w: Workload, notes: string[]): Promise<EngineResult> {
  const parties: EngineParty[] = [];
  try {
    for (const library of ["prebuilt", "local"] as const) {
      for (const [threads, threadsBatch] of ENGINE_THREADS) {
        let child: Child<EngineReady>;
        try {
          child = await startChild<EngineReady>(`in-process ${library} ${threads}/${threadsBatch}`, "inprocess.ts", { ...args, engine: library, threads, threadsBatch });
        } catch (error) {
          if (library === "local") {
            notes.push("engine builds: no local build here (`npm run build:engine`), so only the prebuilt library is shown.");
            break;
          }
          throw error;
        }
        parties.push({ library: library === "local" ? "local build (thread pool)" : "prebuilt", threads, threadsBatch, child });
      }
    }
    log(`engine builds: ${parties.length} configurations × ${flags.engineRounds} rounds, 1 and ${flags.sequences} streams`);
    return await runEngine(parties, w, flags.sequences, flags.engineRounds, log);
  } finally {
    // A child that fails to start has exited; the parent going away ends the others (ipc.ts).
    for (const party of parties) await party.child.stop();
  }
}

/** The stateful section's table, before the report's targets (which list its targets too). */
function appendStateful(report: string, section: string | undefined): string {
  if (section === undefined) return report;
  const at = report.indexOf("\n**Targets**");
  return at === -1 ? `${report}${section}\n` : `${report.slice(0, at)}${section}\n${report.slice(at)}`;
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
