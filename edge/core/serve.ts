// The one request → sidecar → response path shared by every generation endpoint
// (OpenAI chat and completions, Anthropic Messages, OpenAI Responses). An endpoint
// supplies its schema, its translation to a GenerateRequest and its encoders; body
// reading, the wait for the sidecar's `start`, stream or collect, keep-alive,
// cancellation and error framing are decided once, here (docs/contract.md, "Every stream": every route
// normalises its request and ends in one shared path; framing per protocol apart).
import { create } from "@bufbuild/protobuf";
import type * as z from "zod";
import { FinishReason, FinishSchema, type Finish, type GenerateRequest, type Start, type Token } from "../../proto/gen/inference/v1/inference_pb.js";
import { ANONYMOUS, callerOf } from "../access/caller.js";
import { readJsonBody } from "./body.js";
import type { AppContext } from "./context.js";
import { GenerationRejectedError, isUnexpected, ServerError, toApiError, type ApiError } from "../base/errors.js";
import { collectGeneration, collectSoFar, type GenerationResult, type OpenedGeneration } from "../sidecars/generation.js";
import { jsonResponse } from "./json.js";
import { patientJson } from "./patient-json.js";
import { answer, type Protocol } from "./protocol.js";
import { formatEvent, type SseEvent } from "../sse/frame.js";
import { sseResponse } from "../sse/response.js";
import { recordOf, type RequestRecord } from "./request-log.js";
import { encodeResumeContext, finishedAtMs, resumableResponseId, seededIds, STREAM_ID_HEADER, wantsResumable } from "./resumable.js";
import { affinityKey, type Affinity } from "../sidecars/affinity.js";
import { openRouted, type RoutedGeneration } from "../sidecars/route.js";
import { edgeStreamId } from "../sidecars/streams.js";
import { parseRequest } from "./validation.js";

/** Identity of one response: the same on every frame of a stream. */
export interface ResponseMeta {
  /** The response's id, prefix included (`chatcmpl-…`, `msg_…`, `resp_…`). */
  readonly id: string;
  /** Unix seconds. */
  readonly created: number;
  /** The sidecar's model id (`start.model`), or the requested name if it sent none. */
  readonly model: string;
  /** A fresh random id suffix, for ids inside the response (e.g. Responses output items). */
  readonly newId: () => string;
  /** The current time in milliseconds since the epoch (e.g. a Response's `completed_at`). */
  readonly now: () => number;
}

/**
 * Turns generation events into one protocol's SSE events, in order. Content goes
 * through edge/content.ts (deltas → blocks), so more block kinds are more cases
 * there, not more paths here.
 */
export interface StreamEncoder {
  start(start: Start): SseEvent[];
  token(token: Token): SseEvent[];
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
   * The name a resumable stream of this endpoint is encoded again under (edge/streams/): its
   * streams may be resumable (resumable.ts); without one, never.
   */
  readonly resumeName?: string;
  /** A non-streaming request to run as a background job (Responses' `background`): answered at once, polled. */
  isBackground?(body: z.output<S>): boolean;
  /** The answer to a background request the sidecar accepted (with `isBackground`). */
  accepted?(body: z.output<S>, meta: ResponseMeta): unknown;
  toRequest(body: z.output<S>): GenerateRequest;
  isStream(body: z.output<S>): boolean;
  /**
   * How a stream reports a request the sidecar refused before `start` (prompt too
   * long, template failure): these frames as the whole SSE body (OpenAI chat and
   * completions). Without it the refusal is an HTTP 4xx, as for Messages and Responses ("a normal JSON error response with an HTTP status code").
   */
  refusedStream?(error: ApiError): SseEvent[];
  streamEncoder(body: z.output<S>, meta: ResponseMeta): StreamEncoder;
  encodeResult(body: z.output<S>, meta: ResponseMeta, result: GenerationResult): unknown;
  /**
   * Runs once a generation finished (not cancelled, not failed), after its last token and before
   * a stream's closing frames or the JSON body are sent: where a conversation's turn is stored.
   * If it fails, the answer fails (a stream ends with its error frames).
   */
  finished?(body: z.output<S>, result: GenerationResult, meta: ResponseMeta): Promise<void>;
  /**
   * What keeps the request on the sidecar that served its conversation before (a conversation id,
   * or that it continues an earlier response); without it the prompt's opening decides
   * (edge/sidecars/affinity.ts). Matters only with several sidecars.
   */
  affinity?(body: z.output<S>): Affinity;
}

