import type { AppContext } from "../../context.js";
import { serve, type Endpoint } from "../../serve.js";
import { openAiProtocol } from "../openai-common/protocol.js";
import { createResponsesStreamEncoder, encodeResponse } from "./encoder.js";
import { responsesRequestSchema } from "./schema.js";
import { toGenerateRequest } from "./to-request.js";

const responsesEndpoint: Endpoint<typeof responsesRequestSchema> = {
  protocol: openAiProtocol,
  schema: responsesRequestSchema,
  idPrefix: "resp_",
  toRequest: toGenerateRequest,
  isStream: (body) => body.stream === true,
  // No refusedStream: a request the sidecar refuses is an HTTP 400 (docs/contract.md, "Every stream").
  streamEncoder: createResponsesStreamEncoder,
  encodeResult: encodeResponse,
};

/** POST /v1/responses */
export function handleResponses(request: Request, context: AppContext): Promise<Response> {
  return serve(responsesEndpoint, request, context);
}
