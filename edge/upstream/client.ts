// The pool seen as one sidecar, for the calls that need no affinity: Tokenize, Detokenize, Embed and
// LoadModel (and DescribeModel) go to the first sidecar the pool picks for the named model (the next one when it
// is unreachable, busy or could not load it); UnloadModel and DeleteModel go to every sidecar whose catalogue holds
// the model, PullModel to every sidecar up (pulls.ts); ListModels merges every reachable sidecar's catalogue
// (catalogue.ts); SetLoraScale goes to every sidecar that has the adapter. With one sidecar every call is that
// sidecar's own.
import { Code, ConnectError, type CallOptions } from "@connectrpc/connect";
import type { ModelInfo } from "../../proto/gen/inference/v1/inference_pb.js";
import { ServiceUnavailableError } from "../base/errors.js";
import { mergeCatalogues } from "./catalogue.js";
import type { Sidecar } from "./connection.js";
import { failoverReason, type SidecarPool } from "./pool.js";
import type { SidecarState } from "./sidecar-state.js";
import { pullEverywhere } from "./pulls.js";
import { locateStream } from "./streams.js";

async function tryInTurn<T>(
  pool: SidecarPool,
  model: string,
  call: (sidecar: Sidecar, state: SidecarState) => Promise<T>,
): Promise<T> {
  let last: unknown;
  for (const state of await pool.candidates(model)) {
    try {
      return await call(state.client, state);
    } catch (error) {
      const reason = failoverReason(error);
      if (reason === undefined || !pool.several) throw error;
      if (reason === "unavailable") pool.markDown(state, error);
      last = error;
    }
  }
  throw last;
}

/** The sidecars up after a refresh; ServiceUnavailableError when there is none. */
export async function upSidecars(pool: SidecarPool): Promise<SidecarState[]> {
  await pool.refresh();
  const up = pool.states.filter((s) => !s.down);
  if (up.length === 0) {
    const why = pool.states.map((s) => s.lastError).find((m) => m !== undefined) ?? "no report";
    throw new ServiceUnavailableError(`No inference sidecar is reachable (last error: ${why}).`, {
      code: "service_unavailable",
    });
  }
  return up;
}

/** Every model of the sidecars that are up, each id once with its best status. */
export async function unionOfModels(pool: SidecarPool): Promise<ModelInfo[]> {
  return mergeCatalogues((await upSidecars(pool)).map((s) => s.models));
}

/** A LoadModel or UnloadModel answer, also taken into the sidecar's report (routing sees it at once). */
async function noted(state: SidecarState, answer: Promise<ModelInfo>): Promise<ModelInfo> {
  const model = await answer;
  state.update(model);
  return model;
}

/**
 * A call on every sidecar up whose catalogue holds the model (UnloadModel, DeleteModel: each may have it): the model
 * as the merged list would show it after. All failed: the first failure.
 */
async function onEvery(
  pool: SidecarPool,
  model: string,
  call: (state: SidecarState) => Promise<ModelInfo>,
): Promise<ModelInfo> {
  const states = await pool.candidates(model);
  const settled = await Promise.allSettled(states.map(call));
  const failures = settled.flatMap((result, i) =>
    result.status === "rejected" ? [{ state: states[i], error: result.reason as unknown }] : [],
  );
  for (const { state, error } of failures)
    if (state !== undefined && failoverReason(error) === "unavailable") pool.markDown(state, error);
  const [merged] = mergeCatalogues(
    settled.flatMap((result) => (result.status === "fulfilled" ? [[result.value]] : [])),
  );
  if (merged !== undefined) return merged;
  throw failures[0]?.error;
}

/** DeleteModel on one sidecar: the model leaves its report at once. */
async function deleted(state: SidecarState, answer: Promise<ModelInfo>): Promise<ModelInfo> {
  const model = await answer;
  state.removed(model.id);
  return model;
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
      if (found === undefined)
        throw new ConnectError(`stream "${request.streamId ?? ""}" is unknown or has expired`, Code.NotFound);
      yield* found.client.resume({ ...request, streamId: found.streamId }, options);
    },
    cancelStream: async (request, options) => {
      const found = await locateStream(pool, request.streamId ?? "");
      if (found === undefined)
        throw new ConnectError(`stream "${request.streamId ?? ""}" is unknown or has expired`, Code.NotFound);
      return found.client.cancelStream({ ...request, streamId: found.streamId }, options);
    },
    detokenize: (request, options) => tryInTurn(pool, request.model ?? "", (s) => s.detokenize(request, options)),
    listModels: async () => ({ $typeName: "inference.v1.ListModelsResponse", models: await unionOfModels(pool) }),
    loadModel: (request, options) =>
      tryInTurn(pool, request.model ?? "", (s, state) => noted(state, s.loadModel(request, options))),
    unloadModel: (request, options) =>
      onEvery(pool, request.model ?? "", (state) => noted(state, state.client.unloadModel(request, options))),
    deleteModel: (request, options) =>
      onEvery(pool, request.model ?? "", (state) => deleted(state, state.client.deleteModel(request, options))),
    pullModel: (request, options) => pullEverywhere(pool, request, options),
    describeModel: (request, options) => tryInTurn(pool, request.model ?? "", (s) => s.describeModel(request, options)),
    rank: (request, options) => tryInTurn(pool, request.model ?? "", (s) => s.rank(request, options)),
    slots: async (request, options) => {
      const answers = await Promise.all((await upSidecars(pool)).map((s) => s.client.slots(request, options)));
      return {
        $typeName: "inference.v1.SlotsResponse",
        slots: answers.flatMap((answer) => answer.slots),
        saved: answers.flatMap((answer) => answer.saved),
      };
    },
    // Every sidecar that serves the adapter gets its scale.
    setLoraScale: (request, options) =>
      onEvery(pool, request.model ?? "", (state) => noted(state, state.client.setLoraScale(request, options))),
  };
}
