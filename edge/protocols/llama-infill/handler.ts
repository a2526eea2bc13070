// POST /infill: llama-server's fill-in-the-middle endpoint (schema, translation, encoders) handed to
// core/serve.ts like every generation endpoint: keys, limits, routing and metrics as theirs. Errors in
// OpenAI's shape (llama-server's own is the same object with a numeric code).
import type { AppContext } from "../../core/context.js";
import type { Endpoint } from "../../core/endpoint.js";
import { serve } from "../../core/serve.js";
import { openAiProtocol } from "../openai-common/protocol.js";
import { createInfillStreamEncoder, encodeInfill, encodeInfillChoices } from "./encoder.js";
import { infillRequestSchema } from "./schema.js";
import { toGenerateRequest } from "./to-request.js";

export const infillEndpoint: Endpoint<typeof infillRequestSchema> = {
  protocol: openAiProtocol,
  schema: infillRequestSchema,
  idPrefix: "infill-",
  toRequest: toGenerateRequest,
  infillField: "input_suffix",
  choicesField: "n_cmpl",
  isStream: (body) => body.stream === true,
  streamEncoder: createInfillStreamEncoder,
  encodeResult: encodeInfill,
  encodeChoices: encodeInfillChoices,
};

/** POST /infill */
export function handleInfill(request: Request, context: AppContext): Promise<Response> {
  return serve(infillEndpoint, request, context);
}
