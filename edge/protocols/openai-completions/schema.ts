// POST /v1/completions request body (the legacy text completion API). One prompt
// per request; fields this server does not use are ignored.
import * as z from "zod";
import { integer } from "../../fields/fields.js";
import { commonFields } from "../openai-common/fields.js";
import { responseFormatField } from "../openai-common/response-format.js";

const prompt = z
  .union([z.string(), z.array(z.unknown())])
  .superRefine((value, ctx) => {
    if (typeof value === "string") return;
    if (value.some((item) => typeof item !== "string")) {
      ctx.addIssue({ code: "custom", message: "token-id prompts are not supported; send the prompt as text" });
    } else if (value.length !== 1) {
      ctx.addIssue({
        code: "custom",
        message: `only one prompt per request is supported (got ${value.length})`,
      });
    }
  })
  .transform((value) => (typeof value === "string" ? value : String(value[0])));

export const completionRequestSchema = z
  .object({
    ...commonFields,
    // 0 generates nothing: with `echo` and `logprobs` it scores the prompt alone.
    max_tokens: z
      .number()
      .refine((v) => Number.isInteger(v) && v >= 0, { error: "expected an integer of at least 0" })
      .nullish(),
    prompt,
    // Legacy: the number of most likely alternatives to report per token (0..5).
    // `true` is accepted too (some clients send it) and means 1.
    logprobs: z.union([z.boolean(), integer().min(0).max(5)]).nullish(),
    // The prompt again before the reply (with `logprobs`, its tokens scored too).
    echo: z.boolean().nullish(),
    suffix: z
      .string()
      .nullish()
      .refine((v) => v == null || v === "", { error: "suffix is not supported" }),
    best_of: z
      .number()
      .nullish()
      .refine((v) => v == null || v === 1, { error: "only best_of=1 is supported" }),
    // Not in OpenAI's legacy API; as llama.cpp's server accepts them: a JSON format, or a GBNF
    // grammar (which wins over response_format).
    response_format: responseFormatField,
    grammar: z.string().nullish(),
  })
  .refine((body) => body.max_tokens !== 0 || body.echo === true, { path: ["max_tokens"], error: "max_tokens 0 needs echo: it would return nothing" });

export type CompletionRequest = z.output<typeof completionRequestSchema>;

/** How many alternatives per token, or null when logprobs are off. */
export function logprobsCount(body: CompletionRequest): number | null {
  const value = body.logprobs;
  if (value == null || value === false) return null;
  return value === true ? 1 : value;
}
