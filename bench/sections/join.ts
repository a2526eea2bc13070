// A long prompt joins decoding streams: it must be evaluated in chunks that do not freeze the
// streams already decoding (docs/decisions.md, "Batch scheduling"). Two streams decode through native gRPC; once they
// run, a ~1,500-token prompt arrives. Measured: the streams' longest wait for a token while the
// prompt is evaluated (against their median wait), and the prompt's time to first token against
// the same kind of prompt alone.
import { Role } from "../../proto/gen/inference/v1/inference_pb.js";
import type { GrpcClient } from "../clients/grpc.js";
import { median } from "../stats.js";
import { SEED, streamPrompt, systemPrompt, TEMPERATURE, userTurn } from "../workload.js";
import { calibrate } from "./prefix.js";

export interface JoinResult {
  readonly promptTokens: number;
  readonly rounds: {
    /** The long prompt alone: its time to first token. */
    readonly aloneTtftMs: number;
    /** The long prompt joining two decoding streams: its time to first token. */
    readonly joinedTtftMs: number;
    /** The streams' longest gap between two tokens while the prompt was evaluated. */
    readonly longestGapMs: number;
    /** The streams' median gap between two tokens before the prompt came. */
    readonly medianGapMs: number;
  }[];
}

export interface JoinSummary {
  readonly promptTokens: number;
  readonly aloneTtftMs: number;
  readonly joinedTtftMs: number;
  readonly longestGapMs: number;
  readonly medianGapMs: number;
}

/** Prompt variants of this section: apart from the other sections'. */
const VARIANT_BASE = 30_000;
/** Enough for the streams to outlast the long prompt. */
const STREAM_TOKENS = 1_000;

/** Sends a request and returns the time of each token (performance.now()). */
async function tokenTimes(
  client: GrpcClient,
  request: Parameters<GrpcClient["generate"]>[0],
  signal?: AbortSignal,
  onToken?: () => void,
): Promise<number[]> {
  const times: number[] = [];
  try {
    for await (const { event } of client.generate(request, signal ? { signal } : {})) {
      if (event.case !== "token") continue;
      times.push(performance.now());
      onToken?.();
    }
  } catch (error) {
    if (!signal?.aborted) throw error;
  }
  return times;
}

export async function runJoin(
  client: GrpcClient,
  options: { rounds: number; tokens: number },
  log: (m: string) => void,
): Promise<JoinResult> {
  const { words, tokens } = await calibrate(client, options.tokens);
  const chat = (round: number) => ({
    input: {
      case: "chat" as const,
      value: {
        messages: [
          { role: Role.SYSTEM, content: systemPrompt(VARIANT_BASE + round, words) },
          { role: Role.USER, content: userTurn(round) },
        ],
      },
    },
    maxTokens: 1,
    sampling: { temperature: TEMPERATURE, seed: SEED },
  });
  const rounds: JoinResult["rounds"][number][] = [];
  for (let round = 0; round < options.rounds; round++) {
    const aloneSent = performance.now();
    const alone = await tokenTimes(client, chat(2 * round));
    const aloneTtftMs = (alone[0] ?? Number.NaN) - aloneSent;

    const stop = new AbortController();
    let seen = 0;
    let running = (): void => undefined;
    const bothRunning = new Promise<void>((resolve) => (running = resolve));
    const stream = (i: number): Promise<number[]> =>
      tokenTimes(
        client,
        {
          input: { case: "prompt", value: streamPrompt(VARIANT_BASE + round * 2 + i) },
          maxTokens: STREAM_TOKENS,
          sampling: { temperature: TEMPERATURE, seed: SEED },
        },
        stop.signal,
        () => ++seen === 20 && running(),
      );
    const streams = [stream(0), stream(1)];
    await bothRunning;
    const joinSent = performance.now();
    const joined = await tokenTimes(client, chat(2 * round + 1));
    const joinedAt = joined[0] ?? Number.NaN;
    stop.abort();
    const times = await Promise.all(streams);
    const gaps = (from: number, to: number): number[] =>
      times.flatMap((t) => t.slice(1).flatMap((at, i) => (at > from && (t[i] ?? 0) < to ? [at - (t[i] ?? 0)] : [])));
    rounds.push({
      aloneTtftMs,
      joinedTtftMs: joinedAt - joinSent,
      longestGapMs: Math.max(...gaps(joinSent, joinedAt)),
      medianGapMs: median(gaps(0, joinSent)),
    });
    log(`join round ${round + 1}/${options.rounds} done`);
  }
  return { promptTokens: tokens, rounds };
}

export function summarizeJoin(result: JoinResult): JoinSummary {
  const of = (pick: (r: JoinResult["rounds"][number]) => number): number => median(result.rounds.map(pick));
  return {
    promptTokens: result.promptTokens,
    aloneTtftMs: of((r) => r.aloneTtftMs),
    joinedTtftMs: of((r) => r.joinedTtftMs),
    longestGapMs: of((r) => r.longestGapMs),
    medianGapMs: of((r) => r.medianGapMs),
  };
}
