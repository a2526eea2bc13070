// The KV-cache events' bytes, as vLLM encodes them (msgspec, array-like structs, tagged unions): an
// EventBatch `[ts, events, data_parallel_rank]`, each event an array with its tag first.
import { Encoder } from "@msgpack/msgpack";
import type { KvBlockEvent } from "../engine/llama/kv-blocks.js";

/** Block keys as bigints: always encoded as msgpack uint64, the form llm-d reads as an int key. */
const encoder = new Encoder({ useBigInt64: true });

/** One event as its tagged array: `BlockStored` carries `lora_id`, `medium` and `lora_name` (a base model's: nil). */
function eventArray(event: KvBlockEvent): unknown[] {
  switch (event.kind) {
    case "stored":
      return [
        "BlockStored",
        event.hashes,
        event.parent ?? null,
        event.tokens,
        event.tokens.length / event.hashes.length,
        event.lora?.id ?? null,
        event.medium,
        event.lora?.name ?? null,
      ];
    case "removed":
      return ["BlockRemoved", event.hashes, event.medium];
    case "cleared":
      return ["AllBlocksCleared"];
  }
}

/**
 * An EventBatch's payload. `ts` is seconds since the epoch, a float (msgpack float64 even when whole, as Python's
 * `time.time()` is); the data-parallel rank is 0 (one engine per sidecar).
 */
export function encodeBatch(ts: number, events: readonly KvBlockEvent[]): Uint8Array {
  // A whole number would be encoded as an integer: nudged by a microsecond.
  const seconds = Number.isInteger(ts) ? ts + 1e-6 : ts;
  return encoder.encode([seconds, events.map(eventArray), 0]);
}
