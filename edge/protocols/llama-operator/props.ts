// GET /props: llama-server's server properties for one model (`?model=`, its id or an alias; without it, the one
// model served): the fields llama-server's web UI and llama-swap read. Admin keys only (core/admin.ts).
// docs/contract.md, "Operator endpoints".
import type { ModelInfo } from "../../../proto/gen/inference/v1/inference_pb.js";
import { InvalidRequestError, NotFoundError } from "../../base/errors.js";
import { requireAdmin } from "../../core/admin.js";
import { jsonResponse } from "../../core/answers.js";
import type { AppContext } from "../../core/context.js";
import { SERVER_NAME, SERVER_VERSION } from "../../core/identity.js";
import { findModel } from "../../upstream/catalogue.js";

/** The sampling a request gets for what it leaves out (the sidecar's defaults, llama.cpp's where it keeps them). */
const DEFAULT_PARAMS = {
  n_predict: -1,
  seed: 4294967295,
  temperature: 1,
  top_k: 40,
  top_p: 0.95,
  repeat_penalty: 1,
  presence_penalty: 0,
  frequency_penalty: 0,
  stop: [],
  max_tokens: -1,
  n_probs: 0,
  timings_per_token: false,
};

/** llama-server's props of `model`. */
export function propsOf(model: ModelInfo) {
  return {
    default_generation_settings: {
      id: 0,
      id_task: -1,
      n_ctx: model.contextSize,
      speculative: model.speculation !== "",
      is_processing: model.active > 0,
      params: DEFAULT_PARAMS,
      prompt: "",
      next_token: { has_next_token: true, has_new_line: false, n_remain: -1, n_decoded: 0, stopping_word: "" },
    },
    total_slots: model.sequences,
    model_path: model.id,
    model_alias: model.id,
    chat_template: model.chatTemplate,
    modalities: { vision: model.modalities.includes("image"), audio: model.modalities.includes("audio") },
    build_info: `${SERVER_NAME} ${SERVER_VERSION}${model.engineBuild === "" ? "" : ` (${model.engineBuild})`}`,
    is_sleeping: false,
  };
}

/** GET /props */
export async function handleProps(request: Request, context: AppContext): Promise<Response> {
  requireAdmin(request);
  const name = new URL(request.url).searchParams.get("model") ?? "";
  const { models } = await context.sidecar.listModels({}, { signal: request.signal });
  const generating = models.filter((model) => model.kind === "generate");
  if (name === "") {
    const [only] = generating;
    if (only === undefined || generating.length > 1)
      throw new InvalidRequestError(
        `Several models are served: name one with ?model= (${generating.map((model) => model.id).join(", ")}).`,
        { param: "model", code: "model_required" },
      );
    return jsonResponse(propsOf(only));
  }
  const model = findModel(models, name);
  if (model === undefined)
    throw new NotFoundError(`The model '${name}' is not served here.`, { param: "model", code: "model_not_found" });
  return jsonResponse(propsOf(model));
}
