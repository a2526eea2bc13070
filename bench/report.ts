/**
 * The end of `npm run bench`: each section's measurements summarized, the markdown report, the
 * headline figures, and the results file written (run-bench.ts runs the sections).
 */
import { basename } from "node:path";
import type { EncoderReport } from "./children/encoders.js";
import { machine } from "./machine.js";
import type { MemoryRow } from "./memory.js";
import type { PeerInfo } from "./peer-paths.js";
import { compare, writeResults, type ResultsFile } from "./results-file.js";
import type { ConcurrentRun } from "./sections/concurrent.js";
import type { BatchResult } from "./sections/batch.js";
import { batchHeadline, batchTargets, renderBatch, summarizeBatch } from "./sections/batch-report.js";
import type { EmbeddingsResult } from "./sections/embeddings.js";
import { summarizeEngine, type EngineResult } from "./sections/engine.js";
import { summarizeJoin, type JoinResult } from "./sections/join.js";
import { longDecodeRate, promptRate, summarizeLong, type LongResult } from "./sections/long.js";
import { editTtftMs, renderFim, type FimResult } from "./sections/fim.js";
import { modelsHeadline, renderModels, summarizeModels, type ModelsResult } from "./sections/many-models.js";
import type { NewcomerResult } from "./sections/newcomer.js";
import { newcomerHeadline, newcomerTargets, renderNewcomer, summarizeNewcomer } from "./sections/newcomer-report.js";
import type { PrefixResult } from "./sections/prefix.js";
import { renderSessions, sessionsHeadline, summarizeSessions, type SessionsResult } from "./sections/sessions.js";
import type { SingleResult } from "./sections/single.js";
import { renderStateful, statefulTargets, summarizeStateful, type StatefulResult } from "./sections/stateful.js";
import type { SweepResult } from "./sections/sweep.js";
import type { BenchFlags } from "./flags.js";
import { summarizeLevel, summarizePrefix, summarizeSingle, summarizeSweep, type Target } from "./summary.js";
import { renderReport, type ProcessInfo } from "./table.js";
import { evaluateTargets } from "./targets.js";

/** Each section's measurements; a section left out leaves its own undefined. */
export interface Measured {
  single?: SingleResult | undefined;
  sweep?: SweepResult | undefined;
  reject?: ConcurrentRun | undefined;
  prefix?: PrefixResult | undefined;
  stateful?: StatefulResult | undefined;
  encoders?: EncoderReport | undefined;
  memory?: MemoryRow[] | undefined;
  engine?: EngineResult | undefined;
  joining?: JoinResult | undefined;
  long?: LongResult | undefined;
  embeddings?: EmbeddingsResult | undefined;
  sessions?: SessionsResult | undefined;
  models?: ModelsResult | undefined;
  batch?: BatchResult | undefined;
  newcomer?: NewcomerResult | undefined;
  fim?: FimResult | undefined;
}

/** What the run noted besides the sections' own results. */
export interface RunRecord {
  readonly flags: BenchFlags;
  readonly startedAt: string;
  readonly notes: readonly string[];
  readonly loads: Record<string, unknown>;
  readonly processes: readonly ProcessInfo[];
  readonly raw: Record<string, unknown>;
  /** The llama-server builds this run found (the default build first). */
  readonly peerInfos: readonly PeerInfo[];
  /** The model's file. */
  readonly modelPath: string;
}

type Summaries = ReturnType<typeof summarize>;

function summarize(m: Measured) {
  return {
    single: m.single ? summarizeSingle(m.single) : undefined,
    sweep: m.sweep ? summarizeSweep(m.sweep) : undefined,
    reject: m.reject ? summarizeLevel([m.reject]) : undefined,
    prefix: m.prefix ? summarizePrefix(m.prefix) : undefined,
    engine: m.engine ? summarizeEngine(m.engine) : undefined,
    join: m.joining ? summarizeJoin(m.joining) : undefined,
    stateful: m.stateful ? summarizeStateful(m.stateful) : undefined,
    sessions: m.sessions ? summarizeSessions(m.sessions) : undefined,
    long: m.long ? summarizeLong(m.long) : undefined,
    models: m.models ? summarizeModels(m.models) : undefined,
    batch: m.batch ? summarizeBatch(m.batch) : undefined,
    newcomer: m.newcomer ? summarizeNewcomer(m.newcomer) : undefined,
  };
}

