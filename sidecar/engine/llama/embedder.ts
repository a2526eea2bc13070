// Embeddings (the Embed RPC): one embedding context per model, beside the generation sequences,
// made on the first call so that a sidecar nobody asks for embeddings pays no memory for it.
// node-llama-cpp's embedding context evaluates one input at a time and reads the vector of its one
// sequence, so calls queue for it (docs/decisions.md, "Embeddings queue, one input at a time").
import type { LlamaEmbeddingContext, LlamaModel, Token } from "node-llama-cpp";
import type { EmbedInput } from "../../../proto/gen/inference/v1/inference_pb.js";
import { cancelled, invalidArgument } from "../engine-errors.js";
import { OneAtATime } from "./one-at-a-time.js";

export interface EmbedderOptions {
  readonly threads: number;
  /** Tokens one input may hold (capped by the model's trained context). */
  readonly contextSize: number;
  /** Calls that may wait while another is evaluated; more are refused with RESOURCE_EXHAUSTED. */
  readonly maxQueue: number;
  readonly vocabularySize: number;
}

export interface EmbeddingResult {
  readonly values: number[];
  readonly tokens: number;
}

export class Embedder {
  readonly #model: LlamaModel;
  readonly #options: EmbedderOptions;
  #context: Promise<LlamaEmbeddingContext> | undefined;
  readonly #queue: OneAtATime;

  constructor(model: LlamaModel, options: EmbedderOptions) {
    this.#model = model;
    this.#options = options;
    this.#queue = new OneAtATime(options.maxQueue, "embedding");
  }

  /** The length of every vector. */
  get dimensions(): number {
    return this.#model.embeddingVectorSize;
  }

  /** Tokens one input may hold. */
  get contextSize(): number {
    return Math.min(this.#options.contextSize, this.#model.trainContextSize);
  }

  /**
   * One unit-length vector per input, in order; inputs are checked before any is evaluated. A
   * `batch` call (EmbedRequest.priority) waits behind every interactive one (one-at-a-time.ts).
   */
  async embed(inputs: readonly EmbedInput[], signal: AbortSignal, batch = false): Promise<EmbeddingResult[]> {
    // A reranker's pooled output is its ranking head's scores, not a vector (ranking.ts).
    if (this.#model.fileInsights.supportsRanking)
      throw invalidArgument("this model is a reranking model: it ranks documents, it has no embeddings");
    const resolved = inputs.map((input, i) => this.#resolve(input, i));
    return this.#queue.run(async () => {
      const context = await this.#open();
      const results: EmbeddingResult[] = [];
      for (const input of resolved) {
        if (signal.aborted) throw cancelled();
        const { vector } = await context.getEmbeddingFor(input);
        results.push({ values: unitLength(vector), tokens: context.calculateInputLength(input) });
      }
      return results;
    }, batch);
  }

  async dispose(): Promise<void> {
    const context = this.#context;
    this.#context = undefined;
    if (context !== undefined) await (await context).dispose();
  }

  #open(): Promise<LlamaEmbeddingContext> {
    const size = this.contextSize;
    this.#context ??= this.#model.createEmbeddingContext({
      contextSize: size,
      batchSize: size,
      threads: this.#options.threads,
    });
    return this.#context;
  }

  /** The text or tokens of one input, refused when empty, unknown to the vocabulary or too long. */
  #resolve(input: EmbedInput, index: number): string | Token[] {
    const where = `input ${index}`;
    if (input.input.case === "text") {
      if (input.input.value === "") throw invalidArgument(`${where} is empty`);
      return this.#fits(input.input.value, this.#model.tokenize(input.input.value, true).length, where);
    }
    if (input.input.case !== "tokens" || input.input.value.ids.length === 0) throw invalidArgument(`${where} is empty`);
    const ids = input.input.value.ids;
    const vocabulary = this.#options.vocabularySize;
    const bad = ids.find((id) => vocabulary > 0 && id >= vocabulary);
    if (bad !== undefined) throw invalidArgument(`${where}: token ${bad} is not in the model's vocabulary`);
    return this.#fits([...ids] as Token[], ids.length, where);
  }

  #fits<T>(input: T, tokens: number, where: string): T {
    // The embedding context needs one cell more than the input (and may add a BOS token).
    if (tokens + 2 > this.contextSize) {
      throw invalidArgument(
        `${where} has ${tokens} tokens, but an embedding input holds at most ${this.contextSize - 2}`,
      );
    }
    return input;
  }
}

/** The vector scaled to length 1 (a zero vector stays zero). */
export function unitLength(vector: readonly number[]): number[] {
  let sum = 0;
  for (const v of vector) sum += v * v;
  const norm = Math.sqrt(sum);
  return norm === 0 ? [...vector] : vector.map((v) => v / norm);
}
