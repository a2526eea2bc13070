// A twin of Qwen2.5-Coder for fill-in-the-middle: Qwen2's tokenizer with Qwen2.5-Coder's added
// tokens (its FIM tokens among them, control tokens as in the family's GGUFs), Qwen2.5's chat
// template, and scripted weights whose middle depends on what the suffix holds, so that a test
// shows the suffix reached the model, and where.
import type { FamilyVocabSpec } from "../family-vocab.js";
import type { ContextualSpec } from "../scripted.js";
import { llamaTemplate } from "./parts.js";

/** Qwen2.5-Coder's added tokens after `<|endoftext|>`, `<|im_start|>`, `<|im_end|>`: ids 151646 on. */
const CODER_ADDED: readonly (readonly [string, number])[] = [
  ...["object_ref_start", "object_ref_end", "box_start", "box_end", "quad_start", "quad_end"].map(
    (n) => [`<|${n}|>`, 3] as const,
  ),
  ...["vision_start", "vision_end", "vision_pad", "image_pad", "video_pad"].map((n) => [`<|${n}|>`, 3] as const),
  ["<tool_call>", 4],
  ["</tool_call>", 4],
  ...["fim_prefix", "fim_middle", "fim_suffix", "fim_pad", "repo_name", "file_sep"].map(
    (n) => [`<|${n}|>`, 3] as const,
  ),
];

/** The base coder's vocabulary: `<|endoftext|>` is its EOS (the token a middle ends with). */
export const CODER_VOCAB: FamilyVocabSpec = {
  file: "qwen2",
  eos: "<|endoftext|>",
  added: Object.fromEntries(CODER_ADDED.map((entry, i) => [151_646 + i, entry])),
};

/** The middle with no trigger in the context. */
export const CODER_MIDDLE = "return a + b";
/** The middle when the context holds " total" (the suffix reads `return total`): two lines. */
export const CODER_TOTAL_MIDDLE = "total = a + b\nprint(total)";
/** The middle when a `<|fim_pad|>` token is in the context (the text of one in a prefix must never be). */
export const CODER_LEAKED = "leaked";

/**
 * The `qwen2.5-coder` twin. Its reply after `<|fim_middle|>` (the last token of every FIM prompt):
 * CODER_MIDDLE, then `<|endoftext|>`; with " total" in the context CODER_TOTAL_MIDDLE, then
 * `<|file_sep|>`; with a `<|fim_pad|>` token CODER_LEAKED, then `<|endoftext|>`. A chat is answered
 * "Hi there", then `<|im_end|>`.
 */
export function qwen25CoderSpec(): ContextualSpec {
  return {
    name: "qwen2.5-coder",
    chatTemplate: llamaTemplate("Qwen-Qwen2.5-7B-Instruct.jinja"),
    architecture: "qwen2",
    vocabulary: CODER_VOCAB,
    userDefined: [],
    modes: [
      { name: "total", trigger: " total" },
      { name: "leak", trigger: "<|fim_pad|>" },
    ],
    scripts: [
      { after: "assistant\n", reply: "Hi there", end: "im_end" },
      { after: ["<|fim_middle|>"], reply: CODER_MIDDLE, end: "eos" },
      // Repository-level FIM models end a middle with FIM_SEP too (llama.cpp counts it as end of generation).
      { mode: "total", after: ["<|fim_middle|>"], reply: CODER_TOTAL_MIDDLE, end: "<|file_sep|>" },
      { mode: "leak", after: ["<|fim_middle|>"], reply: CODER_LEAKED, end: "eos" },
    ],
    contextLength: 8192,
  };
}
