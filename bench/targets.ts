// The benchmark's targets (bench/README.md, "Targets"), checked against this run's summaries.
import { bounded, TOLERANCE, type MemoryRow } from "./memory.js";
import { PEER_LABELS, referencePeer } from "./peer-paths.js";
import { ratioRange, ttftRange, type ModelsSummary } from "./sections/many-models.js";
import type { SessionsRow } from "./sections/sessions.js";
import type { LevelSummary, PartySummary, PrefixRow, SweepSummary, Target } from "./summary.js";
import { fmt } from "./table.js";

export interface TargetInputs {
  readonly single?: PartySummary[] | undefined;
  readonly sweep?: SweepSummary | undefined;
  readonly sessions?: readonly SessionsRow[] | undefined;
  readonly reject?: LevelSummary | undefined;
  readonly prefix?: PrefixRow[] | undefined;
  readonly memory?: readonly MemoryRow[] | undefined;
  readonly models?: ModelsSummary | undefined;
  /** Streams of the "8 concurrent streams" targets (the sidecar's sequences). */
  readonly concurrent: number;
}

/** A 429 counts as "at once" within this many milliseconds. */
export const REJECT_AT_ONCE_MS = 1000;

const check = (value: number, ok: (v: number) => boolean): boolean | undefined =>
  Number.isFinite(value) ? ok(value) : undefined;

/** The single stream through the edge against the in-process baseline and llama-server. */
function singleTargets(t: TargetInputs): Target[] {
  const edgeOne = t.single?.find((p) => p.key === "c");
  const peer = referencePeer(t.single ?? [], (p) => p.label);
  const vsPeer = edgeOne && peer ? edgeOne.decodeTps / peer.decodeTps : Number.NaN;
  const ttftVsPeer = edgeOne && peer ? edgeOne.ttftMs - peer.ttftMs : Number.NaN;
  return [
    {
      name: "edge, 1 stream: decode tok/s vs in-process",
      measured: edgeOne
        ? `${fmt(edgeOne.decodeRatio, 3)}× (${fmt(edgeOne.decodeTps)} vs ` +
          `${fmt(edgeOne.decodeTps / edgeOne.decodeRatio)})`
        : "–",
      needed: "≥ 0.95×",
      pass: edgeOne ? check(edgeOne.decodeRatio, (v) => v >= 0.95) : undefined,
    },
    {
      name: "edge, 1 stream: added TTFT p50",
      measured: edgeOne ? `${fmt(edgeOne.addedTtftMs)} ms` : "–",
      needed: "≤ 5 ms",
      pass: edgeOne ? check(edgeOne.addedTtftMs, (v) => v <= 5) : undefined,
    },
    {
      name: `edge, 1 stream: decode tok/s vs ${peer?.label ?? "llama-server"}`,
      measured:
        edgeOne && peer
          ? `${fmt(vsPeer, 3)}× (${fmt(edgeOne.decodeTps)} vs ${fmt(peer.decodeTps)})`
          : "llama-server not run",
      needed: "≥ 0.95×",
      pass: check(vsPeer, (v) => v >= 0.95),
    },
    {
      name: `edge, 1 stream: TTFT p50 vs ${peer?.label ?? "llama-server"}`,
      measured:
        edgeOne && peer
          ? `${fmt(ttftVsPeer)} ms (${fmt(edgeOne.ttftMs)} vs ${fmt(peer.ttftMs)})`
          : "llama-server not run",
      needed: "≤ +5 ms",
      pass: check(ttftVsPeer, (v) => v <= 5),
    },
  ];
}

