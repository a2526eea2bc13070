// What every model this project writes has in common: the llama architecture's metadata keys and
// tensor names, the SentencePiece ("llama") vocabulary layout, and the ChatML template.
import { meta, type MetadataValue, type Tensor } from "./writer.js";

/** ChatML, as a Jinja template; node-llama-cpp recognises it and picks its ChatML wrapper. */
export const CHATML_TEMPLATE =
  "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + " +
  "'\\n'}}{% endfor %}" +
  "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

/** llama.cpp token types (user-defined: added tokens that are matched in any text, not control). */
export const TOKEN_TYPE = { normal: 1, unknown: 2, control: 3, userDefined: 4, byte: 6 } as const;

export const UNK_ID = 0;
export const BOS_ID = 1;
export const EOS_ID = 2;
/** Id of the byte token `<0xNN>`. */
export const byteTokenId = (byte: number): number => 3 + byte;
// 259 is `<|im_start|>`.
export const IM_END_ID = 260;
export const NEWLINE_ID = byteTokenId(0x0a);
// Word pieces start at 261, after the fixed part of every vocabulary.

export interface VocabEntry {
  /** The piece as stored: spaces written as U+2581 "▁", bytes as `<0xNN>`. */
  readonly piece: string;
  readonly score: number;
  readonly type: number;
}

/** `<unk>`, `<s>`, `</s>`, the 256 byte tokens, `<|im_start|>`, `<|im_end|>`: ids 0–260. */
export function baseVocab(): VocabEntry[] {
  const v: VocabEntry[] = [
    { piece: "<unk>", score: 0, type: TOKEN_TYPE.unknown },
    { piece: "<s>", score: 0, type: TOKEN_TYPE.control },
    { piece: "</s>", score: 0, type: TOKEN_TYPE.control },
  ];
  for (let b = 0; b < 256; b++) v.push({ piece: byteTokenPiece(b), score: 0, type: TOKEN_TYPE.byte });
  v.push({ piece: "<|im_start|>", score: 0, type: TOKEN_TYPE.control });
  v.push({ piece: "<|im_end|>", score: 0, type: TOKEN_TYPE.control });
  return v;
}

export const byteTokenPiece = (byte: number): string => `<0x${byte.toString(16).toUpperCase().padStart(2, "0")}>`;

/** SentencePiece stores a space as "▁" (U+2581); llama.cpp escapes prompts the same way. */
export const escapeSpaces = (text: string): string => text.replaceAll(" ", "\u2581");
export const unescapeSpaces = (piece: string): string => piece.replaceAll("\u2581", " ");

export interface LlamaShape {
  readonly contextLength: number;
  readonly embedding: number;
  readonly blocks: number;
  readonly feedForward: number;
  readonly heads: number;
  readonly headsKv: number;
  readonly rmsEpsilon: number;
}

/**
 * Architectures whose graph is the llama one for this project's tensors. `qwen2` differs only in
 * its RoPE layout (NEOX: dimension i pairs with i + n/2, not with i + 1), and node-llama-cpp
 * considers its Qwen chat wrapper only for Qwen architectures. `qwen3` adds a norm of queries and
 * keys per head (rerank.ts) and is the one llama-like architecture whose graph takes a ranking head.
 */
export type Architecture = "llama" | "qwen2" | "qwen3";

/**
 * The types a model's weights are written in, and llama.cpp's `general.file_type` for each (Q4_K: "mostly Q4_K_S",
 * Q8_0: "mostly Q8_0").
 */
export type FileType = "F32" | "F16" | "Q4_K" | "Q8_0";
const FILE_TYPE: Readonly<Record<FileType, number>> = { F32: 0, F16: 1, Q8_0: 7, Q4_K: 14 };

