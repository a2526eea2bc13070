// A scripted stand-in for the inference sidecar: implements the same `Sidecar`
// type as the real gRPC-Web client, yields scripted Generate events, can fail
// before `start` or mid-stream with a ConnectError, can be slow, and records every
// request and the AbortSignal it was called with. Its catalogue is `models` (built with
// `catalogued`, any status); LoadModel and UnloadModel act on it as a sidecar would, are
// recorded, and can be made to fail.
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type CallOptions } from "@connectrpc/connect";
import {
  EmbedRequestSchema,
  EmbedResponseSchema,
  FinishReason,
  GenerateRequestSchema,
  GenerateResponseSchema,
  ListModelsResponseSchema,
  LoadModelRequestSchema,
  ModelInfoSchema,
  ModelStatus,
  RankRequestSchema,
  RankResponseSchema,
  UnloadModelRequestSchema,
  TokenizeRequestSchema,
  TokenizeResponseSchema,
  type CancelStreamResponse,
  type DetokenizeResponse,
  type EmbedRequest,
  type EmbedResponse,
  type GenerateRequest,
  type GenerateResponse,
  type ListModelsResponse,
  type LoadModelRequest,
  type ModelInfo,
  type RankRequest,
  type RankResponse,
  type TokenizeRequest,
  type TokenizeResponse,
  type UnloadModelRequest,
  type PullProgress,
  type ModelDescription,
} from "../../proto/gen/inference/v1/inference_pb.js";
import type { Sidecar } from "../../edge/upstream/connection.js";
import { modelLoadFailed } from "../../sidecar/engine/engine-errors.js";

export type Step =
  | { kind: "event"; event: GenerateResponse }
  | { kind: "fail"; error: ConnectError }
  | { kind: "delay"; ms: number };

export interface GenerateCall {
  readonly request: GenerateRequest;
  readonly signal: AbortSignal | undefined;
}

const encoder = new TextEncoder();

// ---- script builders ----------------------------------------------------------

export function start(model = "fake-model", promptTokens = 5, cachedTokens = 0, cacheWrittenTokens = 0): Step {
  return {
    kind: "event",
    event: create(GenerateResponseSchema, {
      event: { case: "start", value: { model, promptTokens, cachedTokens, cacheWrittenTokens } },
    }),
  };
}

/** A progress event of the prompt's evaluation (GenerateRequest.return_progress): `processed` of `total` tokens. */
export function progress(total: number, cache: number, processed: number, timeMs = processed / 10): Step {
  return {
    kind: "event",
    event: create(GenerateResponseSchema, {
      event: { case: "progress", value: { total, cache, processed, timeMs } },
    }),
  };
}

export interface TokenOptions {
  id?: number;
  /** The token's bytes; default: the UTF-8 of its text. */
  piece?: Uint8Array | string;
  logprob?: number;
  /** Alternatives, best first: [piece, logprob] (piece as text or bytes), ids 1000+. */
  top?: readonly (readonly [Uint8Array | string, number])[];
  /** Reasoning text the token adds. */
  reasoning?: string;
  /** Tool-call fragments: `id` and `name` on a call's first one. */
  toolCalls?: readonly { index: number; id?: string; name?: string; arguments?: string }[];
}

function bytesOf(piece: Uint8Array | string): Uint8Array {
  return typeof piece === "string" ? encoder.encode(piece) : piece;
}

let nextTokenId = 100;

export function token(text: string, options: TokenOptions = {}): Step {
  return {
    kind: "event",
    event: create(GenerateResponseSchema, {
      event: {
        case: "token",
        value: {
          id: options.id ?? nextTokenId++,
          text,
          piece: bytesOf(options.piece ?? text),
          ...(options.logprob === undefined ? {} : { logprob: options.logprob }),
          topLogprobs: (options.top ?? []).map(([piece, logprob], i) => ({
            id: 1000 + i,
            piece: bytesOf(piece),
            logprob,
          })),
          reasoning: options.reasoning ?? "",
          toolCalls: (options.toolCalls ?? []).map((c) => ({
            index: c.index,
            id: c.id ?? "",
            name: c.name ?? "",
            arguments: c.arguments ?? "",
          })),
        },
      },
    }),
  };
}

