// POST /v1/messages/count_tokens: the prompt's size as the model's chat template
// renders it, counted by the sidecar's Tokenize (no generation). `input_tokens` is
// the whole prompt, images included: counting uses no cache.
import { readJsonBody } from "../../core/body.js";
import type { AppContext } from "../../core/context.js";
import { jsonResponse } from "../../core/answers.js";
import { parseRequest } from "../../core/validation.js";
import { refusalOf, resolveChatMedia } from "../../core/media/for-request.js";
import { toApiError } from "../../base/errors.js";
import { countTokensRequestSchema } from "./schema.js";
import { toChat } from "./to-request.js";

export async function countTokens(request: Request, context: AppContext): Promise<Response> {
  const body = parseRequest(countTokensRequestSchema, await readJsonBody(request, context.maxBodyBytes));
  const chat = toChat(body);
  // Images count as the model reads them: their bytes go to Tokenize (core/media/).
  await resolveChatMedia(chat, context, request);
  try {
    const { tokens } = await context.sidecar.tokenize(
      { model: body.model, input: { case: "chat", value: chat } },
      { signal: request.signal },
    );
    return jsonResponse({ input_tokens: tokens.length });
  } catch (error) {
    throw refusalOf(toApiError(error), chat);
  }
}