/** The tables of the stateful and many-models sections, before the report's targets (which list their targets too). */
function beforeTargets(report: string, sections: readonly (string | undefined)[]): string {
  const tables = sections.filter((t): t is string => t !== undefined);
  if (tables.length === 0) return report;
  const text = tables.map((t) => `${t}\n`).join("");
  const at = report.indexOf("\n**Targets**");
  return at === -1 ? `${report}${text}` : `${report.slice(0, at)}${text}${report.slice(at)}`;
}

function settingsLine(flags: BenchFlags, m: Measured, modelPath: string): string {
  return (
    `${basename(modelPath)}, ${flags.maxTokens} tokens per stream, temperature 0, threads ${flags.threads} (batches ` +
    `of several ` +
    `tokens: ${flags.threadsBatch}) for every party, ` +
    `${flags.sequences} sequences × ${flags.contextSize} tokens, sidecar queue ${flags.maxQueue}` +
    (m.single ? `; single stream ${flags.runs} runs per party` : "") +
    (m.sweep ? `; sweep ${flags.sweepRuns} runs per level` : "") +
    (m.models ? `; many models ${flags.modelsRuns} load rounds, ${flags.modelsRequests} requests per catalogue` : "")
  );
}

/** The markdown report printed on stdout. */
function render(
  run: RunRecord,
  m: Measured,
  s: Summaries,
  targets: ReturnType<typeof evaluateTargets>,
  machineInfo: ReturnType<typeof machine>,
): string {
  const newcomer = s.newcomer && m.newcomer ? `${renderNewcomer(s.newcomer, m.newcomer)}\n\n` : "";
  return newcomer + renderSections(run, m, s, targets, machineInfo);
}

function renderSections(
  run: RunRecord,
  m: Measured,
  s: Summaries,
  targets: ReturnType<typeof evaluateTargets>,
  machineInfo: ReturnType<typeof machine>,
): string {
  const { flags } = run;
  return beforeTargets(
    renderReport({
      machine: machineInfo,
      date: `${run.startedAt.slice(0, 16).replace("T", " ")} UTC`,
      settings: settingsLine(flags, m, run.modelPath),
      notes: run.notes,
      sessions: s.sessions && m.sessions ? renderSessions(s.sessions, m.sessions) : undefined,
      single: s.single,
      sweep: s.sweep,
      reject: s.reject ? { summary: s.reject, queue: flags.rejectQueue } : undefined,
      prefix: s.prefix && m.prefix ? { rows: s.prefix, systemPromptTokens: m.prefix.systemPromptTokens } : undefined,
      encoders: m.encoders,
      engine: s.engine && m.engine ? { rows: s.engine, streams: m.engine.streams, rounds: m.engine.rounds } : undefined,
      join: s.join ? { summary: s.join, rounds: m.joining?.rounds.length ?? 0 } : undefined,
      long: m.long,
      embeddings: m.embeddings,
      processes: run.processes,
      memory: m.memory,
      targets,
    }),
    [
      s.stateful && m.stateful ? renderStateful(s.stateful, m.stateful.conversationTokens) : undefined,
      s.models && m.models ? renderModels(s.models, m.models) : undefined,
      s.batch && m.batch ? renderBatch(s.batch, m.batch) : undefined,
      m.fim ? renderFim(m.fim) : undefined,
    ],
  );
}

/** The single-stream, sweep, prefix, stateful and engine figures of the headline. */
function streamHeadline(headline: Record<string, number>, m: Measured, s: Summaries): void {
  for (const p of s.single ?? []) {
    headline[`single ${p.key} decode tok/s`] = p.decodeTps;
    headline[`single ${p.key} TTFT ms`] = p.ttftMs;
  }
  for (const l of s.sweep?.edge ?? []) headline[`edge ${l.streams} streams aggregate tok/s`] = l.aggregateTps;
  for (const p of s.sweep?.peers ?? [])
    for (const l of p.levels) headline[`${p.label} ${l.streams} streams aggregate tok/s`] = l.aggregateTps;
  for (const p of s.prefix ?? []) headline[`prefix ${p.path} ${p.kind} engine prompt ms`] = p.enginePromptMs;
  for (const r of s.stateful ?? []) {
    headline[`stateful ${r.path} next turn TTFT ms`] = r.nextTtftMs;
    headline[`stateful ${r.path} cold TTFT ms`] = r.coldTtftMs;
  }
  for (const r of s.engine ?? []) {
    headline[`engine ${r.library} ${r.threads} 1 stream tok/s`] = r.singleTps;
    headline[`engine ${r.library} ${r.threads} ${m.engine?.streams ?? 0} streams tok/s`] = r.concurrentTps;
  }
}

