// POST /v1/responses without a store: the Responses endpoint (schema, translation, encoders,
// protocol) handed to core/serve.ts; with a store, edge/state/responses/ builds on it.
import { readJsonBody } from "../../core/body.js";
import type { AppContext } from "../../core/context.js";
import { InvalidRequestError } from "../../base/errors.js";
import { withProtocolHeaders } from "../../core/protocol-family.js";
import { generateFor } from "../../core/serve.js";
import type { Endpoint } from "../../core/endpoint.js";
import { conversationIdOf } from "../../upstream/affinity.js";
import { parseRequest } from "../../core/validation.js";
import { openAiProtocol } from "../openai-common/protocol.js";
import { compactIfDue } from "./compaction/automatic.js";
import { createResponsesStreamEncoder, encodeResponse, queuedResponse } from "./encoder.js";
import { NOT_STORED_HERE, responsesRequestSchema } from "./schema.js";
import { toGenerateRequest } from "./to-request.js";

export const responsesEndpoint: Endpoint<typeof responsesRequestSchema> = {
  protocol: openAiProtocol,
  schema: responsesRequestSchema,
  idPrefix: "resp_",
  resumeName: "responses",
  toRequest: toGenerateRequest,
  isStream: (body) => body.stream === true,
  // No refusedStream: a request the sidecar refuses is an HTTP 400 (docs/contract.md, "Every stream").
  streamEncoder: createResponsesStreamEncoder,
  encodeResult: encodeResponse,
  isBackground: (body) => body.background === true && body.stream !== true,
  accepted: queuedResponse,
  affinity: (body) => ({
    id: conversationIdOf(body.conversation),
    continues: typeof body.previous_response_id === "string",
    cacheKey: body.prompt_cache_key ?? undefined,
  }),
};

/**
 * OpenAI's refusal of a previous_response_id that names no response this server can continue: a
 * 400 (not a 404) with `code: "previous_response_not_found"`, as OpenAI answers it, so that SDKs
 * raise their BadRequestError and proxies that recover from this code see it (docs/contract.md,
 * "Stored responses").
 */
export function previousResponseNotFound(message: string): InvalidRequestError {
  return new InvalidRequestError(message, { param: "previous_response_id", code: "previous_response_not_found" });
}

/**
 * POST /v1/responses on a server without a store: nothing is stored (`store: false` in every
 * Response) and previous_response_id is refused by name. With a store, edge/state/responses/.
 */
export function handleResponses(request: Request, context: AppContext): Promise<Response> {
  return withProtocolHeaders(openAiProtocol, context, request, async () => {
    const raw = await readJsonBody(request, context.maxBodyBytes);
    const fields =
      typeof raw === "object" && raw !== null && !Array.isArray(raw) ? (raw as Record<string, unknown>) : undefined;
    if (fields?.["previous_response_id"] != null) {
      // No response is stored here, so none is found: the same code, with the reason.
      throw previousResponseNotFound(`Invalid 'previous_response_id': ${NOT_STORED_HERE}.`);
    }
    const body = await compactIfDue({ ...parseRequest(responsesRequestSchema, raw), store: false }, request, context);
    return body instanceof Response ? body : generateFor(responsesEndpoint, body, request, context);
  });
}
