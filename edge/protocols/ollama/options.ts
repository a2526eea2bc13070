// Ollama's `options` object (its sampling and its runner's load settings) as a field table of its own
// (edge/fields/field-table.ts): each documented option mapped to the proto, or accepted and left out
// where it cannot change the reply, or refused by name. An option not in the table is refused by name.
import * as z from "zod";
import { integer, MAX_STOP_SEQUENCES, nonEmptyStops, tokenLimit, UINT32_MAX } from "../../fields/checks.js";
import { DOCS } from "../../fields/docs-text.js";
import { ignored, implemented, refused, shapeOf } from "../../fields/field-table.js";
import { temperatureField, topKField, topPField } from "../../fields/sampling-fields.js";

/** The repeat-penalty window the sidecar uses (its PENALTY_WINDOW), Ollama's default `repeat_last_n`. */
const PENALTY_WINDOW = 64;

const penalty = (key: "presencePenalty" | "frequencyPenalty", proto: string) =>
  implemented(z.number().min(-2).max(2).nullish(), {
    doc: DOCS && { proto, absent: "0", limits: "-2–2", why: "sampling" },
    write: (value, draft) => {
      draft.sampling[key] = value;
    },
  });

/** Refused unless it has the value the server uses anyway. */
const onlyValue = (value: unknown, why: string) =>
  refused(
    DOCS && { why, sample: value === 1 || value === 0 ? 2 : true },
    z
      .unknown()
      .optional()
      .refine((v) => v == null || v === value, { error: `${why}: only ${JSON.stringify(value)} is accepted` }),
  );

/** A load setting: the operator's (its preset), which a request does not change. */
const loadSetting = (sample: unknown) =>
  ignored(DOCS && { why: "a load setting: the model's preset sets it, not a request", sample }, z.unknown().optional());

export const OLLAMA_OPTION_FIELDS = {
  num_predict: implemented(integer().min(-2).nullish(), {
    doc: DOCS && {
      proto: "GenerateRequest.max_tokens",
      absent: "until the model stops",
      limits: "≥ 1; -2, -1 and 0: no limit (the context's), as Ollama reads them",
      why: "token limit",
    },
    write: (value, draft) => {
      if (value > 0) draft.request.maxTokens = tokenLimit(value);
    },
  }),
  temperature: temperatureField(2),
  top_k: topKField,
  top_p: topPField,
  min_p: implemented(z.number().min(0).max(1).nullish(), {
    doc: DOCS && { proto: "SamplingOptions.min_p", absent: "off", limits: "0–1", why: "sampling" },
    write: (value, draft) => {
      draft.sampling.minP = value;
    },
  }),
  seed: implemented(integer().max(UINT32_MAX).nullish(), {
    doc: DOCS && { proto: "SamplingOptions.seed", absent: "random", limits: "negative: random", why: "repeatable" },
    write: (value, draft) => {
      if (value >= 0) draft.sampling.seed = value;
    },
  }),
  stop: implemented(z.union([z.string(), z.array(z.string()).max(MAX_STOP_SEQUENCES)]).nullish(), {
    doc: DOCS && {
      proto: "GenerateRequest.stop",
      absent: "none",
      limits: `a string or ≤ ${MAX_STOP_SEQUENCES}`,
      why: "stop sequences",
    },
    write: (value, draft) => {
      draft.request.stop = nonEmptyStops(typeof value === "string" ? [value] : value);
    },
  }),
  repeat_penalty: implemented(z.number().gt(0).max(10).nullish(), {
    doc: DOCS && { proto: "SamplingOptions.repeat_penalty", absent: "1 (off)", limits: "(0, 10]", why: "sampling" },
    write: (value, draft) => {
      draft.sampling.repeatPenalty = value;
    },
  }),
  repeat_last_n: onlyValue(PENALTY_WINDOW, `the penalties look back ${PENALTY_WINDOW} tokens`),
  presence_penalty: penalty("presencePenalty", "SamplingOptions.presence_penalty"),
  frequency_penalty: penalty("frequencyPenalty", "SamplingOptions.frequency_penalty"),
  typical_p: onlyValue(1, "no locally typical sampling"),
  tfs_z: onlyValue(1, "no tail-free sampling"),
  mirostat: onlyValue(0, "no Mirostat sampling"),
  mirostat_tau: ignored(DOCS && { why: "Mirostat's, which is off", sample: 5 }, z.unknown().optional()),
  mirostat_eta: ignored(DOCS && { why: "Mirostat's, which is off", sample: 0.1 }, z.unknown().optional()),
  penalize_newline: ignored(
    DOCS && { why: "Ollama no longer applies it either", sample: true },
    z.unknown().optional(),
  ),
  num_keep: ignored(
    DOCS && { why: "the context is never shifted (a full one ends the reply)", sample: 4 },
    z.unknown().optional(),
  ),
  num_ctx: loadSetting(4096),
  num_batch: loadSetting(512),
  num_gqa: loadSetting(8),
  num_gpu: loadSetting(1),
  main_gpu: loadSetting(0),
  use_mmap: loadSetting(true),
  use_mlock: loadSetting(false),
  num_thread: loadSetting(2),
  numa: loadSetting(false),
  low_vram: loadSetting(false),
  f16_kv: loadSetting(true),
  logits_all: loadSetting(false),
  vocab_only: loadSetting(false),
  embedding_only: loadSetting(false),
  draft_num_predict: loadSetting(8),
};

/** The `options` object: the table's checks; another name is a 400 naming it. */
export const optionsSchema = z.strictObject(shapeOf(OLLAMA_OPTION_FIELDS), {
  error: (issue) =>
    issue.code === "unrecognized_keys" ? `unknown option ${issue.keys.map((k) => `'${k}'`).join(", ")}` : undefined,
});

export type OllamaOptions = z.output<typeof optionsSchema>;
