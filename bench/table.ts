// The markdown report (stdout and README): one table per section, then the targets.
import type { EncoderReport } from "./children/encoders.js";
import type { Machine } from "./machine.js";
import { SETTLE_MS, type MemoryRow } from "./memory.js";
import { threadsLabel, type EngineRow } from "./sections/engine.js";
import type { JoinSummary } from "./sections/join.js";
import { findPeer, type PeerVariant } from "./peer-paths.js";
import { longDecodeRate, promptRate, type LongResult } from "./sections/long.js";
import type { EmbeddingsResult } from "./sections/embeddings.js";
import type { LevelSummary, PartySummary, PrefixRow, SweepSummary, Target } from "./summary.js";

export interface ProcessInfo {
  readonly name: string;
  readonly build: string;
  readonly peakRssMiB: number | undefined;
}

export interface Report {
  readonly machine: Machine;
  readonly date: string;
  readonly settings: string;
  readonly notes: readonly string[];
  /** The many-sessions table, rendered (sections/sessions.ts): the report's first. */
  readonly sessions?: string | undefined;
  readonly single?: PartySummary[] | undefined;
  readonly sweep?: SweepSummary | undefined;
  readonly reject?: { summary: LevelSummary; queue: number } | undefined;
  readonly prefix?: { rows: PrefixRow[]; systemPromptTokens: number } | undefined;
  readonly encoders?: EncoderReport | undefined;
  readonly engine?: { rows: EngineRow[]; streams: number; rounds: number } | undefined;
  readonly join?: { summary: JoinSummary; rounds: number } | undefined;
  readonly long?: LongResult | undefined;
  readonly embeddings?: EmbeddingsResult | undefined;
  readonly processes: readonly ProcessInfo[];
  readonly memory?: readonly MemoryRow[] | undefined;
  readonly targets: readonly Target[];
}

export function fmt(value: number | undefined, digits = 1): string {
  if (value === undefined || !Number.isFinite(value)) return "–";
  return value.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]): string => `| ${cells.join(" | ")} |`;
  return [line(header), line(header.map(() => "---")), ...rows.map(line)].join("\n");
}

/** "default / prebuilt-like" figures against the two llama-server builds; "–" when neither ran. */
export function againstPeers(values: Readonly<Record<PeerVariant, number>>, format: (v: number) => string): string {
  if (!Number.isFinite(values.default) && !Number.isFinite(values.prebuilt)) return "–";
  return (
    `${Number.isFinite(values.default) ? format(values.default) : "–"} / ` +
    `${Number.isFinite(values.prebuilt) ? format(values.prebuilt) : "–"}`
  );
}

const times = (v: number): string => `${fmt(v, 2)}×`;
const signedMs = (v: number): string => `${v >= 0 ? "+" : ""}${fmt(v)}`;

const verdict = (pass: boolean | undefined): string =>
  pass === undefined ? "not measured" : pass ? "**pass**" : "**FAIL**";

function levelRow(label: string, l: LevelSummary): string[] {
  return [
    label,
    String(l.streams),
    fmt(l.aggregateTps),
    `${fmt(l.streamTpsMin)} / ${fmt(l.streamTpsMean)} / ${fmt(l.streamTpsMax)}`,
    `${fmt(l.worstSpread, 2)}×`,
    fmt(l.ttftP50, 0),
    fmt(l.ttftP99, 0),
    `${l.completed} / ${l.rejected} / ${l.failed + l.hung}`,
  ];
}

/** Engine builds side by side, with ratios to the prebuilt library on 1 thread. */
function engineTable(engine: NonNullable<Report["engine"]>): string[] {
  const out: string[] = [];
  const { rows, streams, rounds } = engine;
  const base = rows.find((row) => row.library === "prebuilt" && row.threads === threadsLabel(1, 1));
  const ratio = (value: number, of: number | undefined): string => (of === undefined ? "–" : `${fmt(value / of, 2)}×`);
  out.push(
    `\n**Engine builds** (node-llama-cpp in-process, alone on the machine: decode tok/s of one stream, aggregate ` +
      `tok/s of ${streams} streams at once; ` +
      `medians of ${rounds} round${rounds === 1 ? "" : "s"}; ratios to the prebuilt library on 1 thread)\n`,
  );
  out.push(
    table(
      ["llama.cpp library", "threads", "1 stream tok/s", "ratio", `${streams} streams tok/s`, "ratio"],
      rows.map((row) => [
        row.library,
        row.threads,
        fmt(row.singleTps),
        ratio(row.singleTps, base?.singleTps),
        fmt(row.concurrentTps),
        ratio(row.concurrentTps, base?.concurrentTps),
      ]),
    ),
  );
  return out;
}

