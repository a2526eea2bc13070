// What each busy sequence serves, for the Slots RPC: the request using it and how far it is. Set when a request takes
// a sequence and cleared when it gives it back; the decode loop writes nothing here per token (the plan's own arrays
// and the decode state are read when Slots is called).
import type { LlamaContextSequence } from "node-llama-cpp";
import type { GenerateRequest } from "../../../proto/gen/inference/v1/inference_pb.js";
import type { GenerationPlan } from "./generation-plan.js";

/** The longest request id kept (GenerateRequest.request_id). */
export const MAX_REQUEST_ID_CHARS = 128;

export interface SlotUse {
  readonly requestId: string;
  readonly clientId: string;
  readonly plan: GenerationPlan;
  /** The decode state once the request has one: when its first token came. */
  state?: { readonly firstTokenAt: number | undefined };
}

const uses = new WeakMap<LlamaContextSequence, SlotUse>();

/** Records that `request` holds `sequence`; returns the record (its `state` is set once the request has one). */
export function beginUse(sequence: LlamaContextSequence, request: GenerateRequest, plan: GenerationPlan): SlotUse {
  const use: SlotUse = {
    requestId: request.requestId.slice(0, MAX_REQUEST_ID_CHARS),
    clientId: request.clientId,
    plan,
  };
  uses.set(sequence, use);
  return use;
}

/** `sequence` is given back. */
export function endUse(sequence: LlamaContextSequence): void {
  uses.delete(sequence);
}

/** What holds `sequence` now, if a request does. */
export function useOf(sequence: LlamaContextSequence): SlotUse | undefined {
  return uses.get(sequence);
}