/** The concurrent streams through the edge: scaling, fairness, and against llama-server. */
function sweepTargets(t: TargetInputs): Target[] {
  const level = (list: readonly LevelSummary[] | undefined, n: number): LevelSummary | undefined =>
    list?.find((l) => l.streams === n);
  const one = level(t.sweep?.edge, 1);
  const many = level(t.sweep?.edge, t.concurrent);
  const peer = referencePeer(t.sweep?.peers ?? [], (p) => p.label);
  const peerName = peer?.label ?? "llama-server";
  const peerMany = level(peer?.levels, t.concurrent);
  const [four, peerFour] = [level(t.sweep?.edge, 4), level(peer?.levels, 4)];
  const ttftFour = four && peerFour ? four.ttftP50 - peerFour.ttftP50 : Number.NaN;
  const scale = one && many ? many.aggregateTps / one.aggregateTps : Number.NaN;
  const vsPeer = many && peerMany ? many.aggregateTps / peerMany.aggregateTps : Number.NaN;
  return [
    {
      name: `edge, ${t.concurrent} streams: aggregate vs 1 stream`,
      measured: `${fmt(scale, 2)}× (${fmt(many?.aggregateTps)} vs ${fmt(one?.aggregateTps)} tok/s)`,
      needed: "≥ 1.5×",
      pass: check(scale, (v) => v >= 1.5),
    },
    {
      name: `edge, ${t.concurrent} streams: every stream within 2× of the mean rate`,
      measured: many ? `worst ${fmt(many.worstSpread, 2)}×` : "–",
      needed: "≤ 2×",
      pass: many ? check(many.worstSpread, (v) => v <= 2) : undefined,
    },
    {
      name: `edge, ${t.concurrent} streams: aggregate vs ${peerName}`,
      measured: peerMany
        ? `${fmt(vsPeer, 2)}× (${fmt(many?.aggregateTps)} vs ${fmt(peerMany.aggregateTps)} tok/s)`
        : "llama-server not run",
      needed: "≥ 1.0×",
      pass: check(vsPeer, (v) => v >= 1.0),
    },
    {
      name: `edge, 4 streams: TTFT p50 vs ${peerName}`,
      measured: peerFour
        ? `${fmt(ttftFour)} ms (${fmt(four?.ttftP50)} vs ${fmt(peerFour.ttftP50)})`
        : "llama-server not run at 4 streams",
      needed: "≤ +5 ms",
      pass: check(ttftFour, (v) => v <= 5),
    },
  ];
}

function prefixTarget(t: TargetInputs): Target {
  const cold = t.prefix?.find((p) => p.path === "grpc" && p.kind === "cold");
  const warm = t.prefix?.find((p) => p.path === "grpc" && p.kind === "warm");
  const prefixRatio = cold && warm ? warm.enginePromptMs / cold.enginePromptMs : Number.NaN;
  return {
    name: "prefix-cached request: prompt time vs cold",
    measured:
      cold && warm
        ? `${fmt(prefixRatio * 100)}% (${fmt(warm.enginePromptMs)} vs ${fmt(cold.enginePromptMs)} ms; ` +
          `${fmt(warm.promptTokens - warm.cachedTokens, 0)} new tokens evaluated)`
        : "–",
    needed: "≤ 30%",
    pass: check(prefixRatio, (v) => v <= 0.3),
  };
}

/** No stream of the sweep or the rejection run lost or hung; refusals at once (none if neither ran). */
function lossTargets(t: TargetInputs): Target[] {
  const levels = [...(t.sweep?.edge ?? []), ...(t.reject ? [t.reject] : [])];
  if (levels.length === 0) return [];
  const lost = levels.reduce((n, l) => n + l.failed + l.hung, 0);
  const total = levels.reduce((n, l) => n + l.completed + l.rejected + l.failed + l.hung, 0);
  const rejected = levels.reduce((n, l) => n + l.rejected, 0);
  const slowest = Math.max(0, ...levels.map((l) => (Number.isFinite(l.maxRejectMs) ? l.maxRejectMs : 0)));
  return [
    {
      name: "sweep: no request lost or hung; refusals are an immediate 429",
      measured: `${lost} lost of ${total}; ${rejected} rejected, slowest 429 in ${fmt(slowest, 0)} ms`,
      needed: `0 lost; 429 within ${REJECT_AT_ONCE_MS} ms`,
      pass: lost === 0 && slowest <= REJECT_AT_ONCE_MS,
    },
  ];
}

