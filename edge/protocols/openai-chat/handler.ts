// POST /v1/chat/completions: the chat-completions endpoint (schema, translation, encoders,
// protocol) handed to core/serve.ts.
import type { AppContext } from "../../core/context.js";
import { serve } from "../../core/serve.js";
import type { Endpoint } from "../../core/endpoint.js";
import { openAiErrorEvent } from "../openai-common/errors.js";
import { openAiProtocol } from "../openai-common/protocol.js";
import { createChatStreamEncoder, encodeChatChoices, encodeChatCompletion } from "./encoder.js";
import { chatRequestSchema } from "./schema.js";
import { toGenerateRequest } from "./to-request.js";

export const chatEndpoint: Endpoint<typeof chatRequestSchema> = {
  protocol: openAiProtocol,
  schema: chatRequestSchema,
  idPrefix: "chatcmpl-",
  resumeName: "chat",
  toRequest: toGenerateRequest,
  isStream: (body) => body.stream === true,
  // A request the sidecar refuses ends the stream with one error event, no role frame.
  refusedStream: (error) => [openAiErrorEvent(error)],
  streamEncoder: createChatStreamEncoder,
  encodeResult: encodeChatCompletion,
  encodeChoices: encodeChatChoices,
  affinity: (body) => ({ cacheKey: body.prompt_cache_key ?? undefined }),
};

/** POST /v1/chat/completions */
export function handleChatCompletions(request: Request, context: AppContext): Promise<Response> {
  return serve(chatEndpoint, request, context);
}
