// GET /v1/models and GET /v1/models/{id}: the sidecars' models in OpenAI's shape.
import type { AppContext } from "../../core/context.js";
import { NotFoundError } from "../../base/errors.js";
import { jsonResponse } from "../../core/json.js";
import { openAiModel, openAiModelList } from "./encoder.js";

/** GET /v1/models */
export async function handleListModels(request: Request, context: AppContext): Promise<Response> {
  const { models } = await context.sidecar.listModels({}, { signal: request.signal });
  return jsonResponse(openAiModelList(models));
}

/** GET /v1/models/:id — the exact id only (Generate accepts any name when one model is served). */
export async function handleRetrieveModel(id: string, request: Request, context: AppContext): Promise<Response> {
  const { models } = await context.sidecar.listModels({}, { signal: request.signal });
  const model = models.find((m) => m.id === id);
  if (model === undefined) {
    throw new NotFoundError(`The model '${id}' does not exist.`, { param: "model", code: "model_not_found" });
  }
  return jsonResponse(openAiModel(model));
}
