/**
 * The newcomer section: what a user measures on a fresh install. This project as `npm start` runs
 * it with no settings but MODEL, beside llama-server of llama.cpp's default build started as its
 * README suggests for parallel use (`-m MODEL -np 4 -c 8192`, its defaults otherwise: every core,
 * flash attention auto), both separate processes, driven from this process over HTTP. Streamed
 * `/v1/completions` of a short prompt (48 tokens, temperature 0, seed 42): one stream at a time,
 * then four at once. Every run starts both servers afresh and sends one request to each before
 * measuring (a first request after start is apart: it pays for the model's first pages); runs
 * are pooled, and the servers take turns going first. The sessions part is newcomer-sessions.ts.
 */
import { streamSse } from "../clients/sse.js";
import { treeCpu, treeCpuUsed } from "../cpu.js";
import { decodeRate, type StreamSample } from "../sample.js";
import { startLlamaServer, startOurs, type Server } from "../servers.js";
import type { SessionsResult } from "./sessions.js";

export interface NewcomerFlags {
  readonly runs: number;
  readonly rounds: number;
  readonly maxTokens: number;
  readonly timeoutMs: number;
}

/** What a newcomer types: a line of prose (30 tokens on the GGUF writer's vocabulary). */
export const NEWCOMER_PROMPT = "The old lighthouse keeper climbed the stairs one more time and looked at the sea";
/** llama-server's parallel settings from its own README's example. */
export const LLAMA_SERVER_ARGS = ["-np", "4", "-c", "8192"] as const;
export const NEWCOMER_PARTIES = ["ours", "llama-server"] as const;
export type NewcomerParty = (typeof NEWCOMER_PARTIES)[number];

/** CPU a server's processes used over a phase, and the tokens its streams carried. */
export interface PhaseCpu {
  readonly tokens: number;
  /** Every thread of every process of the server. */
  readonly allMs: number;
  /** The main thread of its busiest process: this server's event loop; llama-server's decoding loop. */
  readonly mainMs: number;
}

/** One party's samples of one run: one stream at a time, and four at once (rounds of four). */
export interface NewcomerSamples {
  readonly one: StreamSample[];
  readonly four: StreamSample[][];
  /** The CPU each phase took (absent in runs recorded before it was read). */
  readonly cpu?: Partial<Record<"one" | "four", PhaseCpu>>;
}

export interface NewcomerResult {
  readonly model: string;
  readonly flags: NewcomerFlags;
  /** Per party, per run. */
  readonly runs: Record<NewcomerParty, NewcomerSamples[]>;
  /** The sessions part (newcomer-sessions.ts), on its own model; absent when not run. */
  readonly sessions?: { readonly model: string; readonly result: SessionsResult } | undefined;
}

/** Requests sent so far: each prompt ends with its number, so no reply is one given before. */
let sent = 0;

/**
 * A prompt of its own per request (the newcomer's line, then its number: both servers' prompt caches still hold the
 * line): a greedy request sent again would draft its whole reply from the one before (sidecar/engine/llama/
 * reply-pool.ts), which is not a decode rate.
 */
function requestBody(maxTokens: number): Record<string, unknown> {
  sent++;
  return {
    model: "m",
    prompt: `${NEWCOMER_PROMPT} (${sent})`,
    max_tokens: maxTokens,
    temperature: 0,
    seed: 42,
    stream: true,
    stream_options: { include_usage: true },
    // llama-server puts its `timings` on a stream's last chunk by itself; this server when asked (the last chunk only).
    timings_per_token: true,
  };
}

/**
 * One stream. A request that fails before any answer (a pooled keep-alive connection the server had just closed, or a
 * connection its listen backlog dropped) is sent once more, as a user's client would retry it.
 */
async function stream(server: Server, flags: NewcomerFlags): Promise<StreamSample> {
  const send = () => streamSse(`${server.url}/v1/completions`, requestBody(flags.maxTokens), flags.timeoutMs);
  let sample = await send();
  if (sample.outcome === "failed" && sample.acceptedMs === undefined) sample = await send();
  if (sample.outcome !== "completed") throw new Error(`${server.name}: ${sample.outcome} ${sample.error ?? ""}`);
  return sample;
}

