// POST /v1/rerank and POST /rerank over the sidecar's Rank (schema.ts for the body, to-request.ts
// for the mapping, encoder.ts for the answer). Errors in OpenAI's shape; a client that leaves
// cancels the call.
import { readJsonBody } from "../../core/body.js";
import type { AppContext } from "../../core/context.js";
import { jsonResponse } from "../../core/answers.js";
import { servedModel } from "../../core/served-model.js";
import { parseRequest } from "../../core/validation.js";
import { rerankAnswer } from "./encoder.js";
import { rerankRequestSchema } from "./schema.js";
import { toRankRequest } from "./to-request.js";

export async function handleRerank(request: Request, context: AppContext): Promise<Response> {
  const body = parseRequest(rerankRequestSchema, await readJsonBody(request, context.maxBodyBytes));
  const rank = toRankRequest(body);
  const response = await context.sidecar.rank(rank, { signal: request.signal });
  return jsonResponse(
    rerankAnswer(response, {
      id: `rerank-${context.newId()}`,
      model: body.model ?? (await servedModel(request, context)),
      texts: rank.documents ?? [],
      topN: body.top_n ?? undefined,
      returnDocuments: body.return_documents ?? true,
    }),
  );
}
