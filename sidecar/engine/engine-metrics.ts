// What generation did, for operators and tests: plain counters the engine bumps, and histograms
// of time in the queue, to the first token and per output token. Rendered as Prometheus text by
// sidecar/metrics/prometheus.ts.
import { Histogram, Registry } from "prom-client";

/** Buckets in seconds: milliseconds for steps, up to minutes for long prompts and queues. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
const STEP_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28];

/** One finished generation's timings (GenerateResponse's Finish.timings), in milliseconds. */
export interface FinishTimings {
  readonly queueMs: number;
  readonly promptMs: number;
  readonly generationMs: number;
  readonly promptTokens: number;
  readonly completionTokens: number;
}

export class EngineMetrics {
  requestsStarted = 0;
  requestsRejected = 0;
  requestsCancelledInQueue = 0;
  generationsActive = 0;
  generationsAborted = 0;
  /** PRIORITY_BATCH generations stopped for an interactive request (proto: GenerateRequest.priority). */
  generationsPreempted = 0;
  tokensGenerated = 0;
  promptTokens = 0;
  /**
   * Prompts that copied a prefix another sequence held instead of evaluating it (decode/prefix-copy.ts), and the
   * tokens.
   */
  prefixCopies = 0;
  prefixCopiedTokens = 0;

  /** The registry the histograms live in; the Prometheus endpoint adds its gauges to it. */
  readonly registry = new Registry();
  readonly #queueWait = new Histogram({
    name: "sidecar_queue_wait_seconds",
    help: "Time a request waited for a free sequence.",
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly #timeToFirstToken = new Histogram({
    name: "sidecar_time_to_first_token_seconds",
    help: "Time from a sequence being taken to the first generated token (prompt processing).",
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly #timePerOutputToken = new Histogram({
    name: "sidecar_time_per_output_token_seconds",
    help: "Mean time between generated tokens of a generation, after the first.",
    buckets: STEP_BUCKETS,
    registers: [this.registry],
  });

  /** Records a finished generation (not one the caller abandoned). */
  finished(timings: FinishTimings): void {
    this.promptTokens += timings.promptTokens;
    this.#queueWait.observe(timings.queueMs / 1000);
    if (timings.completionTokens > 0) this.#timeToFirstToken.observe(timings.promptMs / 1000);
    if (timings.completionTokens > 1)
      this.#timePerOutputToken.observe(timings.generationMs / 1000 / (timings.completionTokens - 1));
  }
}