export interface FinishOptions {
  promptTokens?: number;
  completionTokens?: number;
  cachedTokens?: number;
  /** Prompt tokens written up to the last cache mark (`Finish.cache_written_tokens`). */
  cacheWrittenTokens?: number;
  stopSequence?: string;
  /** Text held back to the end (`Finish.text`). */
  text?: string;
  /** Reasoning held back to the end (`Finish.reasoning`). */
  reasoning?: string;
  /** Of completionTokens, those inside the reasoning segment. */
  reasoningTokens?: number;
}

export function finish(
  reason: "stop" | "length" | "context_full" | "abort" | "tool_calls" = "stop",
  options: FinishOptions = {},
): Step {
  const reasons = {
    stop: FinishReason.STOP,
    length: FinishReason.LENGTH,
    context_full: FinishReason.CONTEXT_FULL,
    abort: FinishReason.ABORT,
    tool_calls: FinishReason.TOOL_CALLS,
  };
  return {
    kind: "event",
    event: create(GenerateResponseSchema, {
      event: {
        case: "finish",
        value: {
          reason: reasons[reason],
          promptTokens: options.promptTokens ?? 5,
          completionTokens: options.completionTokens ?? 0,
          cachedTokens: options.cachedTokens ?? 0,
          cacheWrittenTokens: options.cacheWrittenTokens ?? 0,
          stopSequence: options.stopSequence ?? "",
          text: options.text ?? "",
          reasoning: options.reasoning ?? "",
          reasoningTokens: options.reasoningTokens ?? 0,
        },
      },
    }),
  };
}

export function fail(code: Code, message: string): Step {
  return { kind: "fail", error: new ConnectError(message, code) };
}

/** The sidecar's own error for a model it could not load: INTERNAL with a ModelLoadFailed detail. */
export function loadFailure(model: string, reason: string): ConnectError {
  return modelLoadFailed(model, reason);
}

/** A Generate that fails so before `start`. */
export function loadFailed(model: string, reason: string): Step {
  return { kind: "fail", error: loadFailure(model, reason) };
}

export function delay(ms: number): Step {
  return { kind: "delay", ms };
}

export interface CatalogueOptions {
  /** Default "loaded". */
  status?: "loaded" | "loading" | "available" | "failed";
  progress?: number;
  failure?: string;
  memoryBytes?: number;
  aliases?: readonly string[];
  kind?: string;
  expiresAt?: number;
  created?: number;
  contextSize?: number;
  sequences?: number;
  active?: number;
  queued?: number;
  /** The family of the model's tool-call syntax ("" with toolsRefused: it cannot call tools). */
  toolCallSyntax?: string;
  toolsRefused?: string;
  reasoning?: boolean;
  /** What it reads besides text ("image" with a projector). */
  modalities?: readonly string[];
}

const STATUSES = {
  loaded: ModelStatus.LOADED,
  loading: ModelStatus.LOADING,
  available: ModelStatus.AVAILABLE,
  failed: ModelStatus.FAILED,
};

/** A catalogued model as a sidecar with several models lists it (loaded by default). */
export function catalogued(id: string, options: CatalogueOptions = {}): ModelInfo {
  return create(ModelInfoSchema, {
    id,
    status: STATUSES[options.status ?? "loaded"],
    loadProgress: options.progress ?? 0,
    failure: options.failure ?? "",
    memoryBytes: BigInt(options.memoryBytes ?? 0),
    aliases: [...(options.aliases ?? [])],
    kind: options.kind ?? "generate",
    expiresAt: BigInt(options.expiresAt ?? 0),
    created: BigInt(options.created ?? 0),
    contextSize: options.contextSize ?? 4096,
    sequences: options.sequences ?? 4,
    active: options.active ?? 0,
    queued: options.queued ?? 0,
    toolCallSyntax: options.toolCallSyntax ?? "",
    toolsRefused: options.toolsRefused ?? "",
    reasoning: options.reasoning ?? false,
    modalities: [...(options.modalities ?? [])],
  });
}

// ---- the fake ----------------------------------------------------------------

