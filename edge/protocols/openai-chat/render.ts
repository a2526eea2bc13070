// POST /v1/chat/completions/render (vLLM's render API, which llm-d's token-producer calls): a chat-completions body's
// prompt as token ids, exactly those the sidecar evaluates for the same body at /v1/chat/completions: the same schema
// and translation (to-request.ts), the same images, rendered by the sidecar's Tokenize as Generate renders it.
import { readJsonBody } from "../../core/body.js";
import type { AppContext } from "../../core/context.js";
import { jsonResponse } from "../../core/answers.js";
import { parseRequest } from "../../core/validation.js";
import { chatOf, refusalOf, resolveChatMedia } from "../../core/media/for-request.js";
import { toApiError } from "../../base/errors.js";
import { renderedPrompt } from "../openai-common/render.js";
import { chatRequestSchema } from "./schema.js";
import { toGenerateRequest } from "./to-request.js";

/** One GenerateRequest of vLLM's shape: `{request_id, token_ids, features, model, stream}`. */
export async function handleChatRender(request: Request, context: AppContext): Promise<Response> {
  const body = parseRequest(chatRequestSchema, await readJsonBody(request, context.maxBodyBytes));
  const generateRequest = toGenerateRequest(body);
  const chat = chatOf(generateRequest);
  await resolveChatMedia(chat, context, request);
  try {
    const { tokens } = await context.sidecar.tokenize(
      { model: generateRequest.model, ...(chat === undefined ? {} : { input: { case: "chat", value: chat } }) },
      { signal: request.signal },
    );
    return jsonResponse(renderedPrompt("chatcmpl-", context, tokens, body));
  } catch (error) {
    throw refusalOf(toApiError(error), chat);
  }
}