/** One stream at a time through each party. */
function singleTable(single: readonly PartySummary[]): string[] {
  const out: string[] = [];
  out.push(
    "\n**Single stream** (decode tok/s excludes the first token; TTFT = request sent → first token; accepted = " +
      "response headers, " +
      "the gRPC `start` event, or in-process the prompt tokenized and a sequence taken; server prompt = the server's " +
      "own prompt timing; " +
      "vs llama-server = against its default build / the prebuilt-like one)\n",
  );
  out.push(
    table(
      [
        "path",
        "runs",
        "tokens",
        "decode tok/s (min–max)",
        "ratio to (a)",
        "decode vs llama-server",
        "TTFT p50 ms",
        "added TTFT ms",
        "TTFT vs llama-server ms",
        "accepted ms",
        "server prompt ms",
      ],
      single.map((p) => [
        p.label,
        `${p.completed}/${p.runs}`,
        fmt(p.tokens, 0),
        `${fmt(p.decodeTps)} (${fmt(p.decodeTpsMin)}–${fmt(p.decodeTpsMax)})`,
        fmt(p.decodeRatio, 3),
        againstPeers(p.decodeVsPeer, times),
        fmt(p.ttftMs),
        p.key === "a" ? "–" : fmt(p.addedTtftMs),
        againstPeers(p.ttftVsPeerMs, signedMs),
        fmt(p.acceptedMs),
        fmt(p.serverPromptMs),
      ]),
    ),
  );
  return out;
}

/** CPU ms per generated token by process and thread, for each single-stream party. */
function singleCpuTable(single: readonly PartySummary[]): string[] {
  const out: string[] = [];
  const roles = [...new Set(single.flatMap((p) => Object.keys(p.cpuMsPerToken)))].sort();
  out.push(
    "\n**Where a single stream's time goes** (CPU ms per generated token by process and thread, from /proc; the " +
      "machine has 2 CPU ms per wall ms)\n",
  );
  out.push(
    table(
      ["process", ...single.map((p) => p.label.replace(/^(\([a-d]\)).*/, "$1"))],
      [
        ["wall ms per token (decode)", ...single.map((p) => fmt(1000 / p.decodeTps, 2))],
        ...roles.map((role) => [role, ...single.map((p) => fmt(p.cpuMsPerToken[role], 2))]),
      ],
    ),
  );
  return out;
}

/** The concurrency sweep's levels, and the rejection run's. */
function sweepTable(sweep: Report["sweep"], reject: Report["reject"]): string[] {
  const out: string[] = [];
  out.push(
    "\n**Concurrency sweep** (aggregate = tokens of all streams / wall time of the run; spread = worst " +
      "max(rate/mean, mean/rate) in a run)\n",
  );
  const rows: string[][] = [];
  for (const l of sweep?.edge ?? []) rows.push(levelRow("edge (Node)", l));
  for (const p of sweep?.peers ?? []) for (const l of p.levels) rows.push(levelRow(p.label, l));
  if (reject) rows.push(levelRow(`edge, queue ${reject.queue}`, reject.summary));
  out.push(
    table(
      [
        "party",
        "streams",
        "aggregate tok/s",
        "per-stream tok/s min / mean / max",
        "spread",
        "TTFT p50 ms",
        "TTFT p99 ms",
        "completed / 429 / lost",
      ],
      rows,
    ),
  );
  if (reject) out.push(`\nRejected streams got their 429 within ${fmt(reject.summary.maxRejectMs, 0)} ms.`);
  return out;
}

