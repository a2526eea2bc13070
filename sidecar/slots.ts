// What the Slots RPC says: every sequence of every loaded model (busy or idle, its tokens, the request and client
// using it, its decode rate) and the states the KV cache tier keeps. Read when asked; nothing is kept for it but
// what a request records when it takes a sequence (engine/decode/slot-uses.ts).
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { SlotsResponseSchema } from "../proto/gen/inference/v1/inference_pb.js";
import { useOf } from "./engine/decode/slot-uses.js";
import { sequenceIdOf } from "./engine/llama/llama-internals.js";
import type { LoadedModel } from "./engine/llama/model.js";

type SlotsResponse = MessageInitShape<typeof SlotsResponseSchema>;
type Slot = NonNullable<SlotsResponse["slots"]>[number];

/** One model's sequences, by id. */
function sequencesOf(loaded: LoadedModel, now: number): Slot[] {
  return loaded.pool
    .all()
    .map((sequence) => {
      const base = {
        id: sequenceIdOf(sequence),
        model: loaded.id,
        busy: loaded.pool.isBusy(sequence),
        tokens: sequence.nextTokenIndex,
        contextSize: loaded.contextSize,
      };
      const use = base.busy ? useOf(sequence) : undefined;
      if (use === undefined) return base;
      const firstTokenAt = use.state?.firstTokenAt;
      const generated = use.plan.generated.length;
      const seconds = firstTokenAt === undefined ? 0 : (now - firstTokenAt) / 1000;
      return {
        ...base,
        requestId: use.requestId,
        clientId: use.clientId,
        promptTokens: use.plan.prompt.tokens.length,
        generatedTokens: generated,
        decodeTokensPerSecond: seconds > 0 ? generated / seconds : 0,
        processingPrompt: firstTokenAt === undefined,
      };
    })
    .sort((a, b) => a.id - b.id);
}

/** The Slots answer for `models` (those loaded, in catalogue order). */
export function slotsOf(models: readonly LoadedModel[]): SlotsResponse {
  const now = performance.now();
  const saved = models.flatMap((loaded) =>
    (loaded.kvTier?.saved() ?? []).map((state) => ({
      model: loaded.id,
      tokens: state.tokens,
      bytes: BigInt(state.bytes),
      lastUsedMs: BigInt(Math.round(state.usedAt)),
    })),
  );
  saved.sort((a, b) => Number(b.lastUsedMs - a.lastUsedMs));
  return { slots: models.flatMap((loaded) => sequencesOf(loaded, now)), saved };
}
