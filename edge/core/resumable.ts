// Resumable streams at the edge (docs/contract.md, "Resumable streams"): which requests ask for
// one, what the edge leaves with the sidecar to read the stream again (its resume context), and
// the response identity that a replay must rebuild exactly — the id, the timestamps and the ids
// inside the response all follow from the stream id and the events, never from the clock or a
// random source, so a resumed stream's frames are byte for byte the original's. And background
// jobs (Responses' `background`): a non-streaming request run detached in the sidecar as a
// resumable stream; the call only waits for the sidecar to accept it and answers at once, and the
// caller polls.
import type { Finish } from "../../proto/gen/inference/v1/inference_pb.js";
import { InvalidRequestError } from "../base/errors.js";
import type * as z from "zod";
import { jsonResponse } from "./answers.js";
import type { Endpoint, ResponseMeta } from "./endpoint.js";

/** The request header that asks for a resumable stream. */
export const RESUMABLE_HEADER = "x-resumable";
/** The response header that names a resumable stream. */
export const STREAM_ID_HEADER = "x-stream-id";
const STREAM_PREFIX = "strm_";

/** What the edge needs to encode a stream again: which endpoint, the validated body, when it began. */
export interface ResumeContext {
  readonly endpoint: string;
  readonly body: unknown;
  readonly startedMs: number;
}

export function encodeResumeContext(context: ResumeContext): Uint8Array {
  return new TextEncoder().encode(JSON.stringify({ v: 1, ...context }));
}

export function decodeResumeContext(bytes: Uint8Array): ResumeContext | undefined {
  try {
    const value = JSON.parse(new TextDecoder().decode(bytes)) as Partial<ResumeContext> & { v?: number };
    if (value.v !== 1 || typeof value.endpoint !== "string" || typeof value.startedMs !== "number") return undefined;
    return { endpoint: value.endpoint, body: value.body, startedMs: value.startedMs };
  } catch {
    return undefined;
  }
}

/** Whether a streaming request asks to be resumable: the header, or Responses' `background`. */
export function wantsResumable(request: Request, body: unknown): boolean {
  const header = request.headers.get(RESUMABLE_HEADER)?.trim().toLowerCase();
  if (header !== undefined && header !== "true" && header !== "false") {
    throw new InvalidRequestError(`Invalid '${RESUMABLE_HEADER}' header: expected "true" or "false".`, {
      param: RESUMABLE_HEADER,
    });
  }
  return (
    header === "true" ||
    (typeof body === "object" && body !== null && (body as { background?: unknown }).background === true)
  );
}

/** The response id of a resumable stream: the endpoint's prefix and the stream id's random part. */
export function resumableResponseId(idPrefix: string, streamId: string): string {
  return `${idPrefix}${streamId.startsWith(STREAM_PREFIX) ? streamId.slice(STREAM_PREFIX.length) : streamId}`;
}

/** The stream id behind a resumable stream's response id (`resp_X` → `strm_X`; X names the sidecar too). */
export function streamIdOfResponse(responseId: string, idPrefix: string): string | undefined {
  return responseId.startsWith(idPrefix) && responseId.length > idPrefix.length
    ? `${STREAM_PREFIX}${responseId.slice(idPrefix.length)}`
    : undefined;
}

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** Ids for the inside of a response (24 base-62 characters), the same sequence for the same stream. */
export function seededIds(streamId: string): () => string {
  // FNV-1a of the stream id seeds a 32-bit xorshift generator.
  let state = 0x811c9dc5;
  for (let i = 0; i < streamId.length; i++) state = Math.imul(state ^ streamId.charCodeAt(i), 0x01000193) >>> 0;
  if (state === 0) state = 1;
  return () => {
    let out = "";
    for (let i = 0; i < 24; i++) {
      state ^= state << 13;
      state ^= state >>> 17;
      state ^= state << 5;
      state >>>= 0;
      out += ALPHABET[state % 62] ?? "0";
    }
    return out;
  };
}

/** When a generation ended, from its start and its own timings (the same on every replay). */
export function finishedAtMs(startedMs: number, finish: Finish): number {
  const t = finish.timings;
  return startedMs + Math.round((t?.queueMs ?? 0) + (t?.promptMs ?? 0) + (t?.generationMs ?? 0));
}

/** Whether this request runs as a background job: not a stream, and the endpoint says so. */
export function isBackgroundJob<S extends z.ZodType>(
  endpoint: Endpoint<S>,
  body: z.output<S>,
  stream: boolean,
): boolean {
  return !stream && endpoint.isBackground?.(body) === true;
}

/** The answer to an accepted job; the call's own wait ends here, the job goes on. */
export function acceptedJob<S extends z.ZodType>(
  endpoint: Endpoint<S>,
  body: z.output<S>,
  meta: ResponseMeta,
  abort: AbortController,
): Response {
  // The job goes on in the sidecar (detached); this call only waited for it to be accepted.
  abort.abort(new Error("a background job: the caller polls it"));
  return jsonResponse(endpoint.accepted?.(body, meta) ?? {});
}
