// The ranking and embedding twins (gguf/twins/rankers.ts: Qwen3's real tokenizer, random weights)
// behind the real sidecar and the edge on Node. Qwen3-Reranker: its rerank template (as llama.cpp's
// converter writes it) filled in and tokenized whole, as llama-server builds a pair's input, its
// `<|im_start|>` and `<think>` read as the special tokens they are; the scores computed here on that
// input. Qwen3-Embedding: the vocabulary's EOS appended to every input (its add_eos_token) and the
// last token's state the vector, as llama-server gives it.
import type { LlamaEmbeddingContext, LlamaModel } from "node-llama-cpp";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureModels, modelPath } from "../../gguf/models.js";
import { qwen3RerankTemplate } from "../../gguf/twins/rankers.js";
import { loadLlama } from "../../sidecar/engine/llama/model.js";
import { startStack, type Stack } from "../support/edge.js";
import {
  disposeReference,
  expectedRanking,
  rankingReference,
  serverInput,
  type RankingReference,
} from "../support/rerank.js";

const PAIR_TOKENS = 256;
const QUERY = "what do llamas eat";
const DOCUMENTS = ["llamas eat grass and hay", "the sky is blue today", "a recipe for bread"];
/** Qwen3's special tokens: `<|im_start|>`, `<think>`, `<|endoftext|>`. */
const [IM_START, THINK, END_OF_TEXT] = [151_644, 151_667, 151_643];

let ranker: Stack;
let embedder: Stack;
let reference: RankingReference;
let embedding: { model: LlamaModel; context: LlamaEmbeddingContext };
beforeAll(async () => {
  await ensureModels("models", ["qwen3-reranker", "qwen3-embedding"]);
  ranker = await startStack({
    model: modelPath("qwen3-reranker"),
    sequences: 1,
    contextSize: 256,
    embeddingContextSize: PAIR_TOKENS,
  });
  embedder = await startStack({
    model: modelPath("qwen3-embedding"),
    sequences: 1,
    contextSize: 256,
    embeddingContextSize: 256,
  });
  reference = await rankingReference(modelPath("qwen3-reranker"), qwen3RerankTemplate(), PAIR_TOKENS);
  const model = await (await loadLlama()).loadModel({ modelPath: modelPath("qwen3-embedding") });
  embedding = { model, context: await model.createEmbeddingContext({ contextSize: 256, batchSize: 256, threads: 1 }) };
}, 120_000);
afterAll(async () => {
  await ranker?.stop();
  await embedder?.stop();
  await disposeReference(reference);
  await embedding?.context.dispose();
  await embedding?.model.dispose();
});

describe("qwen3-reranker", () => {
  it(
    "ranks on llama-server's input: the rerank template filled in, its special tokens as tokens; usage counts that " +
      "input",
    async () => {
      const input = serverInput(reference, QUERY, DOCUMENTS[0] as string);
      expect([input[0], input.includes(THINK as never)]).toEqual([IM_START, true]);
      const { results, tokens } = await expectedRanking(reference, QUERY, DOCUMENTS);
      const response = await fetch(`${ranker.edge.url}/v1/rerank`, {
        method: "POST",
        body: JSON.stringify({ query: QUERY, documents: DOCUMENTS }),
      });
      const json = (await response.json()) as Record<string, unknown>;
      expect([json["usage"], json["results"]]).toEqual([{ prompt_tokens: tokens, total_tokens: tokens }, results]);
    },
  );
});

describe("qwen3-embedding", () => {
  it("embeds the text with its EOS appended, as llama-server does, and counts that input", async () => {
    const text = "Llamas eat grass and hay.";
    const tokens = [...embedding.model.tokenize(text), END_OF_TEXT];
    const vector = Array.from((await embedding.context.getEmbeddingFor(tokens as never)).vector);
    const length = Math.sqrt(vector.reduce((sum, x) => sum + x * x, 0));
    const client = new OpenAI({ baseURL: embedder.baseURL, apiKey: "none", maxRetries: 0 });
    const answer = await client.embeddings.create({ model: "qwen3-embedding", input: text, encoding_format: "float" });
    expect(answer.usage).toEqual({ prompt_tokens: tokens.length, total_tokens: tokens.length });
    const got = answer.data[0]?.embedding ?? [];
    expect(got.length).toBe(vector.length);
    expect(Math.max(...got.map((x, i) => Math.abs(x - (vector[i] as number) / length)))).toBeLessThan(1e-6);
    // /tokenize with the model's special tokens shows the same input.
    const tokenized = await fetch(`${embedder.edge.url}/tokenize`, {
      method: "POST",
      body: JSON.stringify({ content: text, add_special: true }),
    });
    expect(((await tokenized.json()) as { tokens: number[] }).tokens).toEqual(tokens);
  });
});
