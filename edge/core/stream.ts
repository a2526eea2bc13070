// A generation answered as a stream: the endpoint's encoder over the sidecar's events, framed as SSE
// (numbered when resumable, numbering.ts), with keep-alive, cancellation when the client leaves, and
// a failure after `start` reported in-stream (docs/contract.md, "Every stream").
import type * as z from "zod";
import { FinishReason, type Token } from "../../proto/gen/inference/v1/inference_pb.js";
import { isUnexpected, ServerError, toApiError } from "../base/errors.js";
import type { GenerationResult, OpenedGeneration } from "../upstream/generation.js";
import type { SseEvent } from "../sse/frame.js";
import { sseResponse } from "../sse/stream-response.js";
import type { AppContext } from "./context.js";
import type { Endpoint, ResponseMeta, StreamEncoder } from "./endpoint.js";
import { noteFinish, noteToken } from "./log-notes.js";
import { framer, type Numbering } from "./numbering.js";
import type { RequestRecord } from "./request-log.js";
import { STREAM_ID_HEADER } from "./resumable.js";

/** What a stream needs to hand its whole result on (Endpoint.finished), or nothing. */
type Finished = ((result: GenerationResult) => Promise<void>) | undefined;

async function* streamFrames(
  opened: OpenedGeneration,
  encoder: StreamEncoder,
  signal: AbortSignal,
  report: (error: unknown) => void,
  record: RequestRecord | undefined,
  finished: Finished,
  lines: boolean,
  numbering?: Numbering,
): AsyncGenerator<string, void, undefined> {
  const format = lines ? lineFramer : framer(numbering);
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
        case "progress":
          if (encoder.progress !== undefined) yield format(encoder.progress(event.value));
          break;
        case "finish":
          noteFinish(record, event.value);
          // ABORT means the client left: there is no one to tell.
          if (event.value.reason === FinishReason.ABORT) return;
          numbering?.onFinish(event.value);
          await finished?.({
            start: opened.start,
            tokens,
            text: tokens.map((t) => t.text).join(""),
            finish: event.value,
          });
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

/** NDJSON: each event's data (one JSON value) on a line of its own. */
function lineFramer(events: readonly SseEvent[]): string {
  return events.map((event) => `${event.data}\n`).join("");
}

/** A body of one text chunk (a refusal's frames). */
export async function* only(text: string): AsyncGenerator<string, void, undefined> {
  yield text;
}

export interface StreamSettings {
  readonly abort: AbortController;
  readonly context: AppContext;
  readonly record: RequestRecord | undefined;
  /** A resumable stream: its frames numbered; without, the stream is not resumable. */
  readonly numbering?: Numbering;
  /** A replay (edge/replay/): the endpoint's `finished` does not run again. */
  readonly replay?: boolean;
}

/** The SSE response of an opened generation. */
export function streamResponse<S extends z.ZodType>(
  endpoint: Endpoint<S>,
  body: z.output<S>,
  opened: OpenedGeneration,
  meta: ResponseMeta,
  settings: StreamSettings,
): Response {
  const { abort, context, record, numbering } = settings;
  const lines = endpoint.protocol.lines === true;
  if (record !== undefined) record.deferred = true;
  const finished: Finished =
    endpoint.finished === undefined || settings.replay === true
      ? undefined
      : (result) => endpoint.finished?.(body, result, meta) ?? Promise.resolve();
  const frames = streamFrames(
    opened,
    endpoint.streamEncoder(body, meta),
    abort.signal,
    context.reportUnexpected,
    record,
    finished,
    lines,
    numbering,
  );
  return sseResponse(frames, {
    onCancel: (reason) => abort.abort(reason),
    // Under workerd a silence is also when a client that left goes unnoticed (patient-json.ts).
    keepAliveMs: lines
      ? 0
      : context.abandonProbeMs > 0
        ? Math.min(context.keepAliveMs, context.abandonProbeMs)
        : context.keepAliveMs,
    keepAlive: endpoint.protocol.keepAlive,
    ...(numbering === undefined ? {} : { headers: { [STREAM_ID_HEADER]: numbering.streamId } }),
    ...(lines ? { headers: { "content-type": "application/x-ndjson" } } : {}),
  });
}
