// A resumable stream's frames and identity (docs/contract.md, "Resumable streams"): its SSE events
// numbered from 0 (`id:`), those the client already has left out, and the response's id, ids and
// clock rebuilt from the stream id and its events alone (resumable.ts), so a replay is byte for
// byte the original.
import type * as z from "zod";
import type { Finish } from "../../proto/gen/inference/v1/inference_pb.js";
import { formatEvent, type SseEvent } from "../sse/frame.js";
import type { Endpoint, ResponseMeta } from "./endpoint.js";
import { finishedAtMs, resumableResponseId, seededIds } from "./resumable.js";

/** A resumable stream's frames: numbered from 0 (`id:`), those up to `after` left out. */
export interface Numbering {
  /** The stream's id as the client sees it (edge/upstream/streams.ts). */
  readonly streamId: string;
  readonly after: number;
  /** Told the finish before it is encoded (the response's deterministic clock). */
  readonly onFinish: (finish: Finish) => void;
}

/** Formats SSE events, numbering them when the stream is resumable. */
export function framer(numbering: Numbering | undefined): (events: readonly SseEvent[]) => string {
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

/** A resumable stream's identity, from its stream id and events alone (resumable.ts). */
export function resumableMeta<S extends z.ZodType>(
  endpoint: Endpoint<S>,
  streamId: string,
  startedMs: number,
  model: string,
  after: number,
): [ResponseMeta, Numbering] {
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