/** The metadata of a llama model with this project's tokenizer settings. */
export function llamaMetadata(
  name: string,
  shape: LlamaShape,
  vocab: readonly VocabEntry[],
  chatTemplate: string,
  fileType: FileType,
  architecture: Architecture = "llama",
): Array<readonly [string, MetadataValue]> {
  return [
    ...architectureMetadata(name, shape, vocab.length, fileType, architecture),
    ["tokenizer.ggml.model", meta.str("llama")],
    ["tokenizer.ggml.tokens", meta.strings(vocab.map((e) => e.piece))],
    ["tokenizer.ggml.scores", meta.f32s(vocab.map((e) => e.score))],
    ["tokenizer.ggml.token_type", meta.i32s(vocab.map((e) => e.type))],
    ["tokenizer.ggml.unknown_token_id", meta.u32(UNK_ID)],
    ["tokenizer.ggml.bos_token_id", meta.u32(BOS_ID)],
    ["tokenizer.ggml.eos_token_id", meta.u32(EOS_ID)],
    ["tokenizer.ggml.add_bos_token", meta.bool(true)],
    ["tokenizer.ggml.add_eos_token", meta.bool(false)],
    ["tokenizer.ggml.add_space_prefix", meta.bool(false)],
    ["tokenizer.chat_template", meta.str(chatTemplate)],
  ];
}

/** The metadata of a llama-like architecture, before the tokenizer's. */
export function architectureMetadata(
  name: string,
  shape: LlamaShape,
  vocabSize: number,
  fileType: FileType,
  architecture: Architecture = "llama",
): Array<readonly [string, MetadataValue]> {
  const a = architecture;
  return [
    ["general.architecture", meta.str(a)],
    ["general.name", meta.str(name)],
    ["general.file_type", meta.u32(FILE_TYPE[fileType])],
    [`${a}.context_length`, meta.u32(shape.contextLength)],
    [`${a}.embedding_length`, meta.u32(shape.embedding)],
    [`${a}.block_count`, meta.u32(shape.blocks)],
    [`${a}.feed_forward_length`, meta.u32(shape.feedForward)],
    [`${a}.attention.head_count`, meta.u32(shape.heads)],
    [`${a}.attention.head_count_kv`, meta.u32(shape.headsKv)],
    [`${a}.rope.dimension_count`, meta.u32(shape.embedding / shape.heads)],
    [`${a}.attention.layer_norm_rms_epsilon`, meta.f32(shape.rmsEpsilon)],
    [`${a}.vocab_size`, meta.u32(vocabSize)],
  ];
}

export type TensorRole = "embedding" | "norm" | "matrix" | "output";

export interface TensorSlot {
  readonly name: string;
  readonly shape: readonly number[];
  readonly role: TensorRole;
}

/** Every tensor a llama model needs, in file order, with its ggml shape (innermost first). */
export function llamaTensorSlots(shape: LlamaShape, vocabSize: number): TensorSlot[] {
  const d = shape.embedding;
  const kv = (d / shape.heads) * shape.headsKv;
  const ff = shape.feedForward;
  const slots: TensorSlot[] = [{ name: "token_embd.weight", shape: [d, vocabSize], role: "embedding" }];
  for (let i = 0; i < shape.blocks; i++) {
    const b = `blk.${i}`;
    slots.push(
      { name: `${b}.attn_norm.weight`, shape: [d], role: "norm" },
      { name: `${b}.attn_q.weight`, shape: [d, d], role: "matrix" },
      { name: `${b}.attn_k.weight`, shape: [d, kv], role: "matrix" },
      { name: `${b}.attn_v.weight`, shape: [d, kv], role: "matrix" },
      { name: `${b}.attn_output.weight`, shape: [d, d], role: "matrix" },
      { name: `${b}.ffn_norm.weight`, shape: [d], role: "norm" },
      { name: `${b}.ffn_gate.weight`, shape: [d, ff], role: "matrix" },
      { name: `${b}.ffn_down.weight`, shape: [ff, d], role: "matrix" },
      { name: `${b}.ffn_up.weight`, shape: [d, ff], role: "matrix" },
    );
  }
  slots.push(
    { name: "output_norm.weight", shape: [d], role: "norm" },
    { name: "output.weight", shape: [d, vocabSize], role: "output" },
  );
  return slots;
}

export const sizeOf = (shape: readonly number[]): number => shape.reduce((a, b) => a * b, 1);

/** A norm tensor of ones (norms are always F32). */
export function onesTensor(slot: TensorSlot): Tensor {
  return { name: slot.name, shape: slot.shape, type: "F32", data: new Float32Array(sizeOf(slot.shape)).fill(1) };
}
