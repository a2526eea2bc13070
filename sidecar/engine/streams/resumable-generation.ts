// A resumable generation (proto: GenerateRequest.resumable): the generation runs on a signal of its
// own, its events go to the replay buffer (resumable-streams.ts), and the caller reads them
// from there, so a caller that leaves starts the grace period instead of cancelling.
import type { GenerateRequest } from "../../../proto/gen/inference/v1/inference_pb.js";
import { generate, sentAtOnce, type GenerateEvent } from "../decode/generate.js";
import type { EngineMetrics } from "../engine-metrics.js";
import type { LoadedModel } from "../llama/model.js";
import { onEnd } from "./on-end.js";
import { readAhead } from "./read-ahead.js";
import type { ResumableStreams } from "./resumable-streams.js";

export async function* generateResumable(
  loaded: LoadedModel,
  request: GenerateRequest,
  caller: AbortSignal,
  streams: ResumableStreams,
  metrics: EngineMetrics,
  /** Runs once the generation ends (not its reader): the model's lease is released then. */
  ended: () => void = () => undefined,
): AsyncGenerator<GenerateEvent, void, undefined> {
  const generation = new AbortController();
  // Until the generation starts (it may wait for a sequence), the caller leaving still cancels it.
  const onLeave = (): void => generation.abort(caller.reason);
  caller.addEventListener("abort", onLeave, { once: true });
  const events = readAhead(onEnd(generate(loaded, request, generation.signal, metrics), ended), {
    atOnce: sentAtOnce,
  });
  let first: IteratorResult<GenerateEvent, void>;
  try {
    first = await events.next();
  } finally {
    caller.removeEventListener("abort", onLeave);
  }
  if (first.done === true) return;
  const start = first.value;
  const id = streams.newId();
  const stamped: GenerateEvent =
    start.event?.case === "start"
      ? {
          event: { case: "start", value: { ...start.event.value, streamId: id, resumeContext: request.resumeContext } },
        }
      : start;
  streams.add(
    id,
    request.clientId,
    stamped,
    { [Symbol.asyncIterator]: () => events },
    generation,
    request.detached ? Infinity : request.resumeGraceMs,
  );
  const reader = streams.read(id, request.clientId, 0, caller);
  if (reader !== undefined) yield* reader;
}
