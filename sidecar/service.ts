// The one implementation of inference.v1.InferenceService, called by native gRPC and gRPC-Web.
import type { ServiceImpl } from "@connectrpc/connect";
import type { Token } from "node-llama-cpp";
import {
  type Chat,
  type EmbedRequest,
  type GenerateRequest,
  type InferenceService,
  Priority,
  type TokenizeRequest,
} from "../proto/gen/inference/v1/inference_pb.js";
import type { ResumableStreams } from "./engine/streams/resumable-streams.js";
import { generateResumable } from "./engine/streams/resumable-generation.js";
import { onEnd } from "./engine/streams/on-end.js";
import { invalidArgument, notFound, unavailable } from "./engine/engine-errors.js";
import { generate, sentAtOnce, type GenerateEvent } from "./engine/decode/generate.js";
import { withHeartbeats } from "./engine/streams/heartbeat.js";
import { readAhead } from "./engine/streams/read-ahead.js";
import type { EngineMetrics } from "./engine/engine-metrics.js";
import type { LoadedModel } from "./engine/llama/model.js";
import { renderChat, tokenizeRaw } from "./engine/chat/prompt.js";
import { prepareMedia } from "./engine/chat/media-prompt.js";
import type { ModelFiles } from "./catalogue/model-files.js";
import type { ModelRegistry } from "./catalogue/registry.js";
import { slotsOf } from "./slots.js";
import { modelInfo, modelInfoNamed, modelInfos } from "./model-info.js";
import { observed, type Observer } from "./trace/observe.js";

export interface ServiceState {
  /** The catalogue's models: each call holds the one it names (a lease) while it uses it. */
  readonly registry: ModelRegistry;
  readonly metrics: EngineMetrics;
  /** True once the sidecar drains: new work is refused with UNAVAILABLE. */
  readonly draining: () => boolean;
  /** Silence after which a call gets a heartbeat event; 0: none. */
  readonly heartbeatMs: number;
  /** Resumable generations (GenerateRequest.resumable, Resume, CancelStream). */
  readonly streams: ResumableStreams;
  /** The GenAI server metrics and, with traces on, the tracer (trace/). */
  readonly observer: Observer;
  /** Models pulled, deleted and described while the sidecar runs. */
  readonly files: ModelFiles;
}

/** What a call that uses a model names: the model, its caller's signal, its keep_alive. */
interface ModelCall {
  readonly name: string;
  readonly signal: AbortSignal;
  readonly keepAliveSeconds?: number | undefined;
  /** A PRIORITY_BATCH call (EmbedRequest.priority). */
  readonly batch?: boolean | undefined;
}

/**
 * The one way a call becomes a ModelCall: its model, its caller's signal, and its keep_alive and priority where the
 * RPC has them.
 */
function callOf(
  request: {
    readonly model: string;
    readonly keepAliveSeconds?: number | undefined;
    readonly priority?: Priority | undefined;
  },
  signal: AbortSignal,
): ModelCall {
  return {
    name: request.model,
    signal,
    keepAliveSeconds: request.keepAliveSeconds,
    batch: request.priority === Priority.BATCH,
  };
}

/**
 * Runs `use` on the model a call names (loaded first if it is not: catalogue/registry.ts), holding
 * it until `use` settles. Refused while draining.
 */
async function withModel<T>(
  state: ServiceState,
  call: ModelCall,
  use: (loaded: LoadedModel) => T | Promise<T>,
): Promise<T> {
  if (state.draining()) throw unavailable("the sidecar is shutting down");
  const lease = await state.registry.acquire(call.name, call);
  try {
    return await use(lease.model);
  } finally {
    lease.release();
  }
}

