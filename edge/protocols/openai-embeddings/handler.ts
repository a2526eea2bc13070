// POST /v1/embeddings over the sidecar's Embed (schema.ts for the body, to-request.ts for the
// mapping, encoder.ts for the answer). Errors in OpenAI's shape; a client that leaves cancels the call.
import { readJsonBody } from "../../core/body.js";
import type { AppContext } from "../../core/context.js";
import { jsonResponse } from "../../core/answers.js";
import { servedModel } from "../../core/served-model.js";
import { priorityOf } from "../../core/priority.js";
import { parseRequest } from "../../core/validation.js";
import { recordOf } from "../../core/request-log.js";
import { embeddingsAnswer } from "./encoder.js";
import { embeddingsRequestSchema } from "./schema.js";
import { toEmbedRequest } from "./to-request.js";

export async function handleEmbeddings(request: Request, context: AppContext): Promise<Response> {
  const body = parseRequest(embeddingsRequestSchema, await readJsonBody(request, context.maxBodyBytes));
  const embed = { ...toEmbedRequest(body), priority: priorityOf(request) };
  // The GenAI span, when the request is traced; its context goes to the sidecar (edge/trace/).
  const trace = recordOf(request)?.trace;
  const headers = trace?.embeddings(embed.model ?? "");
  const response = await context.sidecar.embed(
    embed,
    headers === undefined ? { signal: request.signal } : { signal: request.signal, headers },
  );
  const model = body.model ?? (await servedModel(request, context));
  trace?.embedded(response.promptTokens, model);
  return jsonResponse(embeddingsAnswer(response, model, body.encoding_format ?? "float"));
}
