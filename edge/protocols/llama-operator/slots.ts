// GET /slots: llama-server's array of slots, one entry per sequence of every loaded model on every sidecar up, with
// this server's additions (the model, the sidecar, the request and key using it, its decode rate); GET
// /slots?saved=true: the states the sidecars' KV cache tiers keep. Admin keys only (core/admin.ts).
// docs/contract.md, "Operator endpoints".
import type { SavedState, SequenceSlot, SlotsResponse } from "../../../proto/gen/inference/v1/inference_pb.js";
import { ServiceUnavailableError } from "../../base/errors.js";
import { requireAdmin } from "../../core/admin.js";
import { jsonResponse } from "../../core/answers.js";
import type { AppContext } from "../../core/context.js";
import { upSidecars } from "../../upstream/client.js";

/** One sidecar's answer, by its public id. */
interface SidecarSlots {
  readonly sidecar: string;
  readonly answer: SlotsResponse;
}

/** A sequence in llama-server's slot shape; `id` is its place in the list (ids repeat across models and sidecars). */
function slotEntry(slot: SequenceSlot, id: number, sidecar: string) {
  return {
    id,
    id_task: -1,
    n_ctx: slot.contextSize,
    speculative: false,
    is_processing: slot.busy,
    next_token: {
      has_next_token: slot.busy,
      has_new_line: false,
      n_remain: -1,
      n_decoded: slot.generatedTokens,
    },
    model: slot.model,
    sidecar,
    sequence: slot.id,
    n_tokens: slot.tokens,
    n_prompt_tokens: slot.promptTokens,
    is_prompt_processing: slot.processingPrompt,
    request_id: slot.busy ? slot.requestId : null,
    key_id: slot.busy && slot.clientId !== "" ? slot.clientId : null,
    decode_tokens_per_second: slot.decodeTokensPerSecond,
  };
}

function savedEntry(state: SavedState, sidecar: string) {
  return {
    object: "kv_state",
    model: state.model,
    sidecar,
    n_tokens: state.tokens,
    bytes: Number(state.bytes),
    last_used_ms: Number(state.lastUsedMs),
  };
}

async function everySidecar(request: Request, context: AppContext, model: string): Promise<SidecarSlots[]> {
  const up = await upSidecars(context.sidecars);
  return Promise.all(
    up.map(async (state) => ({
      sidecar: state.id,
      answer: await state.client.slots({ model }, { signal: request.signal }),
    })),
  );
}

/** GET /slots (`?model=`, `?fail_on_no_slot=1`, `?saved=true`). */
export async function handleSlots(request: Request, context: AppContext): Promise<Response> {
  requireAdmin(request);
  const query = new URL(request.url).searchParams;
  const answers = await everySidecar(request, context, query.get("model") ?? "");
  if (query.get("saved") === "true") {
    const data = answers.flatMap(({ sidecar, answer }) => answer.saved.map((state) => savedEntry(state, sidecar)));
    return jsonResponse({ object: "list", data });
  }
  const slots = answers.flatMap(({ sidecar, answer }) => answer.slots.map((slot) => ({ slot, sidecar })));
  if (query.get("fail_on_no_slot") === "1" && slots.every(({ slot }) => slot.busy))
    throw new ServiceUnavailableError("no slot available", { code: "no_slot_available" });
  return jsonResponse(slots.map(({ slot, sidecar }, id) => slotEntry(slot, id, sidecar)));
}