/** Headline figures by name, for comparing runs (results-file.ts). */
function headlineOf(run: RunRecord, m: Measured, s: Summaries): Record<string, number> {
  const headline: Record<string, number> = {};
  streamHeadline(headline, m, s);
  if (s.sessions) sessionsHeadline(s.sessions, headline);
  if (s.models) modelsHeadline(s.models, headline);
  if (s.batch) batchHeadline(s.batch, headline);
  if (s.newcomer) newcomerHeadline(s.newcomer, headline);
  if (s.join) {
    headline["join: streams' longest token gap ms"] = s.join.longestGapMs;
    headline["join: long prompt TTFT ms"] = s.join.joinedTtftMs;
  }
  for (const p of m.embeddings?.parties ?? []) {
    for (const l of p.levels) headline[`embeddings ${p.name} ${l.clients} client(s) per s`] = l.perSecond;
  }
  for (const p of m.long?.parties ?? []) {
    headline[`long prompt ${p.name} cold prompt tok/s`] = promptRate(p.cold);
    headline[`long prompt ${p.name} prefix-cached prompt ms`] = p.cached.promptMs;
    headline[`long prompt ${p.name} decode tok/s`] = longDecodeRate(p);
  }
  for (const p of m.fim?.parties ?? []) {
    headline[`fim ${p.name} cold first token ms`] = p.cold.ttftMs;
    headline[`fim ${p.name} edit first token ms`] = editTtftMs(p);
  }
  for (const e of m.encoders?.results ?? []) headline[`encoder ${e.protocol} chunks/s`] = e.medianChunksPerSecond;
  for (const p of run.processes) if (p.peakRssMiB !== undefined) headline[`peak RSS ${p.name} MiB`] = p.peakRssMiB;
  for (const row of m.memory ?? []) headline[`settled RSS ${row.name} MiB`] = row.settled.rssMiB;
  return headline;
}

/** Every target of the sections that ran. */
function targetsOf(flags: BenchFlags, m: Measured, s: Summaries): Target[] {
  const inputs = {
    single: s.single,
    sweep: s.sweep,
    sessions: s.sessions,
    reject: s.reject,
    prefix: s.prefix,
    memory: m.memory,
    models: s.models,
  };
  return [
    ...(s.newcomer ? newcomerTargets(s.newcomer) : []),
    ...evaluateTargets({ ...inputs, concurrent: flags.sequences }),
    ...(s.stateful ? statefulTargets(s.stateful) : []),
    ...(s.batch ? batchTargets(s.batch) : []),
  ];
}

/** Prints the report (and the comparison with `previous`) and writes the results files. */
export function finishRun(run: RunRecord, m: Measured, previous: ResultsFile | undefined): void {
  const { flags } = run;
  const s = summarize(m);
  const targets = targetsOf(flags, m, s);
  const machineInfo = machine();
  const report = render(run, m, s, targets, machineInfo);
  const results: ResultsFile = {
    version: 1,
    startedAt: run.startedAt,
    finishedAt: new Date().toISOString(),
    headline: headlineOf(run, m, s),
    machine: machineInfo,
    flags,
    model: run.modelPath,
    peers: run.peerInfos,
    notes: run.notes,
    otherLoad: run.loads,
    summaries: {
      engine: s.engine,
      join: s.join,
      single: s.single,
      sweep: s.sweep,
      reject: s.reject,
      prefix: s.prefix,
      stateful: s.stateful,
      sessions: s.sessions,
      long: s.long,
      models: s.models,
      batch: s.batch,
      newcomer: s.newcomer,
    },
    targets,
    raw: {
      ...run.raw,
      engine: m.engine,
      join: m.joining,
      long: m.long,
      fim: m.fim,
      embeddings: m.embeddings,
      single: m.single,
      sweep: m.sweep,
      reject: m.reject,
      prefix: m.prefix,
      stateful: m.stateful,
      sessions: m.sessions,
      models: m.models,
      batch: m.batch,
      newcomer: m.newcomer,
      encoders: m.encoders,
    },
    processes: run.processes,
    memory: m.memory ?? null,
    table: report,
  };
  const files = writeResults(flags.out, results);
  process.stdout.write(report);
  if (previous) process.stdout.write(`\n${compare(previous, results)}\n`);
  process.stderr.write(`bench: results: ${files.join(", ")}\n`);
}