/** Cold and cached requests of the prefix-reuse section. */
function prefixTable(prefix: NonNullable<Report["prefix"]>): string[] {
  const out: string[] = [];
  out.push(
    `\n**Prefix reuse** (system prompt of ${prefix.systemPromptTokens} tokens, different user turns; engine prompt ` +
      `ms = the sidecar's own prompt timing)\n`,
  );
  out.push(
    table(
      ["path", "request", "n", "prompt tokens", "cached tokens", "engine prompt ms", "TTFT p50 ms"],
      prefix.rows.map((p) => [
        p.path === "grpc" ? "sidecar, native gRPC" : "edge, chat completions",
        p.kind === "cold" ? "first (cold)" : "later (cached)",
        String(p.requests),
        fmt(p.promptTokens, 0),
        fmt(p.cachedTokens, 0),
        fmt(p.enginePromptMs),
        fmt(p.ttftMs),
      ]),
    ),
  );
  return out;
}

/** A long prompt joining two decoding streams. */
function joinTable(join: NonNullable<Report["join"]>): string[] {
  const out: string[] = [];
  const j = join.summary;
  out.push(
    `\n**A long prompt joins two decoding streams** (native gRPC; medians of ${join.rounds} ` +
      `round${join.rounds === 1 ? "" : "s"}; ` +
      "gaps = time between two tokens of a stream; the same kind of prompt alone, cold, for comparison)\n",
  );
  out.push(
    table(
      [
        "prompt tokens",
        "its TTFT alone ms",
        "its TTFT joining ms",
        "streams' median gap ms",
        "streams' longest gap while it is evaluated ms",
      ],
      [[fmt(j.promptTokens, 0), fmt(j.aloneTtftMs), fmt(j.joinedTtftMs), fmt(j.medianGapMs, 1), fmt(j.longestGapMs)]],
    ),
  );
  return out;
}

/** The agent-sized prompt, cold and with its prefix cached, and the decode after it. */
function longTable(long: LongResult): string[] {
  const out: string[] = [];
  const l = long;
  out.push(
    `\n**An agent-sized prompt** (${fmt(l.promptTokens, 0)} tokens, one sequence of ${fmt(l.contextSize, 0)} tokens; ` +
      `each server's own prompt time; ` +
      `prefix cached = the same prompt with a new ending, one run each; decode = that prompt again, ` +
      `${fmt(l.decodeTokens, 0)} tokens streamed, ` +
      "tok/s from the first to the last token, the first excluded; vs llama-server = against its default build / the " +
      "prebuilt-like one)\n",
  );
  type Party = LongResult["parties"][number];
  const ratio = (variant: PeerVariant, value: (p: Party) => number, p: Party): number => {
    const theirs = findPeer(l.parties, variant, (q) => q.name);
    return theirs && theirs !== p ? value(p) / value(theirs) : Number.NaN;
  };
  const vs = (value: (p: Party) => number, p: Party): string =>
    againstPeers({ default: ratio("default", value, p), prebuilt: ratio("prebuilt", value, p) }, times);
  const rows = l.parties.map((p) => [
    p.name,
    fmt(p.cold.promptMs, 0),
    fmt(promptRate(p.cold), 0),
    vs((q) => promptRate(q.cold), p),
    fmt(p.cached.evaluated, 0),
    fmt(p.cached.promptMs, 0),
    fmt(p.cached.ttftMs, 0),
    `${fmt(longDecodeRate(p))} (${fmt(p.decode.tokens, 0)})`,
    vs(longDecodeRate, p),
  ]);
  const header = [
    "server",
    "cold prompt ms",
    "cold prompt tok/s",
    "vs llama-server",
    "prefix cached: tokens evaluated",
    "prompt ms",
    "TTFT ms",
  ];
  out.push(table([...header, "decode tok/s (tokens)", "decode vs llama-server"], rows));
  return out;
}

/** The SSE encoders alone. */
function encodersTable(encoders: EncoderReport): string[] {
  const out: string[] = [];
  out.push("\n**SSE encoding alone** (one core: encoder + SSE framing + UTF-8, synthetic 128-token streams)\n");
  out.push(
    table(
      ["protocol", "encoder", "token chunks/s", "bytes/chunk"],
      encoders.results.map((e) => [
        e.protocol,
        `\`${e.factory}\``,
        fmt(e.medianChunksPerSecond, 0),
        fmt(e.bytesPerChunk, 0),
      ]),
    ),
  );
  for (const s of encoders.skipped) out.push(`\n${s.protocol}: not measured (${s.reason})`);
  return out;
}

