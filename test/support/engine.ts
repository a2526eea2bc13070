// Watches a loaded model's context from the inside: every batch llama.cpp decodes.
import type { LoadedModel } from "../../sidecar/engine/model.js";

/**
 * Calls `onBatch` with the tokens of each sequence in a batch, as its decode starts. Wraps the
 * context's native handle (node-llama-cpp's `_ctx`): `addToBatch` once per sequence, then `decodeBatch`.
 */
export function watchBatches(loaded: LoadedModel, onBatch: (tokensPerSequence: number[]) => void): void {
  const context = loaded.context as unknown as { _ctx: Record<string | symbol, unknown> };
  const native = context._ctx;
  let added: number[] = [];
  context._ctx = new Proxy(native, {
    get(target, key) {
      const value = target[key];
      if (typeof value !== "function") return value;
      if (key === "addToBatch") {
        return (...args: unknown[]): unknown => {
          added.push((args[2] as ArrayLike<number>).length);
          return value.apply(target, args);
        };
      }
      if (key === "decodeBatch") {
        return (...args: unknown[]): unknown => {
          onBatch(added);
          added = [];
          return value.apply(target, args);
        };
      }
      return value.bind(target);
    },
  });
}
