// The request fields /v1/chat/completions and /v1/completions share, as rows of their field tables
// (edge/fields/field-table.ts): each one's check, where it goes in the proto and why. Every optional
// field also accepts null (many clients send `"temperature": null`).
import * as z from "zod";
import { DOCS } from "../../fields/docs-text.js";
import { implemented } from "../../fields/field-table.js";
import {
  integer,
  MAX_STOP_SEQUENCES,
  nonEmptyStops,
  positiveInteger,
  tokenLimit,
  UINT32_MAX,
} from "../../fields/checks.js";
import { returnProgressRow } from "../../fields/progress.js";
import { keepAliveRow, temperatureField, topKField, topPField } from "../../fields/sampling-fields.js";

/** OpenAI's most choices per request; the model's sequences are the limit that counts (core/choice-count.ts). */
export const MAX_CHOICES = 128;

const tokenId = z
  .string()
  .regex(/^\d{1,10}$/, { error: "logit_bias keys are token ids (decimal integers)" })
  .refine((key) => Number(key) <= UINT32_MAX, { error: "token id out of range" });

const stop = z.union([
  z.string(),
  z.array(z.string()).max(MAX_STOP_SEQUENCES, {
    message: `at most ${MAX_STOP_SEQUENCES} stop sequences are supported`,
  }),
]);

/** Empty stop strings mean nothing and are dropped. */
export function toStop(value: string | readonly string[] | null | undefined): string[] {
  if (value == null) return [];
  return nonEmptyStops(typeof value === "string" ? [value] : value);
}

/** The model, the answer's form and its token limit. */
export const openaiRequestFields = {
  model: implemented(z.string().nullish(), {
    doc: DOCS && {
      proto: "GenerateRequest.model",
      absent: "the first model served",
      why: "picks the model when several are served",
    },
    write: (value, draft) => {
      draft.request.model = value;
    },
  }),
  stream: implemented(z.boolean().nullish(), {
    doc: DOCS && { proto: "(the answer's form)", absent: "one JSON answer", why: "SSE" },
  }),
  // Read by core/serve.ts, which needs the catalogue (core/lora.ts).
  lora: implemented(
    z
      .array(z.object({ id: z.union([z.number().int().min(0), z.string().min(1)]), scale: z.number().finite() }))
      .nullish(),
    {
      doc: DOCS && {
        proto: "GenerateRequest.model",
        absent: "the model named",
        limits: "one adapter with a scale other than 0, at the scale it is set to",
        why:
          "llama-server's LoRA adapters, `[{id, scale}]`: `id` is the adapter's place in `GET /lora-adapters` or " +
          "its name; the adapter serves the request (all scales 0: its base model)",
      },
    },
  ),
  stream_options: implemented(z.object({ include_usage: z.boolean().nullish() }).nullish(), {
    doc: DOCS && {
      proto: "(the answer's form)",
      absent: "no usage chunk",
      why: "`include_usage`: a last chunk with the usage",
    },
  }),
  return_progress: returnProgressRow("llama-server's `prompt_progress` chunks while the prompt is evaluated"),
  timings_per_token: implemented(z.boolean().nullish(), {
    doc: DOCS && {
      proto: "(the answer's form)",
      absent: "no `timings`",
      why: "llama-server's `timings` on each choice's last chunk and on a whole answer",
    },
  }),
  max_tokens: implemented(positiveInteger().nullish(), {
    doc: DOCS && {
      proto: "GenerateRequest.max_tokens",
      absent: "until the model stops or the context is full",
      limits: "≥ 1 (above 4,294,967,295: no limit)",
      why: "token limit",
    },
    write: (value, draft) => {
      draft.request.maxTokens = draft.request.maxTokens ?? tokenLimit(value);
    },
  }),
};

/** The choices of the one prompt, its stop sequences and the sampling options. */
export const openaiSamplingFields = {
  n: implemented(
    z
      .number()
      .refine((n) => Number.isInteger(n) && n >= 1 && n <= MAX_CHOICES, {
        error: `expected an integer from 1 to ${MAX_CHOICES}`,
      })
      .nullish(),
    {
      doc: DOCS && {
        proto: "GenerateRequest.n",
        absent: "1",
        limits: `1–${MAX_CHOICES}, at most the model's sequences`,
        why: 'choices of the one prompt ("Several choices")',
      },
      write: (value, draft) => {
        if (value > 1) draft.request.n = value;
      },
    },
  ),
  stop: implemented(stop.nullish(), {
    doc: DOCS && {
      proto: "GenerateRequest.stop",
      absent: "none",
      limits: `≤ ${MAX_STOP_SEQUENCES}; empty strings dropped`,
      why: "stop sequences",
    },
    write: (value, draft) => {
      draft.request.stop = toStop(value);
    },
  }),
  temperature: temperatureField(2),
  top_p: topPField,
  top_k: topKField,
  min_p: implemented(z.number().min(0).max(1).nullish(), {
    doc: DOCS && {
      proto: "SamplingOptions.min_p",
      absent: "off",
      limits: "0–1",
      why: "llama.cpp's sampling extra",
    },
    write: (value, draft) => {
      draft.sampling.minP = value;
    },
  }),
  seed: implemented(integer().nullish(), {
    doc: DOCS && {
      proto: "SamplingOptions.seed",
      absent: "a random seed",
      limits: "any integer, taken modulo 2^32",
      why: 'repeatable sampling (`-1`, which llama.cpp would read as "random", samples as 4294967294)',
    },
    // OpenAI seeds are any integer; the proto's is uint32: reduce modulo 2^32.
    write: (value, draft) => {
      draft.sampling.seed = value >>> 0;
    },
  }),
  presence_penalty: implemented(z.number().min(-2).max(2).nullish(), {
    doc: DOCS && {
      proto: "SamplingOptions.presence_penalty",
      absent: "0",
      limits: "−2–2",
      why: "sampling",
    },
    write: (value, draft) => {
      draft.sampling.presencePenalty = value;
    },
  }),
  frequency_penalty: implemented(z.number().min(-2).max(2).nullish(), {
    doc: DOCS && {
      proto: "SamplingOptions.frequency_penalty",
      absent: "0",
      limits: "−2–2",
      why: "sampling",
    },
    write: (value, draft) => {
      draft.sampling.frequencyPenalty = value;
    },
  }),
  repeat_penalty: implemented(z.number().gt(0).max(10).nullish(), {
    doc: DOCS && {
      proto: "SamplingOptions.repeat_penalty",
      absent: "off (1)",
      limits: "(0, 10]",
      why: "llama.cpp's sampling extra",
    },
    write: (value, draft) => {
      draft.sampling.repeatPenalty = value;
    },
  }),
  logit_bias: implemented(z.record(tokenId, z.number().min(-100).max(100)).nullish(), {
    doc: DOCS && {
      proto: "SamplingOptions.logit_bias",
      absent: "none",
      limits: "token ids of the served model → −100–100",
      why: "sampling",
    },
    write: (value, draft) => {
      draft.sampling.logitBias = Object.fromEntries(Object.entries(value).map(([id, bias]) => [Number(id), bias]));
    },
  }),
  keep_alive: keepAliveRow,
};