/** A generation on the model it names, held until the generation ends (not its reader: a resumable one outlives it). */
async function* generation(
  state: ServiceState,
  request: GenerateRequest,
  signal: AbortSignal,
): AsyncGenerator<GenerateEvent, void, undefined> {
  if (state.draining()) throw unavailable("the sidecar is shutting down");
  const lease = await state.registry.acquire(request.model, callOf(request, signal));
  if (lease.model.kind === "rank") {
    lease.release();
    throw invalidArgument(
      `model "${lease.model.id}" is a reranking model: it ranks documents, it does not generate text`,
    );
  }
  if (request.resumable) {
    yield* generateResumable(lease.model, request, signal, state.streams, state.metrics, lease.release);
    return;
  }
  const events = onEnd(generate(lease.model, request, signal, state.metrics), lease.release);
  yield* readAhead(events, { atOnce: sentAtOnce });
}

/**
 * The one implementation of inference.v1.InferenceService. Native gRPC (grpc-js) and gRPC-Web
 * (the edge) both call it; `context.signal` aborts when the caller cancels or disconnects.
 */
export function createInferenceService(state: ServiceState): ServiceImpl<typeof InferenceService> {
  const beating = (events: AsyncGenerator<GenerateEvent, void, undefined>) =>
    withHeartbeats(events, state.heartbeatMs, (): GenerateEvent => ({ event: { case: "heartbeat", value: {} } }));

  return {
    generate(request, context) {
      // Heartbeats go on while the model loads: the first event comes after the load.
      return observed(
        beating(generation(state, request, context.signal)),
        request,
        context.requestHeader,
        state.observer,
      );
    },
    resume(request, context) {
      if (state.draining()) throw unavailable("the sidecar is shutting down");
      const events = state.streams.read(
        request.streamId,
        request.clientId,
        request.after,
        context.signal,
        request.snapshot,
      );
      if (events === undefined) throw notFound(`stream "${request.streamId}" is unknown or has expired`);
      return beating(events);
    },
    cancelStream(request) {
      const cancelled = state.streams.cancel(request.streamId, request.clientId);
      if (cancelled === undefined) throw notFound(`stream "${request.streamId}" is unknown or has expired`);
      return { cancelled };
    },
    tokenize(request, context) {
      return withModel(state, callOf(request, context.signal), (loaded) => tokenized(loaded, request));
    },
    detokenize(request, context) {
      return withModel(state, callOf(request, context.signal), (loaded) => {
        const bad = request.tokens.find((t) => loaded.vocabularySize > 0 && t >= loaded.vocabularySize);
        if (bad !== undefined) throw invalidArgument(`token ${bad} is not in the model's vocabulary`);
        return { text: loaded.model.detokenize(request.tokens as never, false) };
      });
    },
    async embed(request, context) {
      if (request.inputs.length === 0) throw invalidArgument("embed needs at least one input");
      return withModel(state, callOf(request, context.signal), (loaded) => embedWith(loaded, request, context.signal));
    },
    ...catalogueCalls(state),
    rank(request, context) {
      return withModel(state, callOf(request, context.signal), async (loaded) => {
        const { scores, tokens } = await loaded.ranker.rank(request.query, request.documents, context.signal);
        return { scores, promptTokens: tokens };
      });
    },
  };
}

/** Slots: every loaded model's sequences and states, or the one model `name` names (NOT_FOUND when none). */
function slotsNamed(state: ServiceState, name: string) {
  const loaded = state.registry.loaded();
  if (name === "") return slotsOf(loaded);
  const id = state.registry.view(name).entry.name;
  return slotsOf(loaded.filter((model) => model.id === id));
}

/** One Embed call on its model: the vectors at the model's own length (no other length can be made). */
async function embedWith(loaded: LoadedModel, request: EmbedRequest, signal: AbortSignal) {
  const dimensions = loaded.embedder.dimensions;
  if (request.dimensions !== 0 && request.dimensions !== dimensions) {
    throw invalidArgument(
      `this model's embeddings have ${dimensions} dimensions; ${request.dimensions} cannot be made from them`,
    );
  }
  const embeddings = await loaded.embedder.embed(request.inputs, signal, request.priority === Priority.BATCH);
  return { embeddings, promptTokens: embeddings.reduce((sum, e) => sum + e.tokens, 0) };
}