function canceled(signal: AbortSignal): ConnectError {
  return signal.reason instanceof ConnectError
    ? signal.reason
    : new ConnectError("operation was aborted", Code.Canceled);
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted === true) {
      reject(canceled(signal));
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    function onAbort(): void {
      clearTimeout(timer);
      reject(canceled(signal as AbortSignal));
    }
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

export type Script = readonly Step[] | ((request: GenerateRequest) => readonly Step[]);

export class FakeSidecar implements Sidecar {
  readonly calls: GenerateCall[] = [];
  /** Steps of every Generate call (or a function of the request). */
  script: Script;
  models: ModelInfo[] = [
    create(ModelInfoSchema, { id: "fake-model", created: 1_700_000_000n, contextSize: 4096, sequences: 4 }),
  ];
  /** Makes ListModels fail with this error, or never answer ("hang", until aborted). */
  listModelsFailure: ConnectError | "hang" | undefined;
  /** Number of steps (events, delays) that ran, over all calls. */
  stepsRun = 0;

  constructor(script: Script = [start(), token("Hi"), finish("stop", { completionTokens: 1 })]) {
    this.script = script;
  }

  get lastCall(): GenerateCall | undefined {
    return this.calls.at(-1);
  }

  generate = (request: Parameters<Sidecar["generate"]>[0], options?: CallOptions): AsyncIterable<GenerateResponse> => {
    const message = create(GenerateRequestSchema, request);
    const signal = options?.signal;
    this.calls.push({ request: message, signal });
    const steps = typeof this.script === "function" ? this.script(message) : this.script;
    const fake = this;
    async function* run(): AsyncGenerator<GenerateResponse> {
      for (const step of steps) {
        if (signal?.aborted === true) throw canceled(signal);
        fake.stepsRun++;
        switch (step.kind) {
          case "delay":
            await sleep(step.ms, signal);
            break;
          case "fail":
            throw step.error;
          case "event":
            yield step.event;
            break;
        }
      }
      if (signal?.aborted === true) throw canceled(signal);
    }
    return run();
  };

  listModels = async (
    _request: Parameters<Sidecar["listModels"]>[0],
    options?: CallOptions,
  ): Promise<ListModelsResponse> => {
    const failure = this.listModelsFailure;
    if (failure === "hang") {
      const timeout = options?.timeoutMs;
      await new Promise<never>((_, reject) => {
        if (timeout !== undefined) {
          setTimeout(() => reject(new ConnectError("the operation timed out", Code.DeadlineExceeded)), timeout);
        }
        options?.signal?.addEventListener("abort", () => reject(new ConnectError("aborted", Code.Canceled)));
      });
    }
    if (failure instanceof ConnectError) throw failure;
    return create(ListModelsResponseSchema, { models: this.models });
  };

  /** What Tokenize answers: these token ids, or this error. */
  tokenizeResult: readonly number[] | ConnectError = new ConnectError("not scripted", Code.Unimplemented);
  /** Every Tokenize request. */
  readonly tokenizeCalls: TokenizeRequest[] = [];

  tokenize = async (request: Parameters<Sidecar["tokenize"]>[0]): Promise<TokenizeResponse> => {
    this.tokenizeCalls.push(create(TokenizeRequestSchema, request));
    if (this.tokenizeResult instanceof ConnectError) throw this.tokenizeResult;
    return create(TokenizeResponseSchema, { tokens: [...this.tokenizeResult] });
  };

  detokenize = async (): Promise<DetokenizeResponse> => {
    throw new ConnectError("not scripted", Code.Unimplemented);
  };

  /** What Embed answers: one vector per input (cycled), or this error. */
  embedResult: readonly (readonly number[])[] | ConnectError = new ConnectError("not scripted", Code.Unimplemented);
  /** Every Embed request. */
  readonly embedCalls: EmbedRequest[] = [];

  embed = async (request: Parameters<Sidecar["embed"]>[0]): Promise<EmbedResponse> => {
    const call = create(EmbedRequestSchema, request);
    this.embedCalls.push(call);
    const result = this.embedResult;
    if (result instanceof ConnectError) throw result;
    const embeddings = call.inputs.map((_, i) => ({ values: [...(result[i % result.length] ?? [])], tokens: 2 }));
    return create(EmbedResponseSchema, { embeddings, promptTokens: 2 * embeddings.length });
  };

  // biome-ignore lint/correctness/useYield: an unscripted resume fails on its first read, as a real stream would.
  resume = async function* (): AsyncGenerator<GenerateResponse> {
    throw new ConnectError("not scripted", Code.Unimplemented);
  };

  cancelStream = async (): Promise<CancelStreamResponse> => {
    throw new ConnectError("not scripted", Code.Unimplemented);
  };

  /** Every LoadModel request, and every UnloadModel request. */
  readonly loadCalls: LoadModelRequest[] = [];
  readonly unloadCalls: UnloadModelRequest[] = [];
  /** Makes LoadModel (and UnloadModel) fail with this error. */
  loadFailure: ConnectError | undefined;
  unloadFailure: ConnectError | undefined;

  /** The catalogued model `name` reaches (id or alias) set to `status`, as the answer; NOT_FOUND else. */
  #setStatus(name: string, status: ModelStatus): ModelInfo {
    const found = this.models.find((m) => m.id === name || m.aliases.includes(name));
    if (found === undefined) throw new ConnectError(`model "${name}" is not in the catalogue`, Code.NotFound);
    const loaded = status === ModelStatus.LOADED;
    const updated = create(ModelInfoSchema, {
      ...found,
      status,
      loadProgress: 0,
      failure: "",
      expiresAt: 0n,
      memoryBytes: loaded ? found.memoryBytes : 0n,
    });
    this.models = this.models.map((m) => (m === found ? updated : m));
    return updated;
  }

  loadModel = async (request: Parameters<Sidecar["loadModel"]>[0]): Promise<ModelInfo> => {
    const call = create(LoadModelRequestSchema, request);
    this.loadCalls.push(call);
    if (this.loadFailure !== undefined) throw this.loadFailure;
    return this.#setStatus(call.model, ModelStatus.LOADED);
  };

  unloadModel = async (request: Parameters<Sidecar["unloadModel"]>[0]): Promise<ModelInfo> => {
    const call = create(UnloadModelRequestSchema, request);
    this.unloadCalls.push(call);
    if (this.unloadFailure !== undefined) throw this.unloadFailure;
    return this.#setStatus(call.model, ModelStatus.AVAILABLE);
  };

  // Pulls, deletes and header reads are proven on the real sidecar (test/e2e/ollama-pull.test.ts).
  // biome-ignore lint/correctness/useYield: a refusal before the first event
  pullModel = async function* (): AsyncGenerator<PullProgress> {
    throw new ConnectError("not scripted", Code.Unimplemented);
  };
  deleteModel = async (): Promise<ModelInfo> => {
    throw new ConnectError("not scripted", Code.Unimplemented);
  };
  describeModel = async (): Promise<ModelDescription> => {
    throw new ConnectError("not scripted", Code.Unimplemented);
  };
  // Slots is proven on the real sidecar (test/e2e/operator-endpoints.test.ts).
  slots: Sidecar["slots"] = async () => {
    throw new ConnectError("not scripted", Code.Unimplemented);
  };

  // LoRA adapters are proven on the real sidecar (test/e2e/lora.test.ts).
  setLoraScale = async (): Promise<ModelInfo> => {
    throw new ConnectError("not scripted", Code.Unimplemented);
  };

  /** What Rank answers: one score per document (cycled), 3 prompt tokens each, or this error. */
  rankResult: readonly number[] | ConnectError = new ConnectError("not scripted", Code.Unimplemented);
  /** Every Rank request, and the signal it came with. */
  readonly rankCalls: { readonly request: RankRequest; readonly signal: AbortSignal | undefined }[] = [];

  rank = async (request: Parameters<Sidecar["rank"]>[0], options?: CallOptions): Promise<RankResponse> => {
    const call = create(RankRequestSchema, request);
    this.rankCalls.push({ request: call, signal: options?.signal });
    const result = this.rankResult;
    if (result instanceof ConnectError) throw result;
    const scores = call.documents.map((_, i) => result[i % result.length] ?? 0);
    return create(RankResponseSchema, { scores, promptTokens: 3 * scores.length });
  };
}

// ---- tool-call and reasoning scripts --------------------------------------------

/**
 * A tool call as the sidecar streams it: a token that begins the call (`id`, `name`, empty
 * arguments), then one token per argument fragment. The call's own syntax is in no text.
 */
export function toolCall(index: number, id: string, name: string, fragments: readonly string[]): Step[] {
  return [
    token("", { piece: `{"name": "${name}", "arguments": `, toolCalls: [{ index, id, name }] }),
    ...fragments.map((fragment) => token("", { piece: fragment, toolCalls: [{ index, arguments: fragment }] })),
  ];
}

/** Reasoning tokens, one per piece (the segment's markers appear in no text). */
export function reasoning(...pieces: readonly string[]): Step[] {
  return pieces.map((piece) => token("", { piece, reasoning: piece }));
}
