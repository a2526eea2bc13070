// What a generation endpoint is (`Endpoint`: schema, translation, encoders, what runs once it
// finished) and what its encoders receive (`ResponseMeta`, `StreamEncoder`): the types every
// protocol's encoder and handler import, apart from the path that runs them (serve.ts).
import type * as z from "zod";
import type { Finish, GenerateRequest, Progress, Start, Token } from "../../proto/gen/inference/v1/inference_pb.js";
import type { ApiError } from "../base/errors.js";
import type { Affinity } from "../upstream/affinity.js";
import type { GenerationResult } from "../upstream/generation.js";
import type { SseEvent } from "../sse/frame.js";
import type { Protocol } from "./protocol-family.js";

/** Identity of one response: the same on every frame of a stream. */
export interface ResponseMeta {
  /** The response's id, prefix included (`chatcmpl-…`, `msg_…`, `resp_…`). */
  readonly id: string;
  /** Unix seconds. */
  readonly created: number;
  /** When the request arrived, in milliseconds since the epoch (Ollama's durations count from it). */
  readonly startedMs?: number;
  /** The sidecar's model id (`start.model`), or the requested name if it sent none. */
  readonly model: string;
  /** A fresh random id suffix, for ids inside the response (e.g. Responses output items). */
  readonly newId: () => string;
  /** The current time in milliseconds since the epoch (e.g. a Response's `completed_at`). */
  readonly now: () => number;
}

/**
 * Turns generation events into one protocol's SSE events, in order. Content goes
 * through edge/core/content.ts (deltas → blocks), so more block kinds are more cases
 * there, not more paths here.
 */
export interface StreamEncoder {
  start(start: Start): SseEvent[];
  token(token: Token): SseEvent[];
  /**
   * A progress event of the prompt's evaluation (GenerateRequest.return_progress, the row of fields/progress.ts): the
   * protocol's own frames, before the first token's; an encoder without it sends nothing.
   */
  progress?(progress: Progress): SseEvent[];
  /**
   * Everything after the last token of a finished generation: held-back text
   * (`Finish.text`), closing frames, the terminal event, usage, `[DONE]` where the
   * protocol has one. Not called when the client left (ABORT).
   */
  finish(finish: Finish): SseEvent[];
  /** The frames that end a stream which failed after `start` (headers are sent: no status). */
  fail(error: ApiError): SseEvent[];
}

export interface Endpoint<S extends z.ZodType> {
  readonly protocol: Protocol;
  readonly schema: S;
  /** "chatcmpl-", "cmpl-", "msg_", "resp_". */
  readonly idPrefix: string;
  /**
   * The name a resumable stream of this endpoint is encoded again under (edge/replay/): its
   * streams may be resumable (resumable.ts); without one, never.
   */
  readonly resumeName?: string;
  /** A non-streaming request to run as a background job (Responses' `background`): answered at once, polled. */
  isBackground?(body: z.output<S>): boolean;
  /** The answer to a background request the sidecar accepted (with `isBackground`). */
  accepted?(body: z.output<S>, meta: ResponseMeta): unknown;
  toRequest(body: z.output<S>): GenerateRequest;
  /** The body's name for GenerateRequest.n in refusals; default `n`. */
  readonly choicesField?: string;
  /** The field a fill-in-the-middle refusal names (a model without FIM tokens), for an endpoint that sends infills. */
  readonly infillField?: string;
  isStream(body: z.output<S>): boolean;
  /**
   * How a stream reports a request the sidecar refused before `start` (prompt too
   * long, template failure): these frames as the whole SSE body (OpenAI chat and
   * completions). Without it the refusal is an HTTP 4xx, as for Messages and Responses ("a normal JSON error response
   * with an HTTP status code").
   */
  refusedStream?(error: ApiError): SseEvent[];
  streamEncoder(body: z.output<S>, meta: ResponseMeta): StreamEncoder;
  encodeResult(body: z.output<S>, meta: ResponseMeta, result: GenerationResult): unknown;
  /**
   * The whole answer of several choices (a request whose GenerateRequest.n is above 1), one result
   * per choice in index order. Only an endpoint whose requests ask for several has it.
   */
  encodeChoices?(body: z.output<S>, meta: ResponseMeta, results: readonly GenerationResult[]): unknown;
  /**
   * Runs once a generation finished (not cancelled, not failed), after its last token and before
   * a stream's closing frames or the JSON body are sent: where a conversation's turn is stored.
   * If it fails, the answer fails (a stream ends with its error frames).
   */
  finished?(body: z.output<S>, result: GenerationResult, meta: ResponseMeta): Promise<void>;
  /**
   * What keeps the request on the sidecar that served its conversation before (a conversation id,
   * or that it continues an earlier response); without it the prompt's opening decides
   * (edge/upstream/affinity.ts). Matters only with several sidecars.
   */
  affinity?(body: z.output<S>): Affinity;
}
