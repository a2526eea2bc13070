// One structured log line per request: who (the key's id, never the key), what (endpoint,
// model), how it went (status, tokens, time to first token, duration, how it ended). No prompt
// or reply text unless `LOG_BODIES=true`. A stream's line is written when the stream ends; the
// request's spans (edge/trace/), when it has them, end with it.
import type { RequestTrace } from "../trace/request-trace.js";

export type RequestOutcome =
  | "completed" // a generation finished (stop, stop sequence, tool calls)
  | "length" // a generation stopped at its token limit or the full context
  | "client_left" // the client went away before the end
  | "error" // the answer is an error (status says which)
  | "answered"; // a request that is not a generation (models, info, health, counts)

export interface RequestLogLine {
  readonly time: string;
  readonly request_id: string;
  readonly key_id: string;
  readonly method: string;
  readonly endpoint: string;
  readonly status: number;
  readonly outcome: RequestOutcome;
  readonly duration_ms: number;
  readonly model?: string;
  readonly prompt_tokens?: number;
  readonly cached_tokens?: number;
  readonly completion_tokens?: number;
  readonly ttft_ms?: number;
  readonly error_type?: string;
  readonly request_body?: string;
  readonly reply_text?: string;
}

export type RequestLogger = (line: RequestLogLine) => void;

/** What one request did, filled in by the routes; written once, when the answer is complete. */
export class RequestRecord {
  readonly requestId: string;
  keyId = "anonymous";
  status = 200;
  outcome: RequestOutcome = "answered";
  model: string | undefined;
  promptTokens: number | undefined;
  cachedTokens: number | undefined;
  completionTokens: number | undefined;
  ttftMs: number | undefined;
  errorType: string | undefined;
  requestBody: string | undefined;
  replyText: string | undefined;
  /** `performance.now()` when the request arrived, for durations on a monotonic clock. */
  readonly startedAtMonotonic = performance.now();
  /** Set by a route whose body is still being written (a stream): it calls `end` itself. */
  deferred = false;
  /** The request's spans, when tracing is on (edge/trace/). */
  trace: RequestTrace | undefined;
  #ended = false;

  constructor(
    requestId: string,
    readonly method: string,
    readonly endpoint: string,
    readonly startedAt: number,
    readonly withBodies: boolean,
    private readonly write: RequestLogger,
  ) {
    this.requestId = requestId;
  }

  /** Writes the line (once). */
  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.trace?.end({ status: this.status, outcome: this.outcome, errorType: this.errorType });
    const optional = {
      model: this.model,
      prompt_tokens: this.promptTokens,
      cached_tokens: this.cachedTokens,
      completion_tokens: this.completionTokens,
      ttft_ms: this.ttftMs === undefined ? undefined : Math.round(this.ttftMs),
      error_type: this.errorType,
      request_body: this.withBodies ? this.requestBody : undefined,
      reply_text: this.withBodies ? this.replyText : undefined,
    };
    this.write({
      time: new Date(this.startedAt).toISOString(),
      request_id: this.requestId,
      key_id: this.keyId,
      method: this.method,
      endpoint: this.endpoint,
      status: this.status,
      outcome: this.outcome,
      duration_ms: Math.round(performance.now() - this.startedAtMonotonic),
      ...Object.fromEntries(Object.entries(optional).filter(([, value]) => value !== undefined)),
    });
  }
}

const records = new WeakMap<Request, RequestRecord>();

export function setRecord(request: Request, record: RequestRecord): void {
  records.set(request, record);
}

/** The request's record, if the app keeps one (it does unless no logger is configured). */
export function recordOf(request: Request): RequestRecord | undefined {
  return records.get(request);
}
