// A model's fill-in-the-middle tokens, as llama.cpp's vocabulary loader finds them: the GGUF's
// `tokenizer.ggml.fim_*_token_id` keys, else the family's known token texts. llama.cpp reports
// FIM_PRE, FIM_SUF and FIM_MID itself (node-llama-cpp's `tokens.infill`); FIM_PAD, FIM_REP and
// FIM_SEP are read here from the same keys and texts. llama.cpp ends a reply at the last three
// (they are among its end-of-generation tokens), so they are known here only to build prompts.
import type { LlamaModel, Token } from "node-llama-cpp";

/** The order the model was trained on: prefix-suffix-middle (most) or suffix-prefix-middle. */
export type FimOrder = "prefix-suffix-middle" | "suffix-prefix-middle";

export interface FimTokens {
  readonly prefix: Token;
  readonly suffix: Token;
  readonly middle: Token;
  readonly pad: Token | undefined;
  /** Opens the repository context ("myproject\n" follows). */
  readonly repo: Token | undefined;
  /** Opens each file of the repository context (its name and a newline follow). */
  readonly fileSeparator: Token | undefined;
  readonly order: FimOrder;
}

/** The texts llama.cpp's vocabulary loader takes for each of the three it does not report here. */
const KNOWN_TEXTS = {
  pad: ["<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"],
  repo: ["<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"],
  fileSeparator: ["<|file_sep|>"],
} as const;

const METADATA_KEYS = { pad: "fim_pad_token_id", repo: "fim_rep_token_id", fileSeparator: "fim_sep_token_id" } as const;

/** The model's FIM tokens; undefined when it lacks any of prefix, suffix and middle. */
export function fimTokensOf(model: LlamaModel, order: FimOrder = "prefix-suffix-middle"): FimTokens | undefined {
  const { prefix, suffix, middle } = model.tokens.infill;
  if (prefix === null || suffix === null || middle === null) return undefined;
  return {
    prefix,
    suffix,
    middle,
    pad: optionalToken(model, "pad"),
    repo: optionalToken(model, "repo"),
    fileSeparator: optionalToken(model, "fileSeparator"),
    order,
  };
}

/** What is missing for FIM, in llama-server's words ("prefix", "suffix", "middle"); empty: nothing. */
export function missingFimTokens(model: LlamaModel): string[] {
  const { prefix, suffix, middle } = model.tokens.infill;
  return [
    ...(prefix === null ? ["prefix"] : []),
    ...(suffix === null ? ["suffix"] : []),
    ...(middle === null ? ["middle"] : []),
  ];
}

function optionalToken(model: LlamaModel, which: keyof typeof KNOWN_TEXTS): Token | undefined {
  const ggml = (model.fileInfo.metadata.tokenizer as { ggml?: Record<string, unknown> } | undefined)?.ggml;
  const id = ggml?.[METADATA_KEYS[which]];
  if (typeof id === "number" && Number.isInteger(id) && id >= 0) return id as Token;
  for (const text of KNOWN_TEXTS[which]) {
    const token = specialToken(model, text);
    if (token !== undefined) return token;
  }
  return undefined;
}

/** The one special token whose text is `text`, if the vocabulary has it (plain text is several tokens). */
function specialToken(model: LlamaModel, text: string): Token | undefined {
  const tokens = model.tokenize(text, true);
  const [only] = tokens;
  if (tokens.length !== 1 || only === undefined) return undefined;
  const attributes = model.getTokenAttributes(only);
  return attributes.control || attributes.userDefined ? only : undefined;
}
