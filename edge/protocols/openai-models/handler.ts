// GET /v1/models and GET /v1/models/{id}: every catalogued model of the sidecars with its status, in
// OpenAI's shape; POST /models/load and POST /models/unload: act on one model and answer it
// (docs/contract.md, "Models").
import type { AppContext } from "../../core/context.js";
import { NotFoundError } from "../../base/errors.js";
import { readJsonBody } from "../../core/body.js";
import { jsonResponse } from "../../core/answers.js";
import { parseRequest } from "../../core/validation.js";
import { findModel } from "../../upstream/catalogue.js";
import { openAiModel, openAiModelList } from "./encoder.js";
import { loadModelRequestSchema, unloadModelRequestSchema } from "./schema.js";
import { toLoadModelRequest, toUnloadModelRequest } from "./to-request.js";

/** GET /v1/models */
export async function handleListModels(request: Request, context: AppContext): Promise<Response> {
  const { models } = await context.sidecar.listModels({}, { signal: request.signal });
  return jsonResponse(openAiModelList(models));
}

/**
 * GET /v1/models/:id — an id or an alias of a catalogued model (Generate accepts any name when one
 * model is served; this lookup does not).
 */
export async function handleRetrieveModel(id: string, request: Request, context: AppContext): Promise<Response> {
  const { models } = await context.sidecar.listModels({}, { signal: request.signal });
  const model = findModel(models, id);
  if (model === undefined) {
    throw new NotFoundError(`The model '${id}' does not exist.`, { param: "model", code: "model_not_found" });
  }
  return jsonResponse(openAiModel(model));
}

/** POST /models/load — answers once the model is loaded. */
export async function handleLoadModel(request: Request, context: AppContext): Promise<Response> {
  const body = parseRequest(loadModelRequestSchema, await readJsonBody(request, context.maxBodyBytes));
  return jsonResponse(
    openAiModel(await context.sidecar.loadModel(toLoadModelRequest(body), { signal: request.signal })),
  );
}

/** POST /models/unload — answers with the model's status after. */
export async function handleUnloadModel(request: Request, context: AppContext): Promise<Response> {
  const body = parseRequest(unloadModelRequestSchema, await readJsonBody(request, context.maxBodyBytes));
  return jsonResponse(
    openAiModel(await context.sidecar.unloadModel(toUnloadModelRequest(body), { signal: request.signal })),
  );
}
