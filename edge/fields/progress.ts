// `return_progress` (llama-server's prompt progress), the row every generation protocol's table holds: with `stream`,
// the sidecar reports the prompt's evaluation as it goes (GenerateRequest.return_progress) and the protocol's encoder
// sends it in its own shape; without `stream` it is ignored (core/serve.ts), as llama-server ignores it
// (docs/contract.md, "Prompt progress and timings").
import * as z from "zod";
import { DOCS } from "./docs-text.js";
import { implemented } from "./field-table.js";

/** The row of a protocol whose streams report the prompt's progress as `why` says (`limits`: when it is ignored). */
export function returnProgressRow(why: string, limits = "streams only (ignored without `stream`)") {
  return implemented(z.boolean().nullish(), {
    doc: DOCS && {
      proto: "GenerateRequest.return_progress",
      absent: "false",
      limits,
      why,
    },
    write: (value, draft) => {
      draft.request.returnProgress = value === true;
    },
  });
}
