// `prompt_cache_key` and `prompt_cache_retention` on chat completions and Responses
// (docs/contract.md, "Cache hints"): the retention marks the whole prompt for the sidecar's KV
// cache tier ("24h" for a day, "in_memory" for 10 minutes); the key joins the affinity key across
// sidecars (edge/upstream/affinity.ts).
import type { MessageInitShape } from "@bufbuild/protobuf";
import * as z from "zod";
import type { CacheMarkSchema } from "../../../proto/gen/inference/v1/inference_pb.js";
import { hint } from "../../fields/checks.js";
import { DOCS } from "../../fields/docs-text.js";
import { implemented } from "../../fields/field-table.js";

/** How long each retention keeps the prompt ahead of unmarked ones, in seconds. */
export const RETENTION_SECONDS = { in_memory: 600, "24h": 86_400 } as const;

/** The two fields as rows of a field table (edge/fields/field-table.ts). */
export const promptCacheFields = {
  prompt_cache_key: implemented(z.string().nullish(), {
    doc: DOCS && {
      proto: "(the affinity key, edge/upstream/affinity.ts)",
      absent: "the prompt's opening is the key",
      why: 'joins the affinity key across sidecars ("Cache hints")',
    },
  }),
  prompt_cache_retention: implemented(hint(["in_memory", "24h"]), {
    doc: DOCS && {
      proto: "GenerateRequest.cache_marks",
      absent: "no mark",
      limits: "`in_memory`, `24h`; another value as absent",
      why:
        '`"in_memory"` / `"24h"`: the whole prompt kept ahead of unmarked ones for 10 minutes / 24 h ("Cache ' +
        'hints")',
    },
    write: (value, draft) => {
      draft.request.cacheMarks = retentionMarks(value);
    },
  }),
};

/** The request's cache mark: the whole prompt (messages 0) for the retention's time; none without one. */
export function retentionMarks(
  retention: keyof typeof RETENTION_SECONDS | null | undefined,
): MessageInitShape<typeof CacheMarkSchema>[] {
  return retention == null ? [] : [{ messages: 0, ttlSeconds: RETENTION_SECONDS[retention] }];
}
