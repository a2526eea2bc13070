// One stream's measurement, the same shape for every party.

/** completed; rejected (HTTP 429 / RESOURCE_EXHAUSTED); failed (any other error); hung (timed out). */
export type Outcome = "completed" | "rejected" | "failed" | "hung";

export interface StreamSample {
  readonly outcome: Outcome;
  /** HTTP status, or the gRPC code for native gRPC (0 = OK). */
  readonly status: number;
  /** Request sent → the server accepted it: response headers (HTTP) or the `start` event (gRPC), ms. */
  readonly acceptedMs?: number | undefined;
  /** Request sent → first token (ms). */
  readonly ttftMs: number;
  /** Request sent → last token (ms). */
  readonly lastTokenMs: number;
  /** Request sent → stream closed or refusal received (ms). */
  readonly totalMs: number;
  /** Tokens generated (the server's count where it reports one). */
  readonly tokens: number;
  readonly promptTokens?: number | undefined;
  readonly cachedTokens?: number | undefined;
  /** The text generated (HTTP streams: what a client sends back as the assistant's turn). */
  readonly text?: string | undefined;
  /** The server's own timings where it reports them (sidecar Finish.timings, llama-server timings). */
  readonly serverPromptMs?: number | undefined;
  readonly serverDecodeMs?: number | undefined;
  readonly serverQueueMs?: number | undefined;
  /** When the request was sent, on the client's performance.now() clock (concurrent runs). */
  readonly sentAt?: number | undefined;
  readonly error?: string | undefined;
  readonly note?: string | undefined;
}

/** Decode tokens/s between the first and the last token (the first token is prompt work). */
export function decodeRate(sample: StreamSample): number {
  const span = sample.lastTokenMs - sample.ttftMs;
  return sample.tokens > 1 && span > 0 ? ((sample.tokens - 1) * 1000) / span : Number.NaN;
}
