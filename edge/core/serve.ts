// The one request → sidecar → response path shared by every generation endpoint
// (OpenAI chat and completions, Anthropic Messages, OpenAI Responses). An endpoint
// supplies its schema, its translation to a GenerateRequest and its encoders; body
// reading, the wait for the sidecar's `start`, stream or collect, keep-alive,
// cancellation and error framing are decided once, here (docs/contract.md, "Every stream": every route
// normalises its request and ends in one shared path; framing per protocol apart). The stream is
// stream.ts, a resumable stream's numbering numbering.ts, background jobs background.ts, what the
// request log learns log-notes.ts; the endpoint's types are endpoint.ts.
import type * as z from "zod";
import { FinishReason, type GenerateRequest } from "../../proto/gen/inference/v1/inference_pb.js";
import { ANONYMOUS, callerOf } from "../access/caller.js";
import { linkedAbort } from "../base/abort.js";
import { FillInMiddleUnsupportedError, GenerationRejectedError, ServerError, toApiError } from "../base/errors.js";
import { affinityKey } from "../upstream/affinity.js";
import { collectChoices, collectGeneration, type OpenedGeneration } from "../upstream/generation.js";
import { openRouted, type RoutedGeneration } from "../upstream/route.js";
import { edgeStreamId } from "../upstream/streams.js";
import { formatEvent } from "../sse/frame.js";
import { sseResponse } from "../sse/stream-response.js";
import type { ArrivalTicket } from "./arriving.js";
import { acceptedJob, isBackgroundJob } from "./resumable.js";
import { readJsonBody } from "./body.js";
import { checkChoices } from "./choice-count.js";
import type { AppContext } from "./context.js";
import type { Endpoint, ResponseMeta } from "./endpoint.js";
import { noteCollected, noteCollectedChoices, noteStart } from "./log-notes.js";
import { resumableMeta } from "./numbering.js";
import { patientJson } from "./patient-json.js";
import { priorityOf } from "./priority.js";
import { withProtocolHeaders } from "./protocol-family.js";
import { recordOf, type RequestRecord } from "./request-log.js";
import { encodeResumeContext, wantsResumable } from "./resumable.js";
import { only, streamResponse } from "./stream.js";
import { parseRequest } from "./validation.js";
import { chatOf, refusalOf, resolveChatMedia } from "./media/for-request.js";
import { applyLora, type LoraChoice } from "./lora.js";

/** A body's answer without a generation (Ollama's empty request loads or unloads its model), else undefined. */
export type OtherAnswer<S extends z.ZodType> = (body: z.output<S>) => Promise<Response> | undefined;

async function generate<S extends z.ZodType>(
  endpoint: Endpoint<S>,
  request: Request,
  context: AppContext,
  other?: OtherAnswer<S>,
): Promise<Response> {
  const ticket = context.arriving.enter();
  try {
    const body = parseRequest(endpoint.schema, await readJsonBody(request, context.maxBodyBytes));
    const answer = other?.(body);
    if (answer !== undefined) return await answer;
    return await generateFor(endpoint, body, request, context, ticket);
  } finally {
    ticket.leave();
  }
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
  ticket?: ArrivalTicket,
): Promise<Response> {
  const generateRequest = await requestFor(endpoint, body, request, context);
  const stream = endpoint.isStream(body);
  // Progress is a stream's (llama-server's `return_progress`): a whole answer has no use for it.
  if (!stream) generateRequest.returnProgress = false;
  const startedMs = context.now();
  const background = isBackgroundJob(endpoint, body, stream);
  const resumeName = (stream && wantsResumable(request, body)) || background ? endpoint.resumeName : undefined;
  if (resumeName !== undefined) {
    generateRequest.resumable = true;
    generateRequest.detached = background;
    generateRequest.resumeContext = encodeResumeContext({ endpoint: resumeName, body, startedMs });
  }
  if (generateRequest.n > 1)
    await checkChoices(context.sidecars, generateRequest, {
      resumable: resumeName !== undefined,
      stored: endpoint.finished !== undefined,
      ...(endpoint.choicesField === undefined ? {} : { field: endpoint.choicesField }),
    });
  const abort = linkedAbort(request.signal);
  // The requests right behind this one, for the sidecar's first batch to wait for (arriving.ts).
  generateRequest.arrivingWith = ticket === undefined ? 0 : await ticket.sent();
  // The GenAI span, when the request is traced; its context goes to the sidecar (edge/trace/).
  const headers = recordOf(request)?.trace?.generation(generateRequest, stream, endpoint.affinity?.(body).id, body);
  const opened = await openFor(endpoint, body, generateRequest, { stream, abort, headers }, context);
  if (opened instanceof Response) return opened;
  const model = opened.start.model !== "" ? opened.start.model : generateRequest.model;
  if (resumeName !== undefined) {
    const streamId = edgeStreamId(opened.start.streamId, opened.sidecarId);
    const [meta, numbering] = resumableMeta(endpoint, streamId, startedMs, model, -1);
    const record = noteStart(recordOf(request), meta, opened, body);
    if (!background) return streamResponse(endpoint, body, opened, meta, { abort, context, record, numbering });
    return acceptedJob(endpoint, body, meta, abort);
  }
  const meta: ResponseMeta = {
    id: `${endpoint.idPrefix}${context.newId()}`,
    created: Math.floor(startedMs / 1000),
    startedMs,
    model,
    newId: context.newId,
    now: context.now,
  };
  const record = noteStart(recordOf(request), meta, opened, body);
  if (stream) return streamResponse(endpoint, body, opened, meta, { abort, context, record });
  return collectedAnswer(endpoint, body, meta, opened, {
    abort,
    context,
    record,
    choices: Math.max(1, generateRequest.n),
  });
}

