// What the bench passes to the children that load the model (JSON in argv[2]).
import type { EngineChoice } from "../../sidecar/engine/llama/model.js";

export interface EngineArgs {
  readonly modelPath: string;
  readonly threads: number;
  /** Threads of batches of several tokens (sidecar/engine/llama/batch-threads.ts). */
  readonly threadsBatch: number;
  readonly engine: EngineChoice;
  readonly sequences: number;
  readonly contextSize: number;
  readonly maxQueue: number;
  /** The sidecar's `--cache-ram` (MiB, or "auto"; 0 = off, its default): the KV cache tier in host memory. */
  readonly cacheRam?: number | "auto";
  /**
   * The sidecar's catalogue, model files named by their file names (sidecar/catalogue/): with
   * several, none is loaded at start; unset, `modelPath` alone, loaded at start.
   */
  readonly catalogue?: readonly string[];
}

/** What a model-loading child reports when ready. */
export interface EngineReady {
  readonly buildType: string;
  readonly threads: number;
  readonly threadsBatch: number;
  /** Where the model runs (sidecar/engine/llama/gpu.ts, describeGpu). */
  readonly gpu?: string;
}

export function argsOf<T>(): T {
  return JSON.parse(process.argv[2] ?? "{}") as T;
}

/** Ends the process on SIGTERM after `cleanup`. */
export function exitOnSigterm(cleanup: () => Promise<void> = async () => undefined): void {
  process.once("SIGTERM", () => {
    cleanup().finally(() => process.exit(0));
  });
}
