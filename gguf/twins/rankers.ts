// Twins of the ranking and embedding models people serve, on Qwen3's real tokenizer with random
// weights: Qwen3-Reranker (its rerank template as llama.cpp's converter writes it into the GGUF, read
// from the source node-llama-cpp ships) and Qwen3-Embedding (last-token pooling, EOS appended to
// every input). What they prove is the input the sidecar builds, which must be llama-server's.
import { llamaSourceFile } from "../llama-source.js";
import { buildQwen3Model, RERANK_SPEC } from "../rerank.js";
import type { GgufFile } from "../writer.js";
import { QWEN3_VOCAB } from "./parts.js";

/** Qwen3-Reranker's rerank template, from llama.cpp's converter (`conversion/qwen.py`): its string literals joined. */
export function qwen3RerankTemplate(): string {
  const source = llamaSourceFile("conversion/qwen.py");
  const start = source.indexOf('"template":', source.indexOf('"name": "rerank"'));
  const end = source.indexOf("}])", start);
  if (start === -1 || end === -1)
    throw new Error("Qwen3-Reranker's rerank template is missing from llama.cpp's conversion/qwen.py");
  const literals = source.slice(start + '"template":'.length, end).match(/"(?:[^"\\]|\\.)*"/g) ?? [];
  return literals.map((literal) => JSON.parse(literal) as string).join("");
}

/** A twin of Qwen3-Reranker: the rerank model's layout on Qwen3's tokenizer, with its real rerank template. */
export function qwen3RerankerFile(): GgufFile {
  return buildQwen3Model({
    ...RERANK_SPEC,
    name: "qwen3-reranker",
    vocabulary: QWEN3_VOCAB,
    head: "rank",
    rerankTemplate: qwen3RerankTemplate(),
  }).file;
}

/**
 * A twin of Qwen3-Embedding: Qwen3's layout and tokenizer, `<|endoftext|>` appended to every input, the last token's
 * state pooled.
 */
export function qwen3EmbeddingFile(): GgufFile {
  return buildQwen3Model({
    ...RERANK_SPEC,
    name: "qwen3-embedding",
    vocabulary: { ...QWEN3_VOCAB, eos: "<|endoftext|>" },
    head: "embed",
  }).file;
}