/**
 * Tokenize's answer: the tokens, and their bytes and text when asked. A medium's positions are tokens above the
 * vocabulary (media-prompt.ts): no bytes, no text.
 */
async function tokenized(loaded: LoadedModel, request: TokenizeRequest) {
  const tokens = await tokensOf(loaded, request);
  const text = (t: number): boolean => t < loaded.vocabularySize;
  return {
    tokens,
    pieces: request.withPieces ? tokens.map((t) => (text(t) ? piece(loaded, t as Token) : new Uint8Array())) : [],
    text: request.withText ? loaded.model.detokenize(tokens.filter(text) as Token[], true) : "",
  };
}

/**
 * A token's bytes; a control token's (which a reply never shows) its text, as llama-server's `with_pieces` gives it.
 */
async function chatTokens(loaded: LoadedModel, chat: Chat): Promise<number[]> {
  const media = await prepareMedia(loaded, chat);
  try {
    return renderChat(loaded, chat, media).tokens;
  } finally {
    media?.dispose();
  }
}

function piece(loaded: LoadedModel, token: Token): Uint8Array {
  const bytes = loaded.tokenBytes.of(token);
  return bytes.length > 0 ? bytes : new TextEncoder().encode(loaded.model.detokenize([token], true));
}

/** The tokens a Tokenize request asks for (TokenizeRequest: text as a prompt, or a rendered chat, media counted). */
async function tokensOf(loaded: LoadedModel, request: TokenizeRequest): Promise<number[]> {
  switch (request.input.case) {
    case "text":
      return tokenizeRaw(loaded, request.input.value, {
        addSpecial: request.addSpecial !== false,
        special: request.parseSpecial === true,
      });
    case "chat":
      return chatTokens(loaded, request.input.value);
    case undefined:
      throw invalidArgument("tokenize needs text or chat messages");
  }
}

type CatalogueCall =
  | "listModels"
  | "slots"
  | "loadModel"
  | "unloadModel"
  | "setLoraScale"
  | "pullModel"
  | "deleteModel"
  | "describeModel";

/** The calls on the catalogue: what it holds, loading and unloading, adapters' scales, pulls and deletions. */
function catalogueCalls(state: ServiceState): Pick<ServiceImpl<typeof InferenceService>, CatalogueCall> {
  return {
    listModels() {
      // A draining sidecar is not serving: the edge's health check reads this refusal.
      if (state.draining()) throw unavailable("the sidecar is shutting down");
      return { models: state.registry.list().flatMap((view) => modelInfos(view, state.registry.created)) };
    },
    slots: (request) => slotsNamed(state, request.model),
    async loadModel(request, context) {
      const view = await state.registry.load(request.model, callOf(request, context.signal));
      return modelInfoNamed(view, request.model, state.registry.created);
    },
    async unloadModel(request) {
      return modelInfoNamed(await state.registry.unload(request.model), request.model, state.registry.created);
    },
    async setLoraScale({ model, scale }) {
      if (!Number.isFinite(scale)) throw invalidArgument("scale must be a finite number");
      return modelInfoNamed(await state.registry.setLoraScale(model, scale), model, state.registry.created);
    },
    async *pullModel(request, context) {
      if (state.draining()) throw unavailable("the sidecar is shutting down");
      for await (const step of state.files.pull(request.source, request.alias, context.signal)) {
        const model = step.model === undefined ? {} : { model: modelInfo(step.model, state.registry.created) };
        yield { totalBytes: BigInt(step.total), completedBytes: BigInt(step.completed), ...model };
      }
    },
    async deleteModel(request) {
      return modelInfo(await state.files.delete(request.model), state.registry.created);
    },
    async describeModel(request) {
      return state.files.describe(request.model, request.verbose);
    },
  };
}