/** Peak RSS of each process. */
function rssTable(processes: readonly ProcessInfo[]): string[] {
  const out: string[] = [];
  out.push("\n**Peak RSS** (VmHWM at the end of the process's work)\n");
  out.push(
    table(
      ["process", "llama.cpp library", "peak RSS MiB"],
      processes.map((p) => [p.name, p.build, fmt(p.peakRssMiB, 0)]),
    ),
  );
  return out;
}

/** Memory before and after the load. */
function memoryTable(memory: readonly MemoryRow[]): string[] {
  const out: string[] = [];
  out.push(
    "\n**Memory before and after the load** (MiB; idle = after start-up and one warm-up request, after a GC; " +
      `after = when the last stream of the single-stream, sweep and prefix runs ended; settled = ${SETTLE_MS / 1000} ` +
      `s later, after a GC; ` +
      "2nd = settled after a second, shorter load with new prompts)\n",
  );
  const four = (pick: (f: MemoryRow["idle"]) => number, row: MemoryRow): string =>
    [row.idle, row.loaded, row.settled, row.again]
      .map((f) => fmt(f === undefined ? undefined : pick(f), 0))
      .join(" / ");
  out.push(
    table(
      [
        "process",
        "RSS idle / after / settled / 2nd",
        "V8 heap idle / after / settled / 2nd",
        "external idle / after / settled / 2nd",
      ],
      memory.map((row) => [
        row.name,
        four((f) => f.rssMiB, row),
        four((f) => f.heapUsedMiB, row),
        four((f) => f.externalMiB, row),
      ]),
    ),
  );
  return out;
}

export function renderReport(r: Report): string {
  const m = r.machine;
  const out: string[] = [
    `Benchmark of ${r.date} on ${m.cpu}, ${m.cores} cores, ${fmt(m.memoryGiB, 0)} GiB, ${m.os}, Node ${m.node}, ` +
      `node-llama-cpp ${m.nodeLlamaCpp}.`,
    `Settings: ${r.settings}. Each figure is a median over the runs shown.`,
    ...r.notes.map((note) => `> ${note}`),
  ];
  if (r.sessions) out.push(r.sessions);
  if (r.engine) out.push(...engineTable(r.engine));
  if (r.single) out.push(...singleTable(r.single), ...singleCpuTable(r.single));
  if (r.sweep || r.reject) out.push(...sweepTable(r.sweep, r.reject));
  if (r.prefix) out.push(...prefixTable(r.prefix));
  if (r.join) out.push(...joinTable(r.join));
  if (r.long) out.push(...longTable(r.long));
  if (r.embeddings) out.push(...embeddingsTable(r.embeddings));
  if (r.encoders) out.push(...encodersTable(r.encoders));
  if (r.processes.length > 0) out.push(...rssTable(r.processes));
  if (r.memory && r.memory.length > 0) out.push(...memoryTable(r.memory));
  out.push("\n**Targets**\n");
  out.push(
    table(
      ["target", "measured", "needed", "result"],
      r.targets.map((t) => [t.name, t.measured, t.needed, verdict(t.pass)]),
    ),
  );
  return `${out.join("\n")}\n`;
}

function embeddingsTable(e: EmbeddingsResult): string[] {
  const peer = (variant: PeerVariant) => findPeer(e.parties, variant, (p) => p.name);
  const [byDefault, prebuilt] = [peer("default"), peer("prebuilt")];
  const rows = e.parties.flatMap((p) =>
    p.levels.map((l, i) => {
      const ratio = (theirs: EmbeddingsResult["parties"][number] | undefined): number =>
        theirs && theirs !== p ? l.perSecond / (theirs.levels[i]?.perSecond ?? Number.NaN) : Number.NaN;
      return [
        p.name,
        fmt(l.clients, 0),
        fmt(l.perSecond),
        againstPeers({ default: ratio(byDefault), prebuilt: ratio(prebuilt) }, times),
        fmt(l.p50Ms),
        fmt(l.p99Ms),
        `${l.failed}/${l.requests}`,
      ];
    }),
  );
  return [
    `\n**Embeddings** (POST /v1/embeddings, one ${e.inputWords}-word text per request, each client one request at a ` +
      `time; ` +
      "vs llama-server = against its default build / the prebuilt-like one)\n",
    table(["server", "clients", "embeddings/s", "vs llama-server", "p50 ms", "p99 ms", "failed"], rows),
  ];
}
