import type { AppContext } from "../../context.js";
import { serveOpenAi, type OpenAiEndpoint } from "../openai-common/serve.js";
import { createCompletionStreamEncoder, encodeCompletion } from "./encoder.js";
import { completionRequestSchema } from "./schema.js";
import { toGenerateRequest } from "./to-request.js";

const completionEndpoint: OpenAiEndpoint<typeof completionRequestSchema> = {
  schema: completionRequestSchema,
  idPrefix: "cmpl-",
  toRequest: toGenerateRequest,
  isStream: (body) => body.stream === true,
  streamEncoder: createCompletionStreamEncoder,
  encodeResult: encodeCompletion,
};

/** POST /v1/completions */
export function handleCompletions(request: Request, context: AppContext): Promise<Response> {
  return serveOpenAi(completionEndpoint, request, context);
}