/** What a stream needs to hand its whole result on (Endpoint.finished), or nothing. */
type Finished = ((result: GenerationResult) => Promise<void>) | undefined;

/** A resumable stream's frames: numbered from 0 (`id:`), those up to `after` left out. */
interface Numbering {
  /** The stream's id as the client sees it (edge/sidecars/streams.ts). */
  readonly streamId: string;
  readonly after: number;
  /** Told the finish before it is encoded (the response's deterministic clock). */
  readonly onFinish: (finish: Finish) => void;
}

/** Formats SSE events, numbering them when the stream is resumable. */
function framer(numbering: Numbering | undefined): (events: readonly SseEvent[]) => string {
  if (numbering === undefined) return (events) => events.map(formatEvent).join("");
  let next = 0;
  return (events) => {
    let out = "";
    for (const event of events) {
      const id = next++;
      if (id > numbering.after) out += formatEvent({ ...event, id: String(id) });
    }
    return out;
  };
}

async function* streamFrames(
  opened: OpenedGeneration,
  encoder: StreamEncoder,
  signal: AbortSignal,
  report: (error: unknown) => void,
  record: RequestRecord | undefined,
  finished: Finished,
  numbering?: Numbering,
): AsyncGenerator<string, void, undefined> {
  const format = framer(numbering);
  yield format(encoder.start(opened.start));
  const tokens: Token[] = [];
  try {
    for await (const event of opened.events) {
      switch (event.case) {
        case "token":
          noteToken(record, event.value);
          if (finished !== undefined) tokens.push(event.value);
          yield format(encoder.token(event.value));
          break;
        case "finish":
          noteFinish(record, event.value);
          // ABORT means the client left: there is no one to tell.
          if (event.value.reason === FinishReason.ABORT) return;
          numbering?.onFinish(event.value);
          await finished?.({ start: opened.start, tokens, text: tokens.map((t) => t.text).join(""), finish: event.value });
          yield format(encoder.finish(event.value));
          break; // keep reading: the sidecar's stream ends right after `finish`
        default: {
          const unexpected: never = event;
          throw new ServerError(`unexpected event ${JSON.stringify(unexpected)}`);
        }
      }
    }
  } catch (error) {
    if (signal.aborted) return;
    if (isUnexpected(error)) report(error);
    if (record !== undefined) [record.outcome, record.errorType] = ["error", "server_error"];
    // Headers are sent: report in-stream, always as a server error (docs/contract.md, "Every stream").
    yield format(encoder.fail(new ServerError(toApiError(error).message, { cause: error })));
  } finally {
    if (record !== undefined && signal.aborted) record.outcome = "client_left";
    record?.end();
  }
}

/** The request log's view of a token: the time to the first one, and the reply's text. */
function noteToken(record: RequestRecord | undefined, token: Token): void {
  if (record === undefined) return;
  record.ttftMs ??= performance.now() - record.startedAtMonotonic;
  if (record.withBodies) record.replyText = (record.replyText ?? "") + token.text;
}

function noteFinish(record: RequestRecord | undefined, finish: Finish): void {
  if (record === undefined) return;
  record.completionTokens = finish.completionTokens;
  record.outcome = finish.reason === FinishReason.ABORT ? "client_left" : finish.reason === FinishReason.LENGTH || finish.reason === FinishReason.CONTEXT_FULL ? "length" : "completed";
  if (record.withBodies) record.replyText = (record.replyText ?? "") + finish.text;
}

async function* only(text: string): AsyncGenerator<string, void, undefined> {
  yield text;
}

/** A signal that aborts when the client's request does, or when `abort()` is called. */
function linkedAbort(request: Request): AbortController {
  const controller = new AbortController();
  if (request.signal.aborted) controller.abort(request.signal.reason);
  else request.signal.addEventListener("abort", () => controller.abort(request.signal.reason), { once: true });
  return controller;
}

async function generate<S extends z.ZodType>(
  endpoint: Endpoint<S>,
  request: Request,
  context: AppContext,
): Promise<Response> {
  const body = parseRequest(endpoint.schema, await readJsonBody(request, context.maxBodyBytes));
  return generateFor(endpoint, body, request, context);
}

/**
 * The generation for a body already read and validated (routes that read the body themselves,
 * such as /c1/chat, which adds the stored conversation first). Errors are thrown, not answered.
 */
