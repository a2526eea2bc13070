// A request for several choices of one prompt (GenerateRequest.n > 1, OpenAI's `n`), checked before
// the sidecar is called: each choice takes a sequence of the model, so more choices than it has
// sequences is a 400 naming `n` (docs/contract.md, "Several choices").
import type { GenerateRequest } from "../../proto/gen/inference/v1/inference_pb.js";
import { InvalidRequestError } from "../base/errors.js";
import type { SidecarPool } from "../upstream/pool.js";

/** What the request's endpoint does with its answer. */
export interface ChoicesUse {
  /** The stream is resumable (`x-resumable`): it carries one choice. */
  readonly resumable: boolean;
  /** The endpoint stores the reply (Endpoint.finished: a /c1 turn): one reply. */
  readonly stored: boolean;
  /** The protocol's name for the count (`n`; llama-server's `n_cmpl`). */
  readonly field?: string;
}

/**
 * Refuses `request`'s `n` when the model's sequences (the sidecars' ListModels reports) are fewer,
 * or when the answer is resumable or stored (`use`). A model whose count no report gives yet (not
 * loaded, sized at its load) is left to the sidecar, which refuses the same with INVALID_ARGUMENT.
 */
export async function checkChoices(pool: SidecarPool, request: GenerateRequest, use: ChoicesUse): Promise<void> {
  if (use.resumable || use.stored) {
    const what = use.resumable ? "A resumable stream (x-resumable)" : "A stored turn";
    throw new InvalidRequestError(`${what} holds one reply: n must be 1.`, { param: "n", code: "unsupported_value" });
  }
  const field = use.field ?? "n";
  const sequences = await pool.sequencesFor(request.model);
  if (sequences !== undefined && request.n > sequences) {
    throw new InvalidRequestError(
      `${field} is ${request.n}, but this model generates at most ${sequences} choices at once (one per sequence of ` +
        `its context): ask for ${sequences} or fewer.`,
      { param: field, code: "integer_above_max_value" },
    );
  }
}
