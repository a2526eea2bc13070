// POST /v1/completions: the legacy completions endpoint (schema, translation, encoders, protocol)
// handed to core/serve.ts.
import type { AppContext } from "../../core/context.js";
import { serve } from "../../core/serve.js";
import type { Endpoint } from "../../core/endpoint.js";
import { openAiErrorEvent } from "../openai-common/errors.js";
import { openAiProtocol } from "../openai-common/protocol.js";
import { createCompletionStreamEncoder, encodeCompletion, encodeCompletionChoices } from "./encoder.js";
import { completionRequestSchema } from "./schema.js";
import { toGenerateRequest } from "./to-request.js";

export const completionEndpoint: Endpoint<typeof completionRequestSchema> = {
  protocol: openAiProtocol,
  schema: completionRequestSchema,
  idPrefix: "cmpl-",
  resumeName: "completions",
  toRequest: toGenerateRequest,
  infillField: "suffix",
  isStream: (body) => body.stream === true,
  // As for chat: a refused request is one error event on a stream.
  refusedStream: (error) => [openAiErrorEvent(error)],
  streamEncoder: createCompletionStreamEncoder,
  encodeResult: encodeCompletion,
  encodeChoices: encodeCompletionChoices,
};

/** POST /v1/completions */
export function handleCompletions(request: Request, context: AppContext): Promise<Response> {
  return serve(completionEndpoint, request, context);
}