export async function generateFor<S extends z.ZodType>(
  endpoint: Endpoint<S>,
  body: z.output<S>,
  request: Request,
  context: AppContext,
): Promise<Response> {
  const generateRequest = endpoint.toRequest(body);
  // The sidecar's queue lets callers take turns (proto: GenerateRequest.client_id; empty: anonymous).
  const caller = callerOf(request);
  if (caller !== ANONYMOUS) generateRequest.clientId = caller.keyId;
  const stream = endpoint.isStream(body);
  const startedMs = context.now();
  const background = !stream && endpoint.isBackground?.(body) === true;
  const resumeName = (stream && wantsResumable(request, body)) || background ? endpoint.resumeName : undefined;
  if (resumeName !== undefined) {
    generateRequest.resumable = true;
    generateRequest.detached = background;
    generateRequest.resumeContext = encodeResumeContext({ endpoint: resumeName, body, startedMs });
  }
  const abort = linkedAbort(request);
  let opened: RoutedGeneration;
  try {
    const key = context.sidecars.several ? await affinityKey(generateRequest, endpoint.affinity?.(body)) : undefined;
    opened = await openRouted(context.sidecars, generateRequest, key, abort.signal, context.sidecarStallMs);
  } catch (caught) {
    const error = toApiError(caught);
    // Other failures (unreachable, busy, unknown model) keep their HTTP status on every
    // protocol, because clients and SDKs act on it (retry, back off).
    if (stream && error instanceof GenerationRejectedError && endpoint.refusedStream !== undefined) {
      return sseResponse(only(endpoint.refusedStream(error).map(formatEvent).join("")));
    }
    throw error;
  }
  const model = opened.start.model !== "" ? opened.start.model : generateRequest.model;
  if (resumeName !== undefined) {
    const streamId = edgeStreamId(opened.start.streamId, opened.sidecarId);
    const [meta, numbering] = resumableMeta(endpoint, streamId, startedMs, model, -1);
    const record = noteStart(recordOf(request), meta, opened, body);
    if (!background) return streamResponse(endpoint, body, opened, meta, { abort, context, record, numbering });
    // The job goes on in the sidecar (detached); this call only waited for it to be accepted.
    abort.abort(new Error("a background job: the caller polls it"));
    return jsonResponse(endpoint.accepted?.(body, meta) ?? {});
  }
  const meta: ResponseMeta = { id: `${endpoint.idPrefix}${context.newId()}`, created: Math.floor(startedMs / 1000), model, newId: context.newId, now: context.now };
  const record = noteStart(recordOf(request), meta, opened, body);
  if (stream) return streamResponse(endpoint, body, opened, meta, { abort, context, record });
  return patientJson(collectBody(endpoint, body, meta, opened, record), {
    probeMs: context.abandonProbeMs,
    onCancel: (reason) => abort.abort(reason),
    errorBody: (error) => endpoint.protocol.errorResponse(toApiError(error)).text(),
    onCommitted: () => record !== undefined && (record.deferred = true),
    onWritten: (ok) => {
      if (record === undefined) return;
      if (!ok) record.outcome = abort.signal.aborted ? "client_left" : "error";
      record.end();
    },
  });
}

interface StreamSettings {
  readonly abort: AbortController;
  readonly context: AppContext;
  readonly record: RequestRecord | undefined;
  /** A resumable stream: its frames numbered; without, the stream is not resumable. */
  readonly numbering?: Numbering;
  /** A replay (edge/streams/): the endpoint's `finished` does not run again. */
  readonly replay?: boolean;
}

/** The SSE response of an opened generation. */
function streamResponse<S extends z.ZodType>(endpoint: Endpoint<S>, body: z.output<S>, opened: OpenedGeneration, meta: ResponseMeta, settings: StreamSettings): Response {
  const { abort, context, record, numbering } = settings;
  if (record !== undefined) record.deferred = true;
  const finished: Finished =
    endpoint.finished === undefined || settings.replay === true ? undefined : (result) => endpoint.finished?.(body, result, meta) ?? Promise.resolve();
  const frames = streamFrames(opened, endpoint.streamEncoder(body, meta), abort.signal, context.reportUnexpected, record, finished, numbering);
  return sseResponse(frames, {
    onCancel: (reason) => abort.abort(reason),
    // Under workerd a silence is also when a client that left goes unnoticed (patient-json.ts).
    keepAliveMs: context.abandonProbeMs > 0 ? Math.min(context.keepAliveMs, context.abandonProbeMs) : context.keepAliveMs,
    keepAlive: endpoint.protocol.keepAlive,
    ...(numbering === undefined ? {} : { headers: { [STREAM_ID_HEADER]: numbering.streamId } }),
  });
}

