// POST /infill request body: llama-server's fill-in-the-middle request (input_prefix, input_suffix,
// input_extra, prompt, n_predict, its sampling fields, n_indent, t_max_predict_ms, stream). Every field
// has a row (docs/contract.md, "Request fields: infill"); fields llama-server has and this server does
// not serve are refused by name where they would change the answer.
import * as z from "zod";
import { integer, uint32 } from "../../fields/checks.js";
import { DOCS } from "../../fields/docs-text.js";
import { ignored, implemented, refused, shapeOf } from "../../fields/field-table.js";
import { MAX_CHOICES, openaiRequestFields, openaiSamplingFields } from "../openai-common/fields.js";
import { responseFormatConstraint } from "../openai-common/response-format.js";
import { returnProgressRow } from "../../fields/progress.js";

/** One file of the repository context: llama-server's `{filename, text}` (other keys, e.g. a time, are not read). */
const extraFile = z.object({
  text: z.string({ error: 'each input_extra item needs a "text" string' }),
  filename: z.string().nullish(),
});

const { model, stream } = openaiRequestFields;
const { stop, temperature, top_p, top_k, min_p, seed, presence_penalty, frequency_penalty, repeat_penalty } =
  openaiSamplingFields;

/** Every request field: its check, fate, proto field and why. */
export const INFILL_FIELDS = {
  model,
  input_prefix: implemented(z.string({ error: '"input_prefix" is required: a string (it may be empty)' }), {
    doc: DOCS && { proto: "GenerateRequest.infill.prefix", why: "the text before the middle" },
  }),
  input_suffix: implemented(z.string({ error: '"input_suffix" is required: a string (it may be empty)' }), {
    doc: DOCS && {
      proto: "GenerateRequest.infill.suffix",
      limits: "a model with fill-in-the-middle tokens (else 400 `fill_in_middle_unsupported`)",
      why: "the text after the middle",
    },
  }),
  input_extra: implemented(z.array(extraFile).nullish(), {
    doc: DOCS && {
      proto: "GenerateRequest.infill.files",
      absent: "none",
      limits: '`[{"filename", "text"}]`; a missing filename is "tmp"',
      why: "repository context before the prefix (FIM_REP / FIM_SEP)",
    },
  }),
  prompt: implemented(z.string({ error: '"prompt" must be a string' }).nullish(), {
    doc: DOCS && {
      proto: "GenerateRequest.infill.prompt",
      absent: "none",
      why: "text right after the prefix (the cursor's line), kept whole",
    },
  }),
  stream,
  // -1: until the model stops; 0: the prompt is evaluated into the cache and nothing is generated.
  n_predict: implemented(
    integer()
      .refine((v) => v >= -1, { error: "expected -1 (no limit) or more" })
      .nullish(),
    {
      doc: DOCS && {
        proto: "GenerateRequest.max_tokens",
        absent: "until the model stops or the context is full",
        limits: "≥ −1 (−1: no limit; 0: the prompt cached, nothing generated)",
        why: "token limit",
      },
      write: (value, draft) => {
        if (value >= 0) draft.request.maxTokens = value;
      },
    },
  ),
  // llama-server's several completions of one prompt (llama.vscode asks for 3): an array of answers.
  n_cmpl: implemented(
    integer()
      .refine((v) => v >= 1 && v <= MAX_CHOICES, { error: `expected an integer from 1 to ${MAX_CHOICES}` })
      .nullish(),
    {
      doc: DOCS && {
        proto: "GenerateRequest.n",
        absent: "1",
        limits: `1–${MAX_CHOICES}, at most the model's sequences; not streamed`,
        why: "several middles: the answer is an array of them",
      },
      write: (value, draft) => {
        if (value > 1) draft.request.n = value;
      },
    },
  ),
  n_indent: implemented(uint32().nullish(), {
    doc: DOCS && {
      proto: "GenerateRequest.infill.min_indent",
      absent: "0 (no rule)",
      why: "from the second line on, a line indented less ends the middle",
    },
  }),
  t_max_predict_ms: implemented(integer().nullish(), {
    doc: DOCS && {
      proto: "GenerateRequest.infill.time_limit_ms",
      absent: "no limit (0 or less: none)",
      why: "a line completed after this long since the first token ends the middle",
    },
  }),
  stop,
  temperature,
  top_p,
  top_k,
  min_p,
  seed,
  presence_penalty,
  frequency_penalty,
  repeat_penalty,
  grammar: implemented(z.string().nullish(), {
    doc: DOCS && { proto: "GenerateRequest.constraint", absent: "none", why: "llama.cpp's GBNF constraint" },
    write: (value, draft) => {
      if (value !== "") draft.request.constraint = responseFormatConstraint(undefined, value);
    },
  }),
  return_tokens: implemented(z.boolean().nullish(), {
    doc: DOCS && { proto: "(the answer's form)", absent: "false", why: "the middle's token ids in `tokens`" },
  }),
  cache_prompt: ignored(DOCS && { why: "the prefix cache is always on", sample: true }),
  samplers: ignored(DOCS && { why: "the sidecar's sampler order is fixed", sample: ["top_k", "top_p", "infill"] }),
  t_max_prompt_ms: ignored(DOCS && { why: "llama-server does not apply it either", sample: 500 }),
  id_slot: ignored(DOCS && { why: "the sidecar picks the sequence (the prefix cache follows the prompt)", sample: 0 }),
  n_probs: refused(
    DOCS && { why: "token probabilities are not served on /infill", sample: 3 },
    z
      .number()
      .nullish()
      .refine((v) => v == null || v === 0, { error: "n_probs is not supported on /infill" }),
  ),
  json_schema: refused(DOCS && { why: "use `grammar`", sample: {} }, "json_schema is not supported on /infill"),
  lora: refused(
    DOCS && { why: "an adapter is named by `model` here", sample: [{ id: 0, scale: 0.5 }] },
    z
      .array(z.unknown())
      .nullish()
      .refine((v) => v == null || v.length === 0, {
        error: "lora is not supported on /infill: name the adapter in model",
      }),
  ),
  response_fields: refused(
    DOCS && { why: "the whole answer is sent", sample: ["content"] },
    "response_fields is not supported: the whole answer is sent",
  ),
  return_progress: returnProgressRow(
    "llama-server's `prompt_progress` objects while the prompt is evaluated, as its `/infill` sends them",
  ),
};
export const infillRequestSchema = z
  .object(shapeOf(INFILL_FIELDS))
  .refine((body) => body.stream !== true || (body.n_cmpl ?? 1) === 1, {
    path: ["n_cmpl"],
    error: "n_cmpl above 1 is not streamed; send stream: false",
  });

export type InfillRequest = z.output<typeof infillRequestSchema>;