/** Memory back to idle after the load (none if it was not measured). */
function memoryTargets(t: TargetInputs): Target[] {
  if (!t.memory || t.memory.length === 0) return [];
  const rows = t.memory;
  return [
    {
      name: "memory: bounded (sidecar and edge after the load)",
      measured: rows
        .map(
          (r) =>
            `${r.name}: heap ${fmt(r.idle.heapUsedMiB, 0)} → ${fmt(r.settled.heapUsedMiB, 0)} MiB, RSS ` +
            `${fmt(r.settled.rssMiB, 0)} → ` +
            `${fmt(r.again?.rssMiB, 0)} MiB`,
        )
        .join("; "),
      needed: `heap back to idle, RSS unchanged by a second load (±${TOLERANCE * 100}% + 4 MiB)`,
      pass: rows.some((r) => r.again === undefined) ? undefined : rows.every(bounded),
    },
  ];
}

/**
 * The many-sessions run: a returning turn through the edge with the KV tier against llama-server's (none if it did not
 * run).
 */
function sessionsTargets(t: TargetInputs): Target[] {
  const edge = t.sessions?.find((r) => r.label.endsWith("--cache-ram auto"));
  if (!edge) return [];
  const peer = referencePeer(t.sessions ?? [], (r) => r.label);
  const ratio = peer ? edge.returningTtftP50 / peer.returningTtftP50 : Number.NaN;
  return [
    {
      name: `many sessions: returning-turn TTFT p50 vs ${peer?.label ?? PEER_LABELS.default}`,
      measured: peer
        ? `${fmt(ratio, 2)}× (${fmt(edge.returningTtftP50, 0)} vs ${fmt(peer.returningTtftP50, 0)} ms)`
        : "llama-server not run",
      needed: "≤ 1.0×",
      pass: check(ratio, (v) => v <= 1.0),
    },
  ];
}

/**
 * Many models on one sidecar: a catalogue of two against the model alone, on the loaded model's requests (none if it
 * did not run).
 */
function modelsTargets(t: TargetInputs): Target[] {
  if (!t.models) return [];
  const { oneModel: one, twoModels: two, addedTtftMs: added, decodeRatio: ratio, pairs } = t.models;
  const rates = `${fmt(two.decodeTps.p50)} vs ${fmt(one.decodeTps.p50)}`;
  return [
    {
      name: "many models: TTFT with a second model in the catalogue vs the model alone",
      measured:
        `${fmt(added, 2)} ms (median of ${pairs} pairs, 95% interval ${ttftRange(t.models)} ms; p50 ` +
        `${fmt(two.ttftP50)} vs ${fmt(one.ttftP50)})`,
      needed: "≤ +1 ms",
      pass: check(added, (v) => v <= 1),
    },
    {
      name: "many models: decode tok/s with a second model in the catalogue vs the model alone",
      measured: `${fmt(ratio, 3)}× (median of ${pairs} pairs, 95% interval ${ratioRange(t.models)}; p50 ${rates})`,
      // "No change beyond noise": the interval of the pairs' median ratio reaches 1.0 (a slower decode would leave it
      // below).
      needed: "upper end of the 95% interval ≥ 1.0×",
      pass: check(t.models.decodeRatioInterval[1], (v) => v >= 1),
    },
  ];
}

export function evaluateTargets(t: TargetInputs): Target[] {
  return [
    ...singleTargets(t),
    ...sweepTargets(t),
    prefixTarget(t),
    ...lossTargets(t),
    ...memoryTargets(t),
    ...sessionsTargets(t),
    ...modelsTargets(t),
  ];
}