/** `rounds` streams one after another, then `rounds` rounds of four at once. */
async function measureParty(
  server: Server,
  flags: NewcomerFlags,
  into: NewcomerSamples,
  phase: "one" | "four",
): Promise<void> {
  const before = treeCpu(server.pid);
  const streams: StreamSample[] = [];
  for (let r = 0; r < flags.rounds; r++) {
    if (phase === "one") streams.push(await stream(server, flags));
    else {
      const round = await Promise.all([0, 1, 2, 3].map(() => stream(server, flags)));
      into.four.push(round);
      streams.push(...round);
    }
  }
  if (phase === "one") into.one.push(...streams);
  const tokens = streams.reduce((n, x) => n + x.tokens, 0);
  if (into.cpu) into.cpu[phase] = { tokens, ...treeCpuUsed(before, treeCpu(server.pid)) };
}

/**
 * One run: both servers started afresh, one request each, then each phase with the servers taking turns going first.
 */
async function runOnce(
  modelPath: string,
  flags: NewcomerFlags,
  run: number,
): Promise<Record<NewcomerParty, NewcomerSamples>> {
  const ours = await startOurs(modelPath);
  // A peer that cannot start must not leave ours running behind the failed run.
  const peer = await startLlamaServer(modelPath, LLAMA_SERVER_ARGS).catch(async (error: unknown) => {
    await ours.stop();
    throw error;
  });
  const servers: Record<NewcomerParty, Server> = { ours, "llama-server": peer };
  const out: Record<NewcomerParty, NewcomerSamples> = {
    ours: { one: [], four: [], cpu: {} },
    "llama-server": { one: [], four: [], cpu: {} },
  };
  try {
    for (const party of NEWCOMER_PARTIES) await stream(servers[party], flags);
    for (const [i, phase] of (["one", "four"] as const).entries()) {
      const order = (run + i) % 2 === 0 ? NEWCOMER_PARTIES : [...NEWCOMER_PARTIES].reverse();
      for (const party of order) await measureParty(servers[party], flags, out[party], phase);
    }
  } finally {
    await Promise.all(Object.values(servers).map((s) => s.stop()));
  }
  return out;
}

export async function runNewcomer(
  modelPath: string,
  model: string,
  flags: NewcomerFlags,
  log: (m: string) => void,
): Promise<NewcomerResult> {
  const runs: Record<NewcomerParty, NewcomerSamples[]> = { ours: [], "llama-server": [] };
  for (let run = 0; run < flags.runs; run++) {
    const samples = await runOnce(modelPath, flags, run);
    for (const party of NEWCOMER_PARTIES) runs[party].push(samples[party]);
    log(`newcomer: run ${run + 1} of ${flags.runs}`);
  }
  return { model, flags, runs };
}

/** Decode tokens/s of one stream at a time: every stream's rate, pooled over the runs. */
export function oneStreamRates(samples: readonly NewcomerSamples[]): number[] {
  return samples.flatMap((s) => s.one.map(decodeRate));
}

/**
 * The server's own time a generated token (its `timings`: decode time over generated tokens), each stream's, pooled:
 * what the server measured of its decode, apart from the client and the host's other load.
 */
export function serverTokenMs(samples: readonly NewcomerSamples[], phase: "one" | "four"): number[] {
  const streams = samples.flatMap((s) => (phase === "one" ? s.one : s.four.flat()));
  return streams.flatMap((x) => (x.serverDecodeMs !== undefined && x.tokens > 0 ? [x.serverDecodeMs / x.tokens] : []));
}

/**
 * CPU ms a streamed token, pooled over the runs (every run's CPU over every run's tokens): every thread of the
 * server, or its busiest process's main thread. NaN when no run read it.
 */
export function cpuPerToken(
  samples: readonly NewcomerSamples[],
  phase: "one" | "four",
  of: "allMs" | "mainMs",
): number {
  const read = samples.flatMap((s) => (s.cpu?.[phase] === undefined ? [] : [s.cpu[phase]]));
  const tokens = read.reduce((n, c) => n + c.tokens, 0);
  return tokens > 0 ? read.reduce((n, c) => n + c[of], 0) / tokens : Number.NaN;
}

/** Aggregate tokens/s of each round of four: tokens of the four over the time from the first sent to the last token. */
export function fourStreamRates(samples: readonly NewcomerSamples[]): number[] {
  return samples.flatMap((s) =>
    s.four.map((round) => {
      const start = Math.min(...round.map((x) => x.sentAt ?? 0));
      const end = Math.max(...round.map((x) => (x.sentAt ?? 0) + x.lastTokenMs));
      return (round.reduce((n, x) => n + x.tokens, 0) * 1000) / (end - start);
    }),
  );
}
