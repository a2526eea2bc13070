// POST /v1/completions request body (the legacy text completion API). One prompt
// per request, or a prompt and a suffix (fill-in-the-middle); fields this server does not use are ignored.
import * as z from "zod";
import { integer, tokenLimit } from "../../fields/checks.js";
import { DOCS } from "../../fields/docs-text.js";
import { docOf, ignored, implemented, refused, shapeOf } from "../../fields/field-table.js";
import { openaiRequestFields, openaiSamplingFields } from "../openai-common/fields.js";
import { responseFormatConstraint, responseFormatRow } from "../openai-common/response-format.js";

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

/** Every request field (docs/contract.md, "Request fields: completions"): its check, fate, proto field and why. */
export const COMPLETION_FIELDS = {
  ...openaiRequestFields,
  // 0 generates nothing: with `echo` and `logprobs` it scores the prompt alone.
  max_tokens: implemented(
    z
      .number()
      .refine((v) => Number.isInteger(v) && v >= 0, { error: "expected an integer of at least 0" })
      .nullish(),
    {
      doc: DOCS && {
        ...docOf(openaiRequestFields.max_tokens),
        limits: "≥ 0 (0 with `echo`: the prompt scored alone; above 4,294,967,295: no limit)",
      },
      write: (value, draft) => {
        draft.request.maxTokens = tokenLimit(value);
      },
    },
  ),
  prompt: implemented(prompt, {
    doc: DOCS && {
      proto: "GenerateRequest.prompt",
      limits: "one text prompt (token ids and several prompts are refused)",
      why: "the prompt",
    },
  }),
  ...openaiSamplingFields,
  // Legacy: the number of most likely alternatives to report per token (0..5); `true` is accepted
  // too (some clients send it) and means 1. Mapped with `echo` (to-request.ts).
  logprobs: implemented(z.union([z.boolean(), integer().min(0).max(5)]).nullish(), {
    doc: DOCS && {
      proto: "GenerateRequest.logprobs, top_logprobs",
      absent: "none",
      limits: "0–5, or `true` (1)",
      why: "legacy logprobs",
    },
  }),
  echo: implemented(z.boolean().nullish(), {
    doc: DOCS && {
      proto: "GenerateRequest.prompt_logprobs",
      absent: "false",
      why: "the prompt before the reply; with `logprobs`, its tokens scored",
    },
  }),
  // Not in OpenAI's legacy API; as llama.cpp's server accepts them: a JSON format, or a GBNF
  // grammar (which wins over response_format).
  response_format: responseFormatRow,
  grammar: implemented(z.string().nullish(), {
    doc: DOCS && {
      proto: "GenerateRequest.constraint",
      absent: "`response_format`",
      why: "llama.cpp's GBNF constraint; wins over `response_format`",
    },
    write: (value, draft) => {
      if (value !== "") draft.request.constraint = responseFormatConstraint(undefined, value);
    },
  }),
  best_of: refused(
    DOCS && { why: "one candidate per request", sample: 3 },
    z
      .number()
      .nullish()
      .refine((v) => v == null || v === 1, { error: "only best_of=1 is supported" }),
  ),
  // Fill-in-the-middle: the reply goes between `prompt` and `suffix` (to-request.ts); empty is none.
  suffix: implemented(z.string().nullish(), {
    doc: DOCS && {
      proto: "GenerateRequest.infill (`prompt` its prefix)",
      absent: "a plain completion of `prompt`",
      limits: "a model with fill-in-the-middle tokens (else 400 `fill_in_middle_unsupported`); not with `echo`",
      why: "fill-in-the-middle: the completion fills between `prompt` and `suffix`",
    },
  }),
  user: ignored(DOCS && { why: "end-user label", sample: "u" }),
};

export const completionRequestSchema = z
  .object(shapeOf(COMPLETION_FIELDS))
  .refine((body) => body.max_tokens !== 0 || body.echo === true, {
    path: ["max_tokens"],
    error: "max_tokens 0 needs echo: it would return nothing",
  })
  .refine((body) => !(body.echo === true && isInfill(body)), {
    path: ["echo"],
    error: "echo is not supported with suffix (fill-in-the-middle)",
  });

/** Whether the body asks to fill in the middle: a non-empty suffix. */
export function isInfill(body: { readonly suffix?: string | null | undefined }): boolean {
  return body.suffix != null && body.suffix !== "";
}

export type CompletionRequest = z.output<typeof completionRequestSchema>;

/** How many alternatives per token, or null when logprobs are off. */
export function logprobsCount(body: CompletionRequest): number | null {
  const value = body.logprobs;
  if (value == null || value === false) return null;
  return value === true ? 1 : value;
}
