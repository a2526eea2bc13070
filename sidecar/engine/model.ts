import path from "node:path";
import {
  getLlama,
  resolveChatWrapper,
  type ChatWrapper,
  type Llama,
  type LlamaContext,
  type LlamaModel,
} from "node-llama-cpp";
import { SequencePool } from "./pool.js";
import { TokenBytes } from "./token-bytes.js";

export interface ModelOptions {
  /** A GGUF file. */
  readonly modelPath: string;
  /** The name clients use; defaults to the file name without `.gguf`. */
  readonly id?: string;
  /** Threads llama.cpp may use; always explicit (node-llama-cpp's default is far too many on small hosts). */
  readonly threads: number;
  /** Requests generated at the same time, each in its own sequence of one shared context. */
  readonly sequences: number;
  /** Tokens one sequence holds (prompt plus reply). */
  readonly contextSize: number;
  /** Requests allowed to wait for a free sequence; more are refused at once. */
  readonly maxQueue: number;
  /** How long a request may wait for a free sequence, in milliseconds. */
  readonly queueTimeoutMs: number;
  /** Load progress, 0..1. */
  readonly onProgress?: (fraction: number) => void;
}

/** One loaded model: its context, its sequences and what is resolved once per model. */
export interface LoadedModel {
  readonly id: string;
  readonly created: number;
  readonly llama: Llama;
  readonly model: LlamaModel;
  readonly context: LlamaContext;
  readonly chatWrapper: ChatWrapper;
  readonly pool: SequencePool;
  readonly tokenBytes: TokenBytes;
  readonly contextSize: number;
  readonly vocabularySize: number;
  dispose(): Promise<void>;
}

let llamaInstance: Promise<Llama> | undefined;

/** The llama.cpp binding, loaded once per process; never builds or downloads anything. */
export function loadLlama(threads: number): Promise<Llama> {
  llamaInstance ??= getLlama({ gpu: "auto", build: "never", maxThreads: threads, logLevel: "error" as never });
  return llamaInstance;
}

export async function loadModel(options: ModelOptions): Promise<LoadedModel> {
  const llama = await loadLlama(options.threads);
  const model = await llama.loadModel({
    modelPath: options.modelPath,
    ...(options.onProgress ? { onLoadProgress: options.onProgress } : {}),
  });
  const context = await model.createContext({
    sequences: options.sequences,
    contextSize: options.contextSize * options.sequences,
    threads: options.threads,
  });
  const chatWrapper = resolveChatWrapper(model);
  const id = options.id ?? path.basename(options.modelPath).replace(/\.gguf$/i, "");
  const pool = new SequencePool(context, { maxQueue: options.maxQueue, queueTimeoutMs: options.queueTimeoutMs });
  return {
    id,
    created: Math.floor(Date.now() / 1000),
    llama,
    model,
    context,
    chatWrapper,
    pool,
    tokenBytes: new TokenBytes(model),
    contextSize: Math.floor(context.contextSize / options.sequences),
    vocabularySize: vocabularySize(model),
    async dispose() {
      await context.dispose();
      await model.dispose();
    },
  };
}

function vocabularySize(model: LlamaModel): number {
  const metadata = model.fileInfo.metadata as unknown as {
    tokenizer?: { ggml?: { tokens?: readonly unknown[] } };
  };
  return metadata.tokenizer?.ggml?.tokens?.length ?? 0;
}
