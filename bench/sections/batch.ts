// Batch lines in idle capacity (proto: GenerateRequest.priority): interactive time to first token
// at 4 streams through the edge with and without a batch of PRIORITY_BATCH generations running
// (sent straight to the sidecar over native gRPC, `sequences` in flight, preempted ones sent
// again: what the edge's batch runner does), rounds interleaved; and the batch's throughput on an
// idle box.
import { Code } from "@connectrpc/connect";
import { Priority } from "../../proto/gen/inference/v1/inference_pb.js";
import { streamGrpc, type GrpcClient } from "../clients/grpc.js";
import type { Party } from "../parties.js";
import type { StreamSample } from "../sample.js";
import { SEED, streamPrompt, TEMPERATURE } from "../workload.js";
import { runConcurrent } from "./concurrent.js";

export interface BatchOptions {
  /** Lines of the batch (each one generation). */
  readonly lines: number;
  /** Tokens each line generates. */
  readonly lineTokens: number;
  /** Lines in flight at once (the sidecar's sequences). */
  readonly inFlight: number;
  /** Interactive streams at once, and rounds of each kind (alone, beside the batch). */
  readonly streams: number;
  readonly rounds: number;
  readonly timeoutMs: number;
}

/** One run of batch lines: how many, how long, the tokens, the preempted lines sent again. */
export interface BatchLines {
  readonly lines: number;
  readonly failed: number;
  readonly retries: number;
  readonly tokens: number;
  readonly wallMs: number;
}

export interface BatchResult {
  readonly options: BatchOptions;
  /** The batch alone on the box. */
  readonly idle: BatchLines;
  /** The batch whose lines ran beside the interactive rounds (its rest run after them). */
  readonly beside: BatchLines;
  /** Interactive streams alone, and while batch lines held every sequence they could. */
  readonly alone: StreamSample[];
  readonly withBatch: StreamSample[];
}

/** How long batch lines get to reach their sequences before the interactive streams of a round start. */
const SETTLE_MS = 250;

/** Sends batch lines, `inFlight` at once, each again when preempted; pauses between phases. */
class BatchRunner {
  readonly #client: GrpcClient;
  readonly #options: BatchOptions;
  readonly #pending: number[];
  #running = 0;
  #paused = true;
  #wake: (() => void)[] = [];
  /** Lines done so far (failed ones included), preempted lines sent again, tokens of completed lines. */
  readonly done = { lines: 0, failed: 0, retries: 0, tokens: 0 };

  constructor(client: GrpcClient, options: BatchOptions, firstVariant: number) {
    this.#client = client;
    this.#options = options;
    this.#pending = Array.from({ length: options.lines }, (_, i) => firstVariant + i);
  }

  get running(): number {
    return this.#running;
  }

  get left(): number {
    return this.#pending.length + this.#running;
  }

  /** Starts (or goes on with) the lines left, `inFlight` at once. */
  resume(): void {
    this.#paused = false;
    while (this.#running < this.#options.inFlight && this.#pending.length > 0)
      void this.#line(this.#pending.shift() as number);
  }

  /** Sends no new line; resolves once the lines in flight are done. */
  async pause(): Promise<void> {
    this.#paused = true;
    while (this.#running > 0) await this.#lineDone();
  }

  #lineDone(): Promise<void> {
    return new Promise((resolve) => this.#wake.push(resolve));
  }

  /** Runs every line left; resolves when all are done. */
  async drain(): Promise<void> {
    this.resume();
    while (this.left > 0) await this.#lineDone();
  }

  async #line(variant: number): Promise<void> {
    this.#running += 1;
    for (;;) {
      const sample = await streamGrpc(this.#client, this.#request(variant), this.#options.timeoutMs);
      if (sample.outcome === "completed") this.done.tokens += sample.tokens;
      else if (sample.status === Code.Aborted) {
        this.done.retries += 1;
        continue;
      } else this.done.failed += 1;
      break;
    }
    this.done.lines += 1;
    this.#running -= 1;
    if (!this.#paused && this.#pending.length > 0) void this.#line(this.#pending.shift() as number);
    for (const wake of this.#wake.splice(0)) wake();
  }

  #request(variant: number) {
    return {
      input: { case: "prompt" as const, value: streamPrompt(variant) },
      maxTokens: this.#options.lineTokens,
      sampling: { temperature: TEMPERATURE, seed: SEED },
      priority: Priority.BATCH,
    };
  }
}

/** Runs `runner`'s lines to the end on an otherwise idle box; the wall time is the whole run's. */
async function idleRun(runner: BatchRunner): Promise<BatchLines> {
  const started = performance.now();
  await runner.drain();
  return { ...runner.done, wallMs: performance.now() - started };
}

/**
 * The idle batch first; then rounds of `streams` interactive streams through the edge, each round
 * alone and then with the second batch's lines in flight (every sequence they can hold taken
 * before the streams start); the second batch's rest after the rounds.
 */
export async function runBatch(
  client: GrpcClient,
  edge: Party,
  options: BatchOptions,
  log: (m: string) => void,
): Promise<BatchResult> {
  log(`batch: ${options.lines} lines of ${options.lineTokens} tokens alone, ${options.inFlight} in flight`);
  const idle = await idleRun(new BatchRunner(client, options, 60_000));
  log(
    `batch alone: ${((idle.lines * 60_000) / idle.wallMs).toFixed(0)} lines/min, ` +
      `${((idle.tokens * 1000) / idle.wallMs).toFixed(1)} tok/s`,
  );
  const runner = new BatchRunner(client, options, 61_000);
  const alone: StreamSample[] = [];
  const withBatch: StreamSample[] = [];
  const rounds = async (variant: number) =>
    (await runConcurrent(options.streams, (i) => edge.run(variant + i))).samples;
  let besideMs = 0;
  for (let round = 0; round < options.rounds && runner.left > 0; round++) {
    alone.push(...(await rounds(70_000 + round * 32)));
    const resumed = performance.now();
    runner.resume();
    // The lines reach their sequences (a prompt of a few dozen tokens each) before the streams start.
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    withBatch.push(...(await rounds(70_016 + round * 32)));
    await runner.pause();
    besideMs += performance.now() - resumed;
    log(
      `batch round ${round + 1}/${options.rounds}: ${runner.done.lines} lines done, ${runner.done.retries} preempted ` +
        `and sent again`,
    );
  }
  const rest = performance.now();
  await runner.drain();
  besideMs += performance.now() - rest;
  return { options, idle, beside: { ...runner.done, wallMs: besideMs }, alone, withBatch };
}
