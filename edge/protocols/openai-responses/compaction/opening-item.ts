// The compaction item a compacted request's Response opens with (automatic.ts sets it, the
// encoders read it): kept beside the body object, never a field a client could send.
import type { CompactionItem } from "../response.js";
import type { ResponsesRequest } from "../schema.js";

const compactions = new WeakMap<ResponsesRequest, CompactionItem>();

/** The body to answer from the compacted window, and the compaction item its Response opens with. */
export function markCompacted(body: ResponsesRequest, item: CompactionItem): ResponsesRequest {
  compactions.set(body, item);
  return body;
}

/** The compaction item a body was compacted with, if it was. */
export function compactionOf(body: ResponsesRequest): CompactionItem | undefined {
  return compactions.get(body);
}
