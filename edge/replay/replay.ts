// A resumable stream read again (docs/contract.md, "Resumable streams"): the same endpoint's encoder
// over the sidecar's replayed events, numbered and identified as the original was (core/numbering.ts),
// as a stream from the event the client names, or as one answer with how the stream ended.
import { create } from "@bufbuild/protobuf";
import type * as z from "zod";
import { FinishReason, FinishSchema } from "../../proto/gen/inference/v1/inference_pb.js";
import { linkedAbort } from "../base/abort.js";
import type { AppContext } from "../core/context.js";
import type { Endpoint } from "../core/endpoint.js";
import { resumableMeta } from "../core/numbering.js";
import { recordOf } from "../core/request-log.js";
import { streamResponse } from "../core/stream.js";
import { collectSoFar, type OpenedGeneration } from "../upstream/generation.js";

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
  const state =
    soFar.finish === undefined ? "running" : finish.reason === FinishReason.ABORT ? "cancelled" : "finished";
  return { answer, state };
}

/**
 * A resumable stream read again (edge/replay/): the same endpoint's encoder over the sidecar's
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
  const [meta, numbering] = resumableMeta(
    endpoint,
    replay.streamId,
    replay.startedMs,
    opened.start.model,
    replay.after,
  );
  return streamResponse(endpoint, body, opened, meta, {
    abort: linkedAbort(request.signal),
    context,
    record: recordOf(request),
    numbering,
    replay: true,
  });
}