/** The body's GenerateRequest, its media resolved, its adapter named, and who asks: caller, priority, request id. */
async function requestFor<S extends z.ZodType>(
  endpoint: Endpoint<S>,
  body: z.output<S>,
  request: Request,
  context: AppContext,
): Promise<GenerateRequest> {
  const generateRequest = endpoint.toRequest(body);
  // Images referred to by URL, file or base64 become bytes here, or a 400 naming the part (core/media/).
  await resolveChatMedia(chatOf(generateRequest), context, request);
  // llama-server's `lora` field (chat and completions) names the adapter that serves the request; without it the
  // path stays as it was (no wait).
  const lora = (body as { lora?: readonly LoraChoice[] | null }).lora;
  if (lora != null && lora.length > 0) await applyLora(context.sidecar, generateRequest, lora, request.signal);
  // The sidecar's queue lets callers take turns (proto: GenerateRequest.client_id; empty: anonymous).
  const caller = callerOf(request);
  if (caller.keyId !== ANONYMOUS.keyId) generateRequest.clientId = caller.keyId;
  // A batch line's call is served in idle capacity (priority.ts); any other is interactive.
  generateRequest.priority = priorityOf(request);
  // Slots shows it beside the sequence the request uses (proto: GenerateRequest.request_id).
  generateRequest.requestId = recordOf(request)?.requestId ?? "";
  return generateRequest;
}

/** How a generation is opened: streamed or not, its cancellation, the trace headers for the sidecar. */
interface OpenCall {
  readonly stream: boolean;
  readonly abort: AbortController;
  readonly headers: Readonly<Record<string, string>> | undefined;
}

/**
 * The generation opened on a sidecar picked for it, or, for a stream the sidecar refused before
 * `start` where the protocol reports that in-stream, that whole SSE answer.
 */
async function openFor<S extends z.ZodType>(
  endpoint: Endpoint<S>,
  body: z.output<S>,
  generateRequest: GenerateRequest,
  call: OpenCall,
  context: AppContext,
): Promise<RoutedGeneration | Response> {
  const { stream, abort, headers } = call;
  try {
    const key = context.sidecars.several ? await affinityKey(generateRequest, endpoint.affinity?.(body)) : undefined;
    return await openRouted(context.sidecars, generateRequest, key, abort.signal, context.sidecarStallMs, headers);
  } catch (caught) {
    const refused = refusalOf(toApiError(caught), chatOf(generateRequest));
    const field = endpoint.infillField;
    const error =
      refused instanceof FillInMiddleUnsupportedError && field !== undefined ? refused.naming(field) : refused;
    // Other failures (unreachable, busy, unknown model) keep their HTTP status on every
    // protocol, because clients and SDKs act on it (retry, back off).
    if (stream && error instanceof GenerationRejectedError && endpoint.refusedStream !== undefined) {
      return sseResponse(only(endpoint.refusedStream(error).map(formatEvent).join("")));
    }
    throw error;
  }
}

interface CollectSettings {
  readonly abort: AbortController;
  readonly context: AppContext;
  readonly record: RequestRecord | undefined;
  /** The choices the generation has (GenerateRequest.n). */
  readonly choices: number;
}

/** A non-streaming answer: JSON once the generation is done, written patiently (patient-json.ts). */
function collectedAnswer<S extends z.ZodType>(
  endpoint: Endpoint<S>,
  body: z.output<S>,
  meta: ResponseMeta,
  opened: OpenedGeneration,
  settings: CollectSettings,
): Promise<Response> {
  const { abort, context, record, choices } = settings;
  const answer =
    choices > 1
      ? collectChoicesBody(endpoint, body, meta, opened, record, choices)
      : collectBody(endpoint, body, meta, opened, record);
  return patientJson(answer, {
    probeMs: context.abandonProbeMs,
    onCancel: (reason) => abort.abort(reason),
    errorBody: (error) => endpoint.protocol.errorResponse(toApiError(error)).text(),
    onCommitted: () => {
      if (record !== undefined) record.deferred = true;
    },
    onWritten: (ok) => {
      if (record === undefined) return;
      if (!ok) record.outcome = abort.signal.aborted ? "client_left" : "error";
      record.end();
    },
  });
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
  noteCollected(record, result);
  if (result.finish.reason === FinishReason.ABORT) {
    throw new ServerError("The generation was cancelled.", { code: "cancelled" });
  }
  await endpoint.finished?.(body, result, meta);
  return endpoint.encodeResult(body, meta, result);
}

/** The whole answer of a request for several choices: every choice's result, in index order. */
async function collectChoicesBody<S extends z.ZodType>(
  endpoint: Endpoint<S>,
  body: z.output<S>,
  meta: ResponseMeta,
  opened: OpenedGeneration,
  record: RequestRecord | undefined,
  choices: number,
): Promise<unknown> {
  const results = await collectChoices(opened, choices);
  noteCollectedChoices(record, results);
  if (results.some((result) => result.finish.reason === FinishReason.ABORT)) {
    throw new ServerError("The generation was cancelled.", { code: "cancelled" });
  }
  if (endpoint.encodeChoices === undefined) throw new ServerError(`This endpoint answers one choice, not ${choices}.`);
  return endpoint.encodeChoices(body, meta, results);
}

/**
 * Serves one generation request on `endpoint`, with its protocol's headers; errors are thrown to the app
 * (http/answer.ts).
 */
export function serve<S extends z.ZodType>(
  endpoint: Endpoint<S>,
  request: Request,
  context: AppContext,
  other?: OtherAnswer<S>,
): Promise<Response> {
  return withProtocolHeaders(endpoint.protocol, context, request, () => generate(endpoint, request, context, other));
}
