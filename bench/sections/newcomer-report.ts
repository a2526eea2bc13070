// The newcomer section's table (the report's first) and its headline figures: medians pooled over
// the runs, this server beside llama-server's default build, and item by item the targets.
import { median } from "../stats.js";
import { NEWCOMER_SESSION_PARTIES } from "./newcomer-sessions.js";
import { renderSessions, summarizeSessions, type SessionsRow } from "./sessions.js";
import type { Target } from "../summary.js";
import {
  cpuPerToken,
  fourStreamRates,
  LLAMA_SERVER_ARGS,
  oneStreamRates,
  serverTokenMs,
  type NewcomerParty,
  type NewcomerResult,
  type NewcomerSamples,
} from "./newcomer.js";

export interface NewcomerSummary {
  readonly oneRate: Record<NewcomerParty, number>;
  readonly oneTtft: Record<NewcomerParty, number>;
  readonly fourRate: Record<NewcomerParty, number>;
  readonly fourTtft: Record<NewcomerParty, number>;
  /** Each server's own decode time a token (its `timings`), one stream and four: a diagnostic, no target. */
  readonly oneServerMs: Record<NewcomerParty, number>;
  readonly fourServerMs: Record<NewcomerParty, number>;
  /**
   * CPU ms a token, one stream and four: every thread of the server, and the main thread of its busiest process
   * (this server's JavaScript; llama-server's decoding loop, a decoding thread itself). A diagnostic, no target.
   */
  readonly cpuMs: Record<"one" | "four", Record<"allMs" | "mainMs", Record<NewcomerParty, number>>>;
  /** The sessions part: a row per party (this server first), when it ran. */
  readonly sessions?: readonly SessionsRow[] | undefined;
}

const ttftsOne = (s: readonly NewcomerSamples[]): number[] => s.flatMap((r) => r.one.map((x) => x.ttftMs));
const ttftsFour = (s: readonly NewcomerSamples[]): number[] => s.flatMap((r) => r.four.flat().map((x) => x.ttftMs));

function perParty(
  result: NewcomerResult,
  figure: (s: readonly NewcomerSamples[]) => number[],
): Record<NewcomerParty, number> {
  return { ours: median(figure(result.runs.ours)), "llama-server": median(figure(result.runs["llama-server"])) };
}

function pooledCpu(
  result: NewcomerResult,
  phase: "one" | "four",
  of: "allMs" | "mainMs",
): Record<NewcomerParty, number> {
  return {
    ours: cpuPerToken(result.runs.ours, phase, of),
    "llama-server": cpuPerToken(result.runs["llama-server"], phase, of),
  };
}

export function summarizeNewcomer(result: NewcomerResult): NewcomerSummary {
  return {
    oneRate: perParty(result, oneStreamRates),
    oneTtft: perParty(result, ttftsOne),
    fourRate: perParty(result, fourStreamRates),
    fourTtft: perParty(result, ttftsFour),
    oneServerMs: perParty(result, (s) => serverTokenMs(s, "one")),
    fourServerMs: perParty(result, (s) => serverTokenMs(s, "four")),
    cpuMs: {
      one: { allMs: pooledCpu(result, "one", "allMs"), mainMs: pooledCpu(result, "one", "mainMs") },
      four: { allMs: pooledCpu(result, "four", "allMs"), mainMs: pooledCpu(result, "four", "mainMs") },
    },
    sessions: result.sessions ? summarizeSessions(result.sessions.result) : undefined,
  };
}

const f1 = (v: number): string => (Number.isFinite(v) ? v.toFixed(1) : "–");
/** CPU ms a token: two decimals (a main thread's share is a fraction of a millisecond). */
const f2 = (v: number): string => (Number.isFinite(v) ? v.toFixed(2) : "–");

