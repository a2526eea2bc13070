// A generation routed over the pool, with failover before `start`: a sidecar that is unreachable
// or refuses with UNAVAILABLE is marked down and the next candidate is tried; one that is busy
// (RESOURCE_EXHAUSTED: every sequence taken and its queue full), or that could not load the model
// (INTERNAL with ModelLoadFailed), is passed over for the next. Once
// `start` has come, the answer belongs to that sidecar: nothing has been sent to the client before
// it, and everything after it is the sidecar's stream (no failover mid-answer).
import type { GenerateRequest } from "../../proto/gen/inference/v1/inference_pb.js";
import { openGeneration, type GenerationEvent, type OpenedGeneration } from "./generation.js";
import { failoverReason, outcomeOf, type SidecarPool } from "./pool.js";

/** The events, then `release` (the generation no longer adds to the sidecar's load). */
async function* releasing(
  events: AsyncGenerator<GenerationEvent, void, undefined>,
  release: () => void,
): AsyncGenerator<GenerationEvent, void, undefined> {
  try {
    yield* events;
  } finally {
    release();
  }
}

/** An accepted generation, and the public id of the sidecar that runs it (SidecarPool.byId finds it again). */
export interface RoutedGeneration extends OpenedGeneration {
  readonly sidecarId: string;
}

export async function openRouted(
  pool: SidecarPool,
  request: GenerateRequest,
  key: string | undefined,
  signal: AbortSignal,
  stallMs: number,
  headers?: Readonly<Record<string, string>>,
): Promise<RoutedGeneration> {
  const picked = await pool.pick(request.model, key);
  let last: unknown;
  for (const [i, state] of picked.ordered.entries()) {
    const release = i === 0 ? picked.release : pool.several ? pool.reserve(state) : () => undefined;
    try {
      const opened = await openGeneration(state.client, request, signal, stallMs, headers);
      pool.note(state, "ok");
      return { start: opened.start, events: releasing(opened.events, release), sidecarId: state.id };
    } catch (error) {
      release();
      if (signal.aborted) throw error;
      const reason = failoverReason(error);
      pool.note(state, outcomeOf(reason));
      if (reason === undefined) throw error;
      if (reason === "unavailable") pool.markDown(state, error);
      last = error;
    }
  }
  throw last;
}
