import type { AppContext } from "../../context.js";
import { serveOpenAi, type OpenAiEndpoint } from "../openai-common/serve.js";
import { createChatStreamEncoder, encodeChatCompletion } from "./encoder.js";
import { chatRequestSchema } from "./schema.js";
import { toGenerateRequest } from "./to-request.js";

const chatEndpoint: OpenAiEndpoint<typeof chatRequestSchema> = {
  schema: chatRequestSchema,
  idPrefix: "chatcmpl-",
  toRequest: toGenerateRequest,
  isStream: (body) => body.stream === true,
  streamEncoder: createChatStreamEncoder,
  encodeResult: encodeChatCompletion,
};

/** POST /v1/chat/completions */
export function handleChatCompletions(request: Request, context: AppContext): Promise<Response> {
  return serveOpenAi(chatEndpoint, request, context);
}
