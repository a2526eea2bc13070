// Ranking (the Rank RPC): one ranking context per model, beside the generation sequences, made on
// the first call so that a sidecar nobody asks to rank pays no memory for it. node-llama-cpp's
// ranking context evaluates one (query, document) pair at a time in its one sequence, so calls
// queue for it as embeddings do (docs/decisions.md, "Rerank: one ranking context, one pair at a time").
// Each pair's input is built as llama-server builds it (rank-input.ts).
import type { LlamaModel, LlamaRankingContext, Token } from "node-llama-cpp";
import { cancelled, invalidArgument } from "../engine-errors.js";
import { rankTokens } from "./llama-internals.js";
import { OneAtATime } from "./one-at-a-time.js";
import { rankInput } from "./rank-input.js";

/** What a model is for (proto: ModelInfo.kind). */
export type ModelKind = "generate" | "rank";

/**
 * "rank" for a model with a ranking head (a `cls.weight` or `cls.output.weight` tensor, and an EOS
 * or SEP token or a rerank template: node-llama-cpp's `supportsRanking`), "generate" otherwise.
 * Takes the insights of a loaded model or of `readGgufFileInfo`, so a model can be told before it loads.
 */
export function modelKind(insights: { readonly supportsRanking: boolean }): ModelKind {
  return insights.supportsRanking ? "rank" : "generate";
}

export interface RankerOptions {
  readonly threads: number;
  /** Tokens one (query, document) pair may hold, template included (capped by the model's trained context). */
  readonly contextSize: number;
  /** Calls that may wait while another is evaluated; more are refused with RESOURCE_EXHAUSTED. */
  readonly maxQueue: number;
}

export interface RankResult {
  /** One per document, in order: the model's score, 0..1, higher is more relevant. */
  readonly scores: number[];
  /** Tokens evaluated: every pair, template included. */
  readonly tokens: number;
}

export class Ranker {
  readonly #model: LlamaModel;
  readonly #options: RankerOptions;
  #context: Promise<LlamaRankingContext> | undefined;
  readonly #queue: OneAtATime;

  constructor(model: LlamaModel, options: RankerOptions) {
    this.#model = model;
    this.#options = options;
    this.#queue = new OneAtATime(options.maxQueue, "ranking");
  }

  /** Tokens one pair may hold. */
  get contextSize(): number {
    return Math.min(this.#options.contextSize, this.#model.trainContextSize);
  }

  /** The documents' scores for the query, in order; every pair is checked before any is evaluated. */
  async rank(query: string, documents: readonly string[], signal: AbortSignal): Promise<RankResult> {
    if (modelKind(this.#model.fileInsights) !== "rank") {
      throw invalidArgument(
        "this model has no ranking head (cls.output.weight or cls.weight): Rank needs a reranking model",
      );
    }
    if (query === "") throw invalidArgument("the query is empty");
    if (documents.length === 0) throw invalidArgument("rank needs at least one document");
    const empty = documents.indexOf("");
    if (empty >= 0) throw invalidArgument(`document ${empty} is empty`);
    const context = await this.#open();
    const inputs = documents.map((document, i) => this.#fits(rankInput(this.#model, query, document), i));
    return this.#queue.run(async () => {
      const scores: number[] = [];
      for (const input of inputs) {
        if (signal.aborted) throw cancelled();
        scores.push(await rankTokens(context, input));
      }
      return { scores, tokens: inputs.reduce((sum, input) => sum + input.length, 0) };
    });
  }

  async dispose(): Promise<void> {
    const context = this.#context;
    this.#context = undefined;
    if (context !== undefined) await (await context).dispose();
  }

  #open(): Promise<LlamaRankingContext> {
    const size = this.contextSize;
    this.#context ??= this.#model.createRankingContext({
      contextSize: size,
      batchSize: size,
      threads: this.#options.threads,
    });
    return this.#context;
  }

  /**
   * node-llama-cpp evaluates a pair only when it is shorter than the context; the limit is the one
   * configured (node-llama-cpp rounds the context itself up to a multiple of 256).
   */
  #fits(input: Token[], index: number): Token[] {
    if (input.length >= this.contextSize) {
      throw invalidArgument(
        `document ${index} and the query take ${input.length} tokens, but a ranking input holds at most ` +
          `${this.contextSize - 1}`,
      );
    }
    return input;
  }
}
