// Random-weight llama models for speed work: same architecture and tokenizer as the real thing,
// weights from a seeded PRNG, so the same spec always gives the same bytes.
import {
  baseVocab,
  CHATML_TEMPLATE,
  escapeSpaces,
  llamaMetadata,
  llamaTensorSlots,
  onesTensor,
  sizeOf,
  TOKEN_TYPE,
  type FileType,
  type LlamaShape,
  type TensorSlot,
  type VocabEntry,
} from "./llama.js";
import { QUANT_BLOCK, type QuantType, toFloat16Bits, type GgufFile, type Tensor } from "./writer.js";

export interface RandomSpec {
  readonly name: string;
  readonly seed: number;
  readonly vocabSize: number;
  readonly shape: LlamaShape;
  /** Type of the matrices and the embedding table; norms are always F32. */
  readonly type: FileType;
  readonly chatTemplate?: string;
}

export interface RandomModel {
  readonly file: GgufFile;
  readonly vocab: readonly VocabEntry[];
  readonly parameters: number;
}

/** ~1 MB: decodes thousands of tokens per second on one thread. */
export const RANDOM_TINY: RandomSpec = {
  name: "random-tiny",
  seed: 1,
  vocabSize: 1024,
  shape: { contextLength: 4096, embedding: 64, blocks: 2, feedForward: 128, heads: 4, headsKv: 4, rmsEpsilon: 1e-5 },
  type: "F32",
};

/** 60M parameters in F16 (~120 MB), vocabulary 32,000: the benchmark model. */
export const RANDOM_60M: RandomSpec = {
  name: "random-60m",
  seed: 60,
  vocabSize: 32000,
  // The context it declares as trained: llama-server gives a sequence no more, and the benchmark's
  // agent-sized prompt is 40,000 tokens (the weights are random: no length was really trained).
  shape: {
    contextLength: 65_536,
    embedding: 512,
    blocks: 8,
    feedForward: 1536,
    heads: 8,
    headsKv: 8,
    rmsEpsilon: 1e-5,
  },
  type: "F16",
};

/**
 * 852M parameters in F16 (~1.7 GB): the size class of the small models people run on a CPU, whose
 * decode steps are long enough that thread wake-ups do not dominate them as they do random-60m's.
 * Grouped-query attention (4 KV heads of 16, head size 128) as such models have, so its KV cache is
 * 32 KiB a token.
 */
export const RANDOM_850M: RandomSpec = {
  name: "random-850m",
  seed: 850,
  vocabSize: 32000,
  shape: {
    contextLength: 65_536,
    embedding: 2048,
    blocks: 16,
    feedForward: 5632,
    heads: 16,
    headsKv: 4,
    rmsEpsilon: 1e-5,
  },
  type: "F16",
};

/**
 * random-60m's shape with Q4_K matrices and embedding table (~36 MB): a quantized model as users serve them, whose
 * weights llama.cpp's CPU backend repacks at load on x86 with AVX2 (its rows are multiples of 256 and of 8).
 */
export const RANDOM_60M_Q4K: RandomSpec = { ...RANDOM_60M, name: "random-60m-q4k", seed: 604, type: "Q4_K" };

/**
 * random-60m's shape with Q8_0 matrices and embedding table (~64 MB): weights llama.cpp's CPU backend keeps as they are
 * and multiplies with ggml's dot product for one column, with llamafile's tiles for more.
 */
export const RANDOM_60M_Q8: RandomSpec = { ...RANDOM_60M, name: "random-60m-q8", seed: 608, type: "Q8_0" };

/** mulberry32: a small, fast 32-bit PRNG; deterministic for a seed. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}

const LOWER = "abcdefghijklmnopqrstuvwxyz";

/**
 * Filler pieces, prefix-closed so the tokenizer can reach each one: single printable characters,
 * "▁" + letter or digit, then two- and three-letter lowercase pieces, with and without "▁".
 */
function* fillerPieces(): Generator<string> {
  for (let c = 0x21; c <= 0x7e; c++) yield String.fromCharCode(c);
  yield escapeSpaces(" ");
  for (const ch of "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789") yield escapeSpaces(` ${ch}`);
  const two = [...LOWER].flatMap((a) => [...LOWER].map((b) => a + b));
  for (const p of two) yield p;
  for (const p of two) yield escapeSpaces(` ${p}`);
  const three = two.flatMap((p) => [...LOWER].map((c) => p + c));
  for (const p of three) yield p;
  for (const p of three) yield escapeSpaces(` ${p}`);
}

export function randomVocab(size: number): VocabEntry[] {
  const vocab = baseVocab();
  if (size < vocab.length) throw new Error(`a vocabulary needs at least ${vocab.length} tokens`);
  for (const piece of fillerPieces()) {
    if (vocab.length >= size) break;
    vocab.push({ piece, score: [...piece].length, type: TOKEN_TYPE.normal });
  }
  if (vocab.length < size) throw new Error(`vocabulary size ${size} is larger than this generator supports`);
  return vocab;
}

