// The request → response path shared by the OpenAI generation endpoints. Each
// endpoint supplies its schema, its translation to a GenerateRequest and its
// encoder; everything else (body reading, the pre-start wait, stream or collect,
// error framing, cancellation) is decided once, here.
import type { z } from "zod";
import { FinishReason, type Finish, type GenerateRequest, type Start, type Token } from "../../../proto/gen/inference/v1/inference_pb.js";
import { readJsonBody } from "../../body.js";
import type { AppContext } from "../../context.js";
import { GenerationRejectedError, isUnexpected, ServerError, toApiError } from "../../errors.js";
import { collectGeneration, openGeneration, type GenerationResult, type OpenedGeneration } from "../../generation.js";
import { formatEvent, formatJsonEvent } from "../../sse/frame.js";
import { sseResponse } from "../../sse/response.js";
import { parseRequest } from "../../validation.js";
import { openAiErrorEvent } from "./errors.js";
import { jsonResponse } from "./json.js";

/** Identity of one response: the same on every chunk of a stream. */
export interface ResponseMeta {
  readonly id: string;
  /** Unix seconds. */
  readonly created: number;
  /** The sidecar's model id (`start.model`), or the requested name if it sent none. */
  readonly model: string;
}

/** Turns generation events into the JSON payloads of `data:` frames, in order. */
export interface StreamEncoder {
  start(start: Start): unknown[];
  token(token: Token): unknown[];
  /** The terminal chunk(s), usage included when asked; `[DONE]` is added by the caller. */
  finish(finish: Finish): unknown[];
}

export interface OpenAiEndpoint<S extends z.ZodType> {
  readonly schema: S;
  /** "chatcmpl-" or "cmpl-". */
  readonly idPrefix: string;
  toRequest(body: z.output<S>): GenerateRequest;
  isStream(body: z.output<S>): boolean;
  streamEncoder(body: z.output<S>, meta: ResponseMeta): StreamEncoder;
  encodeResult(body: z.output<S>, meta: ResponseMeta, result: GenerationResult): unknown;
}

const DONE = formatEvent({ data: "[DONE]" });

async function* streamFrames(
  opened: OpenedGeneration,
  encoder: StreamEncoder,
  signal: AbortSignal,
  report: (error: unknown) => void,
): AsyncGenerator<string, void, undefined> {
  for (const chunk of encoder.start(opened.start)) yield formatJsonEvent(chunk);
  try {
    for await (const event of opened.events) {
      switch (event.case) {
        case "token":
          for (const chunk of encoder.token(event.value)) yield formatJsonEvent(chunk);
          break;
        case "finish":
          // ABORT means the client left: there is no one to tell.
          if (event.value.reason === FinishReason.ABORT) return;
          for (const chunk of encoder.finish(event.value)) yield formatJsonEvent(chunk);
          yield DONE;
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
    // Headers are sent: report in-stream, always as a server error (DESIGN §3).
    yield openAiErrorEvent(new ServerError(toApiError(error).message, { cause: error }));
  }
}

async function* only(frame: string): AsyncGenerator<string, void, undefined> {
  yield frame;
}

/** A signal that aborts when the client's request does, or when `abort()` is called. */
function linkedAbort(request: Request): AbortController {
  const controller = new AbortController();
  if (request.signal.aborted) controller.abort(request.signal.reason);
  else request.signal.addEventListener("abort", () => controller.abort(request.signal.reason), { once: true });
  return controller;
}

export async function serveOpenAi<S extends z.ZodType>(
  endpoint: OpenAiEndpoint<S>,
  request: Request,
  context: AppContext,
): Promise<Response> {
  const body = parseRequest(endpoint.schema, await readJsonBody(request, context.maxBodyBytes));
  const generateRequest = endpoint.toRequest(body);
  const stream = endpoint.isStream(body);
  const id = `${endpoint.idPrefix}${context.newId()}`;
  const created = Math.floor(context.now() / 1000);
  const abort = linkedAbort(request);

  let opened: OpenedGeneration;
  try {
    opened = await openGeneration(context.sidecar, generateRequest, abort.signal);
  } catch (caught) {
    const error = toApiError(caught);
    // Seed 000: a request the sidecar refuses ends the stream with an error event and
    // no role frame. Other failures (unreachable, busy, unknown model) keep their HTTP
    // status, which clients and SDKs act on (retry, back off).
    if (stream && error instanceof GenerationRejectedError) {
      return sseResponse(only(openAiErrorEvent(error)));
    }
    throw error;
  }

  const meta: ResponseMeta = {
    id,
    created,
    model: opened.start.model !== "" ? opened.start.model : generateRequest.model,
  };
  if (stream) {
    const frames = streamFrames(opened, endpoint.streamEncoder(body, meta), abort.signal, context.reportUnexpected);
    return sseResponse(frames, { onCancel: (reason) => abort.abort(reason), keepAliveMs: context.keepAliveMs });
  }
  const result = await collectGeneration(opened);
  if (result.finish.reason === FinishReason.ABORT) {
    throw new ServerError("The generation was cancelled.", { code: "cancelled" });
  }
  return jsonResponse(endpoint.encodeResult(body, meta, result));
}
