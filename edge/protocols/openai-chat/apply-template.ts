// POST /apply-template (llama-server's): a chat-completions body's prompt as its model's template
// renders it, special tokens written out — what the model sees, over the sidecar's Tokenize.
import { readJsonBody } from "../../core/body.js";
import type { AppContext } from "../../core/context.js";
import { jsonResponse } from "../../core/answers.js";
import { parseRequest } from "../../core/validation.js";
import { chatOf, refusalOf, resolveChatMedia } from "../../core/media/for-request.js";
import { toApiError } from "../../base/errors.js";
import { chatRequestSchema } from "./schema.js";
import { toGenerateRequest } from "./to-request.js";

/** `{"prompt"}`: the text the body's chat renders to, ready for the reply. */
export async function handleApplyTemplate(request: Request, context: AppContext): Promise<Response> {
  const body = parseRequest(chatRequestSchema, await readJsonBody(request, context.maxBodyBytes));
  const generateRequest = toGenerateRequest(body);
  const { model, input } = generateRequest;
  await resolveChatMedia(chatOf(generateRequest), context, request);
  const chat = input.case === "chat" ? { input: { case: "chat" as const, value: input.value } } : {};
  try {
    const response = await context.sidecar.tokenize({ model, ...chat, withText: true }, { signal: request.signal });
    return jsonResponse({ prompt: response.text });
  } catch (error) {
    throw refusalOf(toApiError(error), chatOf(generateRequest));
  }
}
