// `prompt_cache_key` and `prompt_cache_retention` on chat completions and Responses
// (docs/contract.md, "Cache hints"): the retention marks the whole prompt for the sidecar's KV
// cache tier ("24h" for a day, "in_memory" for 10 minutes); the key joins the affinity key across
// sidecars (edge/upstream/affinity.ts).
import type { MessageInitShape } from "@bufbuild/protobuf";
import * as z from "zod";
import type { CacheMarkSchema } from "../../../proto/gen/inference/v1/inference_pb.js";
import { hint } from "../../fields/fields.js";

/** How long each retention keeps the prompt ahead of unmarked ones, in seconds. */
export const RETENTION_SECONDS = { in_memory: 600, "24h": 86_400 } as const;

export const promptCacheFields = {
  prompt_cache_key: z.string().nullish(),
  prompt_cache_retention: hint(["in_memory", "24h"]),
};

/** The request's cache mark: the whole prompt (messages 0) for the retention's time; none without one. */
export function retentionMarks(retention: keyof typeof RETENTION_SECONDS | null | undefined): MessageInitShape<typeof CacheMarkSchema>[] {
  return retention == null ? [] : [{ messages: 0, ttlSeconds: RETENTION_SECONDS[retention] }];
}
