// GET /v1/streams/{stream_id} (and the Responses form, GET /v1/responses/{id}?stream=true): a
// resumable stream read again from the sidecar that holds it, after the event the client names
// (`Last-Event-ID`, or `starting_after`), in its original protocol's framing, then live to the
// end (docs/contract.md, "Resumable streams").
import { ANONYMOUS, callerOf } from "../access/caller.js";
import type { AppContext } from "../core/context.js";
import { InvalidRequestError, NotFoundError, ServerError, toApiError } from "../base/errors.js";
import { openResumed } from "../upstream/generation.js";
import { withProtocolHeaders } from "../core/protocol-family.js";
import { chatEndpoint } from "../protocols/openai-chat/handler.js";
import { completionEndpoint } from "../protocols/openai-completions/handler.js";
import { messagesEndpoint } from "../protocols/anthropic-messages/handler.js";
import { openAiProtocol } from "../protocols/openai-common/protocol.js";
import { responsesEndpoint } from "../protocols/openai-responses/handler.js";
import { decodeResumeContext, streamIdOfResponse } from "../core/resumable.js";
import { jsonResponse } from "../core/answers.js";
import type { Endpoint } from "../core/endpoint.js";
import { replayResult, replayStream } from "./replay.js";
import { locateStream } from "../upstream/streams.js";

// Every endpoint whose streams may be resumable, by its resumeName.
const ENDPOINTS: Readonly<Record<string, Endpoint<never>>> = Object.fromEntries(
  [chatEndpoint, completionEndpoint, messagesEndpoint, responsesEndpoint].map((e) => [
    e.resumeName,
    e as unknown as Endpoint<never>,
  ]),
);

/** The last event the client has: `Last-Event-ID`, else `?starting_after=N`; none: -1 (from the start). */
function lastEventOf(request: Request): number {
  const raw = request.headers.get("last-event-id") ?? new URL(request.url).searchParams.get("starting_after");
  if (raw === null || raw.trim() === "") return -1;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < -1)
    throw new InvalidRequestError(
      `Invalid 'starting_after' (or Last-Event-ID): expected an event number, got '${raw}'.`,
      { param: "starting_after" },
    );
  return n;
}

const clientOf = (request: Request): string => {
  const caller = callerOf(request);
  return caller.keyId === ANONYMOUS.keyId ? "" : caller.keyId;
};

/** The sidecar that holds a stream (its id names it), or a 404. */
async function located(streamId: string, context: AppContext) {
  const found = await locateStream(context.sidecars, streamId);
  if (found === undefined)
    throw new NotFoundError(`stream "${streamId}" is unknown or has expired`, { param: "stream_id" });
  return found;
}

/** The stream from its start, with the endpoint and body it was encoded with. */
async function reopen(streamId: string, request: Request, context: AppContext, snapshot = false) {
  const found = await located(streamId, context);
  const opened = await openResumed(
    found.client,
    { streamId: found.streamId, clientId: clientOf(request), snapshot },
    request.signal,
    context.sidecarStallMs,
  );
  const saved = decodeResumeContext(opened.start.resumeContext);
  const endpoint = saved === undefined ? undefined : ENDPOINTS[saved.endpoint];
  if (saved === undefined || endpoint === undefined)
    throw new ServerError(`Stream '${streamId}' cannot be read again by this edge: it was started by another version.`);
  return { opened, saved, endpoint };
}

async function resume(streamId: string, request: Request, context: AppContext): Promise<Response> {
  const after = lastEventOf(request);
  const { opened, saved, endpoint } = await reopen(streamId, request, context);
  return replayStream(
    endpoint,
    saved.body as never,
    opened,
    { streamId, startedMs: saved.startedMs, after },
    request,
    context,
  );
}

/** GET /v1/streams/{stream_id} */
export function handleResumeStream(streamId: string, request: Request, context: AppContext): Promise<Response> {
  return withProtocolHeaders(openAiProtocol, context, request, () => resume(streamId, request, context));
}

/**
 * POST /v1/responses/{id}/cancel: stops a background Response and answers it as it stands,
 * `status: "cancelled"` (one that had already finished is answered as it finished).
 */
export function handleCancelResponse(responseId: string, request: Request, context: AppContext): Promise<Response> {
  return withProtocolHeaders(openAiProtocol, context, request, async () => {
    const streamId = streamIdOfResponse(responseId, "resp_");
    if (streamId === undefined)
      throw new NotFoundError(`No response found with id '${responseId}'.`, { param: "response_id" });
    const found = await located(streamId, context);
    await found.client.cancelStream(
      { streamId: found.streamId, clientId: clientOf(request) },
      { signal: request.signal },
    );
    return jsonResponse(await responseSoFar(streamId, request, context, false));
  });
}

/** A background Response as it stands: in progress (output so far), cancelled, or as it ended. */
async function responseSoFar(
  streamId: string,
  request: Request,
  context: AppContext,
  snapshot: boolean,
): Promise<Record<string, unknown>> {
  const { opened, saved, endpoint } = await reopen(streamId, request, context, snapshot);
  const { answer: response, state } = (await replayResult(endpoint, saved.body as never, opened, {
    streamId,
    startedMs: saved.startedMs,
  })) as {
    answer: Record<string, unknown>;
    state: string;
  };
  if (state === "cancelled") return { ...response, status: "cancelled", completed_at: null, incomplete_details: null };
  if (state !== "running") return response;
  const output = (response["output"] as Record<string, unknown>[]).map((item) => ({ ...item, status: "in_progress" }));
  return { ...response, status: "in_progress", completed_at: null, incomplete_details: null, usage: null, output };
}

/** GET /v1/responses/{id} for a background Response: polled, as it stands now. */
export function handlePollResponse(responseId: string, request: Request, context: AppContext): Promise<Response> {
  return withProtocolHeaders(openAiProtocol, context, request, async () => {
    const missing = new NotFoundError(`Response with id '${responseId}' not found.`, { code: "response_not_found" });
    const streamId = streamIdOfResponse(responseId, "resp_");
    if (streamId === undefined) throw missing;
    try {
      return jsonResponse(await responseSoFar(streamId, request, context, true));
    } catch (error) {
      throw toApiError(error) instanceof NotFoundError ? missing : error;
    }
  });
}

/** GET /v1/responses/{id}?stream=true: a background (resumable) Response streamed again. */
export function handleResumeResponse(responseId: string, request: Request, context: AppContext): Promise<Response> {
  return withProtocolHeaders(openAiProtocol, context, request, () => {
    const streamId = streamIdOfResponse(responseId, "resp_");
    if (streamId === undefined)
      throw new NotFoundError(`No response found with id '${responseId}'.`, { param: "response_id" });
    return resume(streamId, request, context);
  });
}
