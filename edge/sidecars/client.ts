// The pool seen as one sidecar, for the calls that need no affinity: Tokenize and Detokenize go to
// a sidecar that serves the named model (the next one when it is unreachable or busy); ListModels
// is the union of every reachable sidecar's models (the first report of an id wins). With one
// sidecar every call is that sidecar's own.
import { Code, ConnectError, type CallOptions } from "@connectrpc/connect";
import type { ModelInfo } from "../../proto/gen/inference/v1/inference_pb.js";
import { ServiceUnavailableError } from "../base/errors.js";
import type { Sidecar } from "./connection.js";
import { failoverReason, type SidecarPool } from "./pool.js";
import { locateStream } from "./streams.js";

async function tryInTurn<T>(pool: SidecarPool, model: string, call: (sidecar: Sidecar) => Promise<T>): Promise<T> {
  let last: unknown;
  for (const state of await pool.candidates(model)) {
    try {
      return await call(state.client);
    } catch (error) {
      const reason = failoverReason(error);
      if (reason === undefined || !pool.several) throw error;
      if (reason === "unavailable") pool.markDown(state, error);
      last = error;
    }
  }
  throw last;
}

/** Every model of the sidecars that are up, each id once. */
export async function unionOfModels(pool: SidecarPool): Promise<ModelInfo[]> {
  await pool.refresh();
  const up = pool.states.filter((s) => !s.down);
  if (up.length === 0) {
    const why = pool.states.map((s) => s.lastError).find((m) => m !== undefined) ?? "no report";
    throw new ServiceUnavailableError(`No inference sidecar is reachable (last error: ${why}).`, { code: "service_unavailable" });
  }
  const byId = new Map<string, ModelInfo>();
  for (const model of up.flatMap((s) => s.models)) if (!byId.has(model.id)) byId.set(model.id, model);
  return [...byId.values()];
}

export function routedClient(pool: SidecarPool): Sidecar {
  const [only] = pool.states;
  if (!pool.several && only !== undefined) return only.client;
  return {
    async *generate(request, options?: CallOptions) {
      const [first] = await pool.candidates(request.model ?? "");
      if (first === undefined) return;
      yield* first.client.generate(request, options);
    },
    tokenize: (request, options) => tryInTurn(pool, request.model ?? "", (s) => s.tokenize(request, options)),
    embed: (request, options) => tryInTurn(pool, request.model ?? "", (s) => s.embed(request, options)),
    // Streams are found by their id, which names their sidecar (streams.ts, locateStream).
    async *resume(request, options?: CallOptions) {
      const found = await locateStream(pool, request.streamId ?? "");
      if (found === undefined) throw new ConnectError(`stream "${request.streamId ?? ""}" is unknown or has expired`, Code.NotFound);
      yield* found.client.resume({ ...request, streamId: found.streamId }, options);
    },
    cancelStream: async (request, options) => {
      const found = await locateStream(pool, request.streamId ?? "");
      if (found === undefined) throw new ConnectError(`stream "${request.streamId ?? ""}" is unknown or has expired`, Code.NotFound);
      return found.client.cancelStream({ ...request, streamId: found.streamId }, options);
    },
    detokenize: (request, options) => tryInTurn(pool, request.model ?? "", (s) => s.detokenize(request, options)),
    listModels: async () => ({ $typeName: "inference.v1.ListModelsResponse", models: await unionOfModels(pool) }),
    loadModel: (request, options) => tryInTurn(pool, request.model ?? "", (s) => s.loadModel(request, options)),
    unloadModel: (request, options) => tryInTurn(pool, request.model ?? "", (s) => s.unloadModel(request, options)),
    rank: (request, options) => tryInTurn(pool, request.model ?? "", (s) => s.rank(request, options)),
  };
}
