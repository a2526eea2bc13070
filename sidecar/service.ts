// The one implementation of inference.v1.InferenceService, called by native gRPC and gRPC-Web.
import type { ServiceImpl } from "@connectrpc/connect";
import type { Token } from "node-llama-cpp";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { InferenceService, ModelInfoSchema, TokenizeRequest } from "../proto/gen/inference/v1/inference_pb.js";
import type { ResumableStreams } from "./engine/streams/resumable-streams.js";
import { generateResumable } from "./engine/streams/resumable.js";
import { invalidArgument, notFound, unavailable, unimplemented } from "./engine/errors.js";
import { FIRST_TOKEN_POSITION, generate, type GenerateEvent } from "./engine/decode/generate.js";
import { withHeartbeats } from "./engine/streams/heartbeat.js";
import { readAhead } from "./engine/streams/read-ahead.js";
import type { EngineMetrics } from "./engine/metrics.js";
import type { LoadedModel } from "./engine/llama/model.js";
import { renderChat, tokenizeRaw } from "./engine/chat/prompt.js";

export interface ServiceState {
  readonly models: readonly LoadedModel[];
  readonly metrics: EngineMetrics;
  /** True once the sidecar drains: new work is refused with UNAVAILABLE. */
  readonly draining: () => boolean;
  /** Silence after which a call gets a heartbeat event; 0: none. */
  readonly heartbeatMs: number;
  /** Resumable generations (GenerateRequest.resumable, Resume, CancelStream). */
  readonly streams: ResumableStreams;
}

/** The model a call names (with one served, any name reaches it); refused while draining. */
function pickModel(state: ServiceState, name: string): LoadedModel {
  if (state.draining()) throw unavailable("the sidecar is shutting down");
  const [only] = state.models;
  if (state.models.length === 1 && only !== undefined) return only;
  const found = state.models.find((m) => m.id === name) ?? (name === "" ? only : undefined);
  if (found === undefined) {
    const known = state.models.map((m) => m.id).join(", ");
    throw notFound(`model "${name}" is not served here (served: ${known})`);
  }
  return found;
}

/**
 * The one implementation of inference.v1.InferenceService. Native gRPC (grpc-js) and gRPC-Web
 * (the edge) both call it; `context.signal` aborts when the caller cancels or disconnects.
 */
export function createInferenceService(state: ServiceState): ServiceImpl<typeof InferenceService> {
  const pick = (name: string): LoadedModel => pickModel(state, name);

  const beating = (events: AsyncGenerator<GenerateEvent, void, undefined>) =>
    withHeartbeats(events, state.heartbeatMs, (): GenerateEvent => ({ event: { case: "heartbeat", value: {} } }));

  return {
    generate(request, context) {
      const loaded = pick(request.model);
      if (loaded.kind === "rank") throw invalidArgument(`model "${loaded.id}" is a reranking model: it ranks documents, it does not generate text`);
      if (request.resumable) return beating(generateResumable(loaded, request, context.signal, state.streams, state.metrics));
      const events = generate(loaded, request, context.signal, state.metrics);
      return beating(readAhead(events, { atOnce: (position) => position === FIRST_TOKEN_POSITION }));
    },
    resume(request, context) {
      if (state.draining()) throw unavailable("the sidecar is shutting down");
      const events = state.streams.read(request.streamId, request.clientId, request.after, context.signal, request.snapshot);
      if (events === undefined) throw notFound(`stream "${request.streamId}" is unknown or has expired`);
      return beating(events);
    },
    cancelStream(request) {
      const cancelled = state.streams.cancel(request.streamId, request.clientId);
      if (cancelled === undefined) throw notFound(`stream "${request.streamId}" is unknown or has expired`);
      return { cancelled };
    },
    tokenize(request) {
      const loaded = pick(request.model);
      const tokens = tokensOf(loaded, request);
      return { tokens, pieces: request.withPieces ? tokens.map((t) => loaded.tokenBytes.of(t as Token)) : [] };
    },
    detokenize(request) {
      const loaded = pick(request.model);
      const bad = request.tokens.find((t) => loaded.vocabularySize > 0 && t >= loaded.vocabularySize);
      if (bad !== undefined) throw invalidArgument(`token ${bad} is not in the model's vocabulary`);
      return { text: loaded.model.detokenize(request.tokens as never, false) };
    },
    async embed(request, context) {
      const loaded = pick(request.model);
      if (request.inputs.length === 0) throw invalidArgument("embed needs at least one input");
      const dimensions = loaded.embedder.dimensions;
      if (request.dimensions !== 0 && request.dimensions !== dimensions) {
        throw invalidArgument(`this model's embeddings have ${dimensions} dimensions; ${request.dimensions} cannot be made from them`);
      }
      const embeddings = await loaded.embedder.embed(request.inputs, context.signal);
      return { embeddings, promptTokens: embeddings.reduce((sum, e) => sum + e.tokens, 0) };
    },
    listModels() {
      // A draining sidecar is not serving: the edge's health check reads this refusal.
      if (state.draining()) throw unavailable("the sidecar is shutting down");
      return { models: state.models.map(modelInfo) };
    },
    loadModel() {
      throw unimplemented("LoadModel is not served yet");
    },
    unloadModel() {
      throw unimplemented("UnloadModel is not served yet");
    },
    async rank(request, context) {
      const { scores, tokens } = await pick(request.model).ranker.rank(request.query, request.documents, context.signal);
      return { scores, promptTokens: tokens };
    },
  };
}

/** What ListModels says of one model (proto: ModelInfo). */
function modelInfo(m: LoadedModel): MessageInitShape<typeof ModelInfoSchema> {
  return {
    id: m.id,
    created: BigInt(m.created),
    contextSize: m.contextSize,
    sequences: m.pool.size,
    vocabularySize: m.vocabularySize,
    chatTemplate: m.chatWrapper.wrapperName,
    architecture: String(m.model.fileInfo.metadata.general.architecture ?? ""),
    engineBuild: m.llama.buildType,
    maxQueue: m.pool.limits.maxQueue,
    queueTimeoutMs: m.pool.limits.queueTimeoutMs,
    embeddingDimensions: m.embedder.dimensions,
    embeddingContextSize: m.embedder.contextSize,
    kind: m.kind,
    gpu: m.gpu.type,
    gpuDevices: [...m.gpu.devices],
    vramBytes: BigInt(m.gpu.vramBytes),
    gpuLayers: m.gpu.layersOffloaded,
    modelLayers: m.gpu.layers,
    active: m.pool.busy,
    queued: m.pool.queued,
  };
}

/** The tokens a Tokenize request asks for (TokenizeRequest: text as a prompt, or a rendered chat). */
function tokensOf(loaded: LoadedModel, request: TokenizeRequest): number[] {
  switch (request.input.case) {
    case "text":
      return request.addSpecial === false ? loaded.model.tokenize(request.input.value, false) : tokenizeRaw(loaded, request.input.value);
    case "chat":
      return renderChat(loaded, request.input.value).tokens;
    case undefined:
      throw invalidArgument("tokenize needs text or chat messages");
  }
}
