// What a reranker answers when its input is built as llama-server builds it (the rerank template
// filled in, tokenized whole with its special tokens): scores computed here by node-llama-cpp's
// ranking context on the same file, for tests to compare the sidecar's answers with.
import type { LlamaModel, LlamaRankingContext, Token } from "node-llama-cpp";
import { loadLlama } from "../../sidecar/engine/llama/model.js";
import { rankTokens } from "../../sidecar/engine/llama/llama-internals.js";

export interface RankingReference {
  readonly model: LlamaModel;
  readonly context: LlamaRankingContext;
  /** The model's `tokenizer.chat_template.rerank`. */
  readonly template: string;
}

/** A ranking context on the model file, holding `pairTokens` tokens a pair. */
export async function rankingReference(path: string, template: string, pairTokens: number): Promise<RankingReference> {
  const model = await (await loadLlama()).loadModel({ modelPath: path });
  return {
    model,
    template,
    context: await model.createRankingContext({ contextSize: pairTokens, batchSize: pairTokens, threads: 1 }),
  };
}

/**
 * llama-server's input for a pair: the rerank template with the two texts in, tokenized at once with its special
 * tokens.
 */
export const serverInput = (r: RankingReference, query: string, document: string): Token[] =>
  r.model.tokenize(r.template.replace("{query}", query).replace("{document}", document), true);

/**
 * The answer llama-server's inputs make: float32 scores (as the proto carries them), best first, ties in order; and
 * their tokens.
 */
export async function expectedRanking(r: RankingReference, query: string, documents: readonly string[]) {
  const scores: number[] = [];
  for (const document of documents)
    scores.push(Math.fround(await rankTokens(r.context, serverInput(r, query, document))));
  const tokens = documents.map((d) => serverInput(r, query, d).length).reduce((a, b) => a + b, 0);
  const results = scores.map((score, index) => ({
    index,
    relevance_score: score,
    document: { text: documents[index] },
  }));
  results.sort((a, b) => b.relevance_score - a.relevance_score || a.index - b.index);
  return { results, tokens };
}

export async function disposeReference(r: RankingReference | undefined): Promise<void> {
  await r?.context.dispose();
  await r?.model.dispose();
}
