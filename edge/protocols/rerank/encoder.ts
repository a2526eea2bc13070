// The rerank answer: llama-server's list (`object`, `model`, `usage` with `prompt_tokens` and
// `total_tokens`, `results` of `index` and `relevance_score`) with Jina's `document: {text}` on
// each result unless `return_documents: false`, best first, cut to `top_n` (docs/contract.md, "Rerank").
import type { RankResponse } from "../../../proto/gen/inference/v1/inference_pb.js";

export interface RerankResult {
  readonly index: number;
  readonly relevance_score: number;
  readonly document?: { readonly text: string };
}

export interface RerankAnswer {
  readonly id: string;
  readonly object: "list";
  readonly model: string;
  readonly usage: { readonly prompt_tokens: number; readonly total_tokens: number };
  readonly results: RerankResult[];
}

export interface RerankShape {
  readonly id: string;
  readonly model: string;
  /** The documents' texts, in the request's order. */
  readonly texts: readonly string[];
  /** Results kept; default every one. */
  readonly topN: number | undefined;
  readonly returnDocuments: boolean;
}

/** The results by score, highest first (equal scores keep the request's order), cut to `topN`. */
export function rerankAnswer(response: RankResponse, shape: RerankShape): RerankAnswer {
  const ranked = response.scores
    .map((score, index) => ({ index, score }))
    .sort((a, b) => b.score - a.score || a.index - b.index)
    .slice(0, shape.topN ?? response.scores.length);
  return {
    id: shape.id,
    object: "list",
    model: shape.model,
    usage: { prompt_tokens: response.promptTokens, total_tokens: response.promptTokens },
    results: ranked.map(({ index, score }) => ({
      index,
      relevance_score: score,
      ...(shape.returnDocuments ? { document: { text: shape.texts[index] ?? "" } } : {}),
    })),
  };
}
