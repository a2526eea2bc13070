// `return_progress` (llama-server's prompt progress) on the protocols whose streams do not report it: refused when
// true, naming where it is served, rather than ignored (docs/contract.md, "Operator endpoints").
import * as z from "zod";
import { DOCS } from "./docs-text.js";
import { refused } from "./field-table.js";

export const RETURN_PROGRESS_REFUSAL =
  "return_progress is served on /v1/chat/completions and /v1/completions only (llama-server's prompt_progress " +
  "chunks); this endpoint's streams do not report the prompt's progress";

/** The row of a table whose protocol reports no progress. */
export const returnProgressRefused = refused(
  DOCS && { why: "prompt progress is reported on chat and completions streams only", sample: true },
  z
    .boolean()
    .nullish()
    .refine((value) => value !== true, { error: RETURN_PROGRESS_REFUSAL }),
);
