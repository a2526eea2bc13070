// Request-field checks every protocol's field table uses: zod number checks and the proto's limits.
import * as z from "zod";

/** The largest value a proto uint32 holds. */
export const UINT32_MAX = 0xffff_ffff;

// The proto's limits that the edge checks itself, so a request over one is refused in the
// protocol's own shape. Each is documented in proto/inference/v1/inference.proto and has one twin
// in sidecar/ (test/proto-limits.test.ts checks all three agree).

/** The proto allows at most this many stop sequences (`GenerateRequest.stop`). */
export const MAX_STOP_SEQUENCES = 16;

/** The most alternatives per token the proto allows (`GenerateRequest.top_logprobs`). */
export const MAX_TOP_LOGPROBS = 20;

/** Any integer (JSON numbers beyond 2^53 included: they are integral doubles). */
export const integer = () => z.number().refine(Number.isInteger, { error: "expected an integer" });

/** An integer a proto uint32 field holds: 0 … 4,294,967,295 (a 400 naming the field otherwise). */
export const uint32 = () =>
  z.number().refine((v) => Number.isInteger(v) && v >= 0 && v <= UINT32_MAX, {
    error: `expected an integer from 0 to ${UINT32_MAX}`,
  });

/** An integer ≥ 1; huge values are accepted (the sidecar caps generation by its context). */
export const positiveInteger = () =>
  z.number().refine((v) => Number.isInteger(v) && v >= 1, { error: "expected an integer of at least 1" });

/** A token limit for the proto: larger than uint32 holds means "no practical limit" (the context caps it). */
export function tokenLimit(requested: number): number {
  return Math.min(requested, UINT32_MAX);
}

/** Empty stop strings mean nothing and are dropped. */
export function nonEmptyStops(stops: readonly string[]): string[] {
  return stops.filter((s) => s !== "");
}

/**
 * A hint's value (docs/contract.md, "Hints never refuse"): one of `known`, or for a value this
 * server does not know (a newer API's, say) `fallback`, the nearest behaviour (none: as if the
 * field were absent). A hint never refuses a request; it only has to be a string.
 */
export const hint = <const T extends readonly [string, ...string[]]>(known: T, fallback?: T[number]) =>
  z
    .string()
    .nullish()
    .transform((value): T[number] | null | undefined =>
      value == null ? value : known.includes(value) ? value : fallback,
    );
