// POST /v1/embeddings over the sidecar's Embed (schema.ts for the body, to-request.ts for the
// mapping, encoder.ts for the answer). Errors in OpenAI's shape; a client that leaves cancels the call.
import { readJsonBody } from "../../core/body.js";
import type { AppContext } from "../../core/context.js";
import { jsonResponse } from "../../core/json.js";
import { servedModel } from "../../core/served-model.js";
import { priorityOf } from "../../core/priority.js";
import { parseRequest } from "../../core/validation.js";
import { embeddingsAnswer } from "./encoder.js";
import { embeddingsRequestSchema } from "./schema.js";
import { toEmbedRequest } from "./to-request.js";

export async function handleEmbeddings(request: Request, context: AppContext): Promise<Response> {
  const body = parseRequest(embeddingsRequestSchema, await readJsonBody(request, context.maxBodyBytes));
  const response = await context.sidecar.embed({ ...toEmbedRequest(body), priority: priorityOf(request) }, { signal: request.signal });
  const model = body.model ?? (await servedModel(request, context));
  return jsonResponse(embeddingsAnswer(response, model, body.encoding_format ?? "float"));
}
