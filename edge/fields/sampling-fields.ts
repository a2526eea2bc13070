// Field-table rows every generation protocol shares where its field means the same (a range may
// differ: OpenAI's temperature runs to 2, Anthropic's to 1): sampling, `top_logprobs`, and `keep_alive`.
import * as z from "zod";
import { integer, MAX_TOP_LOGPROBS, uint32 } from "./checks.js";
import { DOCS } from "./docs-text.js";
import { implemented } from "./field-table.js";
import { keepAliveField } from "./keep-alive.js";

/** `temperature`, from 0 to the protocol's `max`. */
export function temperatureField(max: number) {
  return implemented(z.number().min(0).max(max).nullish(), {
    doc: DOCS && { proto: "SamplingOptions.temperature", absent: "1", limits: `0–${max}`, why: "sampling" },
    write: (value, draft) => {
      draft.sampling.temperature = value;
    },
  });
}

export const topPField = implemented(z.number().gt(0).max(1).nullish(), {
  doc: DOCS && { proto: "SamplingOptions.top_p", absent: "1", limits: "(0, 1]", why: "sampling" },
  write: (value, draft) => {
    draft.sampling.topP = value;
  },
});

export const topKField = implemented(uint32().nullish(), {
  doc: DOCS && { proto: "SamplingOptions.top_k", absent: "off", limits: "0–4,294,967,295 (0: off)", why: "sampling" },
  write: (value, draft) => {
    draft.sampling.topK = value;
  },
});

/** Ollama's field, on every protocol that reaches a model (docs/contract.md, "Models"). */
export const keepAliveRow = implemented(keepAliveField(), {
  doc: DOCS && {
    proto: "GenerateRequest.keep_alive_seconds",
    absent: "the sidecar's KEEP_ALIVE",
    limits: "seconds or a duration (`5m`, `1h30m`); negative: kept loaded",
    why: 'how long the model stays loaded after the request (Ollama\'s field, "Models")',
  },
  write: (value, draft) => {
    draft.request.keepAliveSeconds = value;
  },
});

/** `top_logprobs` (OpenAI chat, Ollama): alternatives per token, with `logprobs` on. */
export const topLogprobsField = implemented(integer().min(0).max(MAX_TOP_LOGPROBS).nullish(), {
  doc: DOCS && {
    proto: "GenerateRequest.top_logprobs",
    absent: "0",
    limits: `0–${MAX_TOP_LOGPROBS}; needs \`logprobs\``,
    why: "alternatives per token",
  },
  write: (value, draft) => {
    if (draft.request.logprobs === true) draft.request.topLogprobs = value;
  },
});
