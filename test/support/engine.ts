// Watches a loaded model's context from the inside: every batch llama.cpp decodes.
import type { LoadedModel } from "../../sidecar/engine/llama/model.js";

/**
 * Calls `onBatch` with the tokens of each sequence in a batch, the threads it runs on and the
 * sequences' ids, as its decode starts. Wraps the context's native handle (node-llama-cpp's
 * `_ctx`): `addToBatch` once per sequence, then `decodeBatch`.
 */
export function watchBatches(loaded: LoadedModel, onBatch: (tokensPerSequence: number[], threads: number, sequenceIds: number[]) => void): void {
  const context = loaded.context as unknown as { _ctx: Record<string | symbol, unknown> };
  const native = context._ctx;
  let added: number[] = [];
  let ids: number[] = [];
  context._ctx = new Proxy(native, {
    get(target, key) {
      const value = target[key];
      if (typeof value !== "function") return value;
      if (key === "addToBatch") {
        return (...args: unknown[]): unknown => {
          ids.push(args[0] as number);
          added.push((args[2] as ArrayLike<number>).length);
          return value.apply(target, args);
        };
      }
      if (key === "decodeBatch") {
        return (...args: unknown[]): unknown => {
          onBatch(added, (target.getThreads as () => number).call(target), ids);
          added = [];
          ids = [];
          return value.apply(target, args);
        };
      }
      return value.bind(target);
    },
  });
}

/**
 * Counts, for each batch, the samplings that started while the batch's first was still running
 * (node-llama-cpp's `_ctx.sampleToken`, which runs on a worker thread). Returns the counts so far.
 */
export function watchSampling(loaded: LoadedModel): { batches: number; overlapping: number } {
  const context = loaded.context as unknown as { _ctx: Record<string | symbol, unknown> };
  const native = context._ctx;
  const seen = { batches: 0, overlapping: 0 };
  let first: "none" | "running" | "done" = "none";
  context._ctx = new Proxy(native, {
    get(target, key) {
      const value = target[key];
      if (typeof value !== "function") return value;
      if (key === "decodeBatch") {
        return (...args: unknown[]): unknown => {
          seen.batches++;
          first = "none";
          return value.apply(target, args);
        };
      }
      if (key === "sampleToken") {
        return async (...args: unknown[]): Promise<unknown> => {
          if (first === "running") seen.overlapping++;
          const isFirst = first === "none";
          if (isFirst) first = "running";
          try {
            return await value.apply(target, args);
          } finally {
            if (isFirst) first = "done";
          }
        };
      }
      return value.bind(target);
    },
  });
  return seen;
}
