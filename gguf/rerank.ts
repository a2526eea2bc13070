// The ranking model: a tiny random-weight reranker laid out as llama.cpp's converter writes a
// Qwen3 reranker, so node-llama-cpp makes a ranking context of it (docs/decisions.md, "A generated
// ranking model").
//
// What node-llama-cpp and llama.cpp need for that: a tensor named `cls.output.weight` (or
// `cls.weight`) and an EOS or SEP token (node-llama-cpp's `supportsRanking`), and an architecture
// whose graph takes a ranking head — among the llama-like ones only `qwen3` (the BERT family has
// its own layout). Its ranking graph takes the last token's hidden state, multiplies it by
// `cls.output.weight` (one row per label of `qwen3.classifier.output_labels`, here "yes" and "no")
// and takes the softmax, so the score node-llama-cpp reads is P(yes), already in 0..1. As in a
// converted Qwen3 reranker, `qwen3.pooling_type` is 4 (rank), the lm head is the embedding table
// (no `output.weight`) and `tokenizer.chat_template.rerank` holds the template that puts the query
// and the document into one prompt. The same layout with the lm head and last-token pooling is an
// embedding model (Qwen3-Embedding's); both can carry a family's real tokenizer (twins/rankers.ts).
import { familyVocab, type FamilyVocabSpec } from "./family-vocab.js";
import {
  architectureMetadata,
  CHATML_TEMPLATE,
  llamaMetadata,
  llamaTensorSlots,
  onesTensor,
  type LlamaShape,
  type TensorSlot,
} from "./llama.js";
import { mulberry32, randomTensor, randomVocab } from "./random.js";
import { meta, type GgufFile, type MetadataValue, type Tensor } from "./writer.js";

/** llama.cpp's LLAMA_POOLING_TYPE_RANK. */
const POOLING_TYPE_RANK = 4;

/** The rerank template (Qwen3's, shortened): node-llama-cpp reads `{query}` and `{document}`. */
export const RERANK_TEMPLATE =
  "<|im_start|>user\n<Query>: {query}\n<Document>: {document}<|im_end|>\n<|im_start|>assistant\n";

export interface RerankSpec {
  readonly name: string;
  readonly seed: number;
  readonly vocabSize: number;
  readonly shape: LlamaShape;
}

/** ~0.6 MB, F32, 147,968 parameters (two blocks of 64 dimensions, a 1,024-token vocabulary). */
export const RERANK_SPEC: RerankSpec = {
  name: "rerank",
  seed: 27,
  vocabSize: 1024,
  shape: { contextLength: 512, embedding: 64, blocks: 2, feedForward: 128, heads: 4, headsKv: 4, rmsEpsilon: 1e-6 },
};

/** The labels of the ranking head's rows; the score is the first one's probability. */
export const RERANK_LABELS = ["yes", "no"];

/** llama.cpp's LLAMA_POOLING_TYPE_LAST: an embedding is the last token's state (Qwen3-Embedding's). */
const POOLING_TYPE_LAST = 3;

/** A Qwen3-layout model: a ranking head (`rank`) or the lm head with last-token pooling (`embed`). */
export interface Qwen3Spec extends RerankSpec {
  /** A family's real tokenizer; the project's random one (`vocabSize` tokens) when not given. */
  readonly vocabulary?: FamilyVocabSpec;
  readonly head: "rank" | "embed";
  /** `tokenizer.chat_template.rerank` (a ranking model's). */
  readonly rerankTemplate?: string;
}

/**
 * The llama slots, plus each block's query and key norms; for a ranking head `cls.output.weight` in place of the lm
 * head.
 */
function qwen3Slots(shape: LlamaShape, vocabSize: number, head: Qwen3Spec["head"]): TensorSlot[] {
  const headDim = shape.embedding / shape.heads;
  return llamaTensorSlots(shape, vocabSize).flatMap((slot): TensorSlot[] => {
    if (slot.name === "output.weight" && head === "rank")
      return [{ name: "cls.output.weight", shape: [shape.embedding, RERANK_LABELS.length], role: "output" }];
    if (!slot.name.endsWith(".attn_output.weight")) return [slot];
    const block = slot.name.slice(0, -".attn_output.weight".length);
    return [
      slot,
      { name: `${block}.attn_q_norm.weight`, shape: [headDim], role: "norm" },
      { name: `${block}.attn_k_norm.weight`, shape: [headDim], role: "norm" },
    ];
  });
}

/**
 * The tokenizer's metadata: the project's random vocabulary, or a family's (then EOS appended for an embedder, as
 * Qwen3-Embedding's).
 */
function tokenizerMetadata(spec: Qwen3Spec): { entries: Array<readonly [string, MetadataValue]>; size: number } {
  if (spec.vocabulary === undefined) {
    const vocab = randomVocab(spec.vocabSize);
    const all = llamaMetadata(spec.name, spec.shape, vocab, CHATML_TEMPLATE, "F32", "qwen3");
    return { entries: all.filter(([key]) => key.startsWith("tokenizer.")), size: vocab.length };
  }
  const vocab = familyVocab(spec.vocabulary);
  const entries = vocab.tokenizerMetadata().filter(([key]) => key !== "tokenizer.ggml.add_eos_token");
  entries.push(
    ["tokenizer.ggml.add_eos_token", meta.bool(spec.head === "embed")],
    ["tokenizer.chat_template", meta.str(CHATML_TEMPLATE)],
  );
  return { entries, size: vocab.entries().length };
}

/**
 * A Qwen3-layout model: norms of ones, every other tensor uniform with std 1/sqrt(fan-in) (the embedding 1; F16 for a
 * family's vocabulary).
 */
export function buildQwen3Model(spec: Qwen3Spec): { readonly file: GgufFile; readonly parameters: number } {
  const { entries, size } = tokenizerMetadata(spec);
  const next = mulberry32(spec.seed);
  const large = spec.vocabulary !== undefined;
  const tensors = qwen3Slots(spec.shape, size, spec.head).map((slot): Tensor => {
    if (slot.role === "norm") return onesTensor(slot);
    const std = slot.role === "embedding" ? 1 : 1 / Math.sqrt(slot.shape[0] ?? 1);
    return randomTensor(
      slot,
      large && (slot.role === "embedding" || slot.name === "output.weight") ? "F16" : "F32",
      std,
      next,
    );
  });
  const metadata: Array<readonly [string, MetadataValue]> = [
    ...architectureMetadata(spec.name, spec.shape, size, large ? "F16" : "F32", "qwen3"),
    ...entries,
  ];
  if (spec.head === "rank") {
    metadata.push(
      ["qwen3.pooling_type", meta.u32(POOLING_TYPE_RANK)],
      ["qwen3.classifier.output_labels", meta.strings(RERANK_LABELS)],
      ["tokenizer.chat_templates", meta.strings(["rerank"])],
      ["tokenizer.chat_template.rerank", meta.str(spec.rerankTemplate ?? RERANK_TEMPLATE)],
    );
  } else metadata.push(["qwen3.pooling_type", meta.u32(POOLING_TYPE_LAST)]);
  const parameters = tensors.reduce((sum, t) => sum + t.data.length, 0);
  return { file: { metadata, tensors }, parameters };
}

/** The ranking model. */
export const buildRerankModel = (spec: RerankSpec) => buildQwen3Model({ ...spec, head: "rank" });
