import type { ServiceImpl } from "@connectrpc/connect";
import type { Token } from "node-llama-cpp";
import { InferenceService, type TokenizeRequest } from "../proto/gen/inference/v1/inference_pb.js";
import { invalidArgument, notFound, unavailable } from "./engine/errors.js";
import { FIRST_TOKEN_POSITION, generate } from "./engine/generate.js";
import { withHeartbeats } from "./engine/heartbeat.js";
import { readAhead } from "./engine/read-ahead.js";
import type { EngineMetrics } from "./engine/metrics.js";
import type { LoadedModel } from "./engine/model.js";
import { renderChat, tokenizeRaw } from "./engine/prompt.js";

export interface ServiceState {
  readonly models: readonly LoadedModel[];
  readonly metrics: EngineMetrics;
  /** True once the sidecar drains: new work is refused with UNAVAILABLE. */
  readonly draining: () => boolean;
  /** Silence after which a call gets a heartbeat event; 0: none. */
  readonly heartbeatMs: number;
}

/**
 * The one implementation of inference.v1.InferenceService. Native gRPC (grpc-js) and gRPC-Web
 * (the edge) both call it; `context.signal` aborts when the caller cancels or disconnects.
 */
export function createInferenceService(state: ServiceState): ServiceImpl<typeof InferenceService> {
  const pick = (name: string): LoadedModel => {
    if (state.draining()) throw unavailable("the sidecar is shutting down");
    const [only] = state.models;
    if (state.models.length === 1 && only !== undefined) return only;
    const found = state.models.find((m) => m.id === name) ?? (name === "" ? only : undefined);
    if (found === undefined) {
      const known = state.models.map((m) => m.id).join(", ");
      throw notFound(`model "${name}" is not served here (served: ${known})`);
    }
    return found;
  };

  return {
    generate(request, context) {
      const events = generate(pick(request.model), request, context.signal, state.metrics);
      const ahead = readAhead(events, { atOnce: (position) => position === FIRST_TOKEN_POSITION });
      return withHeartbeats(ahead, state.heartbeatMs, () => ({ event: { case: "heartbeat", value: {} } }));
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
    listModels() {
      // A draining sidecar is not serving: the edge's health check reads this refusal.
      if (state.draining()) throw unavailable("the sidecar is shutting down");
      return {
        models: state.models.map((m) => ({
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
          active: m.pool.busy,
          queued: m.pool.queued,
        })),
      };
    },
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