/** Uniform values with the given standard deviation. */
export function randomTensor(slot: TensorSlot, type: FileType, std: number, next: () => number): Tensor {
  const n = sizeOf(slot.shape);
  if (type === "Q4_K") return randomQ4kTensor(slot, std, next);
  if (type === "Q8_0") return randomQ8Tensor(slot, std, next);
  const a = std * Math.sqrt(3);
  const scale = (2 * a) / 0x100000000;
  if (type === "F32") {
    const data = new Float32Array(n);
    for (let i = 0; i < n; i++) data[i] = next() * scale - a;
    return { name: slot.name, shape: slot.shape, type, data };
  }
  // 16 random bits index a table of F16 values: uniform, and fast enough for 60M values.
  const table = new Uint16Array(65536);
  for (let i = 0; i < 65536; i++) table[i] = toFloat16Bits(((i + 0.5) / 65536) * 2 * a - a);
  const data = new Uint16Array(n);
  for (let i = 0; i < n; i += 2) {
    const r = next();
    data[i] = table[r & 0xffff] ?? 0;
    if (i + 1 < n) data[i + 1] = table[r >>> 16] ?? 0;
  }
  return { name: slot.name, shape: slot.shape, type, data };
}

/**
 * Q4_K blocks of uniform 4-bit values around 0 with the given standard deviation: every sub-block's scale and minimum
 * 32 (the 12 scale bytes 0xA0 × 8 then 0 × 4 unpack so), the block's scale d = std / (32 × 4.61) (4.61: the standard
 * deviation of a value uniform over 0–15) and its minimum 7.5 d (value 7.5 is 0).
 */
function randomQ4kTensor(slot: TensorSlot, std: number, next: () => number): Tensor {
  const scale = std / (32 * Math.sqrt((16 * 16 - 1) / 12));
  const [d, dmin] = [toFloat16Bits(scale), toFloat16Bits(7.5 * scale)];
  return blockTensor(slot, "Q4_K", (view, at, end) => {
    view.setUint16(at, d, true);
    view.setUint16(at + 2, dmin, true);
    for (let i = at + 4; i < at + 12; i++) view.setUint8(i, 0xa0);
    for (let i = at + 16; i < end; i += 4) view.setUint32(i, next(), true);
  });
}

/**
 * Q8_0 blocks of uniform 8-bit values (random bytes read as signed, -128–127) with the given standard deviation: every
 * block's scale d = std / 73.9 (the standard deviation of a value uniform over 256 steps).
 */
function randomQ8Tensor(slot: TensorSlot, std: number, next: () => number): Tensor {
  const d = toFloat16Bits(std / Math.sqrt((256 * 256 - 1) / 12));
  return blockTensor(slot, "Q8_0", (view, at, end) => {
    view.setUint16(at, d, true);
    for (let i = at + 2; i < end; i += 4) view.setUint32(i, next(), true);
  });
}

/** A tensor of `type`'s blocks, each written by `fill` into bytes `at` to `end` (zeros where it writes nothing). */
function blockTensor(
  slot: TensorSlot,
  type: QuantType,
  fill: (view: DataView, at: number, end: number) => void,
): Tensor {
  const { values, bytes } = QUANT_BLOCK[type];
  const data = new Uint8Array((sizeOf(slot.shape) / values) * bytes);
  const view = new DataView(data.buffer);
  for (let at = 0; at < data.length; at += bytes) fill(view, at, at + bytes);
  return { name: slot.name, shape: slot.shape, type, data };
}

export function buildRandomModel(spec: RandomSpec): RandomModel {
  const vocab = randomVocab(spec.vocabSize);
  const next = mulberry32(spec.seed);
  const tensors = llamaTensorSlots(spec.shape, vocab.length).map((slot): Tensor => {
    switch (slot.role) {
      case "norm":
        return onesTensor(slot);
      case "embedding":
        return randomTensor(slot, spec.type, 1, next);
      // Weights scaled by 1/sqrt(fan-in) keep activations and logits of order 1.
      case "matrix":
      case "output":
        return randomTensor(slot, spec.type, 1 / Math.sqrt(slot.shape[0] ?? 1), next);
    }
    throw new Error(`unknown tensor role ${slot.role satisfies never}`);
  });
  const metadata = llamaMetadata(spec.name, spec.shape, vocab, spec.chatTemplate ?? CHATML_TEMPLATE, spec.type);
  const parameters = tensors.reduce((sum, t) => sum + sizeOf(t.shape), 0);
  return { file: { metadata, tensors }, vocab, parameters };
}