export function renderNewcomer(s: NewcomerSummary, result: NewcomerResult): string {
  const { flags } = result;
  const rows: [string, Record<NewcomerParty, number>, "ratio" | "difference" | "cpu"][] = [
    ["one stream, decode tok/s", s.oneRate, "ratio"],
    ["one stream, first token p50 (ms)", s.oneTtft, "difference"],
    ["four streams, aggregate tok/s", s.fourRate, "ratio"],
    ["four streams, first token p50 (ms)", s.fourTtft, "difference"],
    ["one stream, the server's own ms a token (timings)", s.oneServerMs, "difference"],
    ["four streams, the server's own ms a token (timings)", s.fourServerMs, "difference"],
    ["one stream, CPU ms a token: every thread", s.cpuMs.one.allMs, "cpu"],
    ["one stream, CPU ms a token: main thread", s.cpuMs.one.mainMs, "cpu"],
    ["four streams, CPU ms a token: every thread", s.cpuMs.four.allMs, "cpu"],
    ["four streams, CPU ms a token: main thread", s.cpuMs.four.mainMs, "cpu"],
  ];
  const lines = [
    `**Newcomer** (\`npm start\` with MODEL=${result.model} and nothing else, beside llama-server's default build as ` +
      `\`llama-server -m MODEL ${LLAMA_SERVER_ARGS.join(" ")}\`; streamed /v1/completions of a short prompt, ` +
      `${flags.maxTokens} tokens, temperature 0, seed 42, from this process; medians pooled over ${flags.runs} fresh ` +
      `starts × ` +
      `${flags.rounds} rounds, the first request after each start apart)`,
    "",
    "| what | this server | llama-server | this server vs llama-server |",
    "| --- | --- | --- | --- |",
  ];
  for (const [name, v, kind] of rows) {
    const ours = v.ours;
    const theirs = v["llama-server"];
    const digits = kind === "cpu" ? 2 : 1;
    const versus = !Number.isFinite(ours - theirs)
      ? "–"
      : kind === "ratio"
        ? `${(ours / theirs).toFixed(2)}×`
        : `${ours - theirs >= 0 ? "+" : ""}${(ours - theirs).toFixed(digits)} ms`;
    const shown = kind === "cpu" ? f2 : f1;
    lines.push(`| ${name} | ${shown(ours)} | ${shown(theirs)} | ${versus} |`);
  }
  if (s.sessions && result.sessions) {
    const title =
      `Newcomer's sessions (${result.sessions.model}; both servers started as above, llama-server with -c to fit ` +
      "the prompts)";
    lines.push(renderSessions(s.sessions, result.sessions.result, title));
  }
  return lines.join("\n");
}

/** The sessions part's turn p50s, this server's over llama-server's: [cold, returning]. */
function sessionRatios(s: NewcomerSummary | undefined): [number, number] {
  const [ours, peer] = NEWCOMER_SESSION_PARTIES.map((label) => s?.sessions?.find((r) => r.label === label));
  if (ours === undefined || peer === undefined) return [Number.NaN, Number.NaN];
  return [ours.coldTtftP50 / peer.coldTtftP50, ours.returningTtftP50 / peer.returningTtftP50];
}

export function newcomerTargets(s: NewcomerSummary | undefined): Target[] {
  const ratio = (v: Record<NewcomerParty, number> | undefined): number => (v ? v.ours / v["llama-server"] : Number.NaN);
  const diff = (v: Record<NewcomerParty, number> | undefined): number => (v ? v.ours - v["llama-server"] : Number.NaN);
  const target = (
    name: string,
    value: number,
    needed: string,
    pass: (v: number) => boolean,
    unit: "×" | " ms",
  ): Target => ({
    name,
    measured: Number.isFinite(value)
      ? `${unit === "×" ? value.toFixed(2) : (value >= 0 ? "+" : "") + value.toFixed(1)}${unit}`
      : "–",
    needed,
    pass: Number.isFinite(value) ? pass(value) : undefined,
  });
  return [
    target("newcomer, 1 stream: decode tok/s vs llama-server", ratio(s?.oneRate), "≥ 1.0×", (v) => v >= 1, "×"),
    target("newcomer, 4 streams: aggregate tok/s vs llama-server", ratio(s?.fourRate), "≥ 1.0×", (v) => v >= 1, "×"),
    target("newcomer, 1 stream: first token p50 vs llama-server", diff(s?.oneTtft), "≤ +5 ms", (v) => v <= 5, " ms"),
    target("newcomer, 4 streams: first token p50 vs llama-server", diff(s?.fourTtft), "≤ +5 ms", (v) => v <= 5, " ms"),
    target("newcomer sessions: cold turn TTFT p50 vs llama-server", sessionRatios(s)[0], "≤ 1.0×", (v) => v <= 1, "×"),
    target(
      "newcomer sessions: returning turn TTFT p50 vs llama-server",
      sessionRatios(s)[1],
      "≤ 1.0×",
      (v) => v <= 1,
      "×",
    ),
  ];
}

export function newcomerHeadline(s: NewcomerSummary, headline: Record<string, number>): void {
  headline.newcomerOneRatio = s.oneRate.ours / s.oneRate["llama-server"];
  headline.newcomerFourRatio = s.fourRate.ours / s.fourRate["llama-server"];
  headline.newcomerOneTtftDiffMs = s.oneTtft.ours - s.oneTtft["llama-server"];
  headline.newcomerFourTtftDiffMs = s.fourTtft.ours - s.fourTtft["llama-server"];
  const [cold, returning] = sessionRatios(s);
  if (Number.isFinite(cold)) headline.newcomerSessionsColdRatio = cold;
  if (Number.isFinite(returning)) headline.newcomerSessionsReturningRatio = returning;
}