/** A resumable stream's identity, from its stream id and events alone (resumable.ts). */
function resumableMeta<S extends z.ZodType>(endpoint: Endpoint<S>, streamId: string, startedMs: number, model: string, after: number): [ResponseMeta, Numbering] {
  let endedMs: number | undefined;
  const meta: ResponseMeta = {
    id: resumableResponseId(endpoint.idPrefix, streamId),
    created: Math.floor(startedMs / 1000),
    model,
    newId: seededIds(streamId),
    now: () => endedMs ?? startedMs,
  };
  return [meta, { streamId, after, onFinish: (finish) => (endedMs = finishedAtMs(startedMs, finish)) }];
}

/**
 * A resumable stream read again as far as it goes, answered as a non-streaming request would be,
 * with how it ended: `running` when the events stop before the finish (a snapshot of a job in
 * progress: encoded as if it had ended there), `cancelled` for ABORT.
 */
export async function replayResult<S extends z.ZodType>(
  endpoint: Endpoint<S>,
  body: z.output<S>,
  opened: OpenedGeneration,
  replay: { streamId: string; startedMs: number },
): Promise<{ answer: unknown; state: "finished" | "running" | "cancelled" }> {
  const [meta, numbering] = resumableMeta(endpoint, replay.streamId, replay.startedMs, opened.start.model, -1);
  const soFar = await collectSoFar(opened);
  const finish = soFar.finish ?? create(FinishSchema, {});
  if (soFar.finish !== undefined) numbering.onFinish(finish);
  const answer = endpoint.encodeResult(body, meta, { ...soFar, finish });
  const state = soFar.finish === undefined ? "running" : finish.reason === FinishReason.ABORT ? "cancelled" : "finished";
  return { answer, state };
}

/**
 * A resumable stream read again (edge/streams/): the same endpoint's encoder over the sidecar's
 * replayed events, its frames from number `after + 1` on; nothing is stored again.
 */
export function replayStream<S extends z.ZodType>(
  endpoint: Endpoint<S>,
  body: z.output<S>,
  opened: OpenedGeneration,
  replay: { streamId: string; startedMs: number; after: number },
  request: Request,
  context: AppContext,
): Response {
  const [meta, numbering] = resumableMeta(endpoint, replay.streamId, replay.startedMs, opened.start.model, replay.after);
  return streamResponse(endpoint, body, opened, meta, { abort: linkedAbort(request), context, record: recordOf(request), numbering, replay: true });
}

/** The request log's view of an accepted generation. */
function noteStart(record: RequestRecord | undefined, meta: ResponseMeta, opened: OpenedGeneration, body: unknown): RequestRecord | undefined {
  if (record !== undefined) {
    [record.model, record.promptTokens, record.cachedTokens] = [meta.model, opened.start.promptTokens, opened.start.cachedTokens];
    if (record.withBodies) record.requestBody = JSON.stringify(body);
  }
  return record;
}

/** The whole answer of a non-streaming request, once the generation is done. */
async function collectBody<S extends z.ZodType>(
  endpoint: Endpoint<S>,
  body: z.output<S>,
  meta: ResponseMeta,
  opened: OpenedGeneration,
  record: RequestRecord | undefined,
): Promise<unknown> {
  const result = await collectGeneration(opened);
  noteFinish(record, result.finish);
  if (record !== undefined) {
    // Nothing is sent before the end: the time to the first token is the sidecar's own.
    const timings = result.finish.timings;
    if (timings !== undefined && result.tokens.length > 0) record.ttftMs = timings.queueMs + timings.promptMs;
    if (record.withBodies) record.replyText = result.text;
  }
  if (result.finish.reason === FinishReason.ABORT) {
    throw new ServerError("The generation was cancelled.", { code: "cancelled" });
  }
  await endpoint.finished?.(body, result, meta);
  return endpoint.encodeResult(body, meta, result);
}

/** Serves one generation request on `endpoint`; errors come back in its protocol's shape. */
export function serve<S extends z.ZodType>(endpoint: Endpoint<S>, request: Request, context: AppContext): Promise<Response> {
  return answer(endpoint.protocol, context, request, () => generate(endpoint, request, context));
}
