// What every /v1/conversations route shares: the caller's conversation or OpenAI's 404, the
// request's JSON body, and the `include` query.
import * as z from "zod";
import { callerOf } from "../../access/caller.js";
import { readJsonBody } from "../../core/body.js";
import { InvalidRequestError, NotFoundError } from "../../base/errors.js";
import { wantsEncryptedReasoning } from "../../protocols/openai-responses/encrypted-reasoning.js";
import type { ConversationStore, OpenAiConversation } from "./store.js";
import { parseRequest } from "../../core/validation.js";

export const ownerOf = (request: Request): string => callerOf(request).keyId;

export function conversationNotFound(id: string, param: string | null = null): NotFoundError {
  return new NotFoundError(`Conversation with id '${id}' not found.`, { param, code: "conversation_not_found" });
}

export async function conversationOf(
  store: ConversationStore,
  request: Request,
  id: string,
): Promise<OpenAiConversation> {
  const found = await store.getConversation(ownerOf(request), id);
  if (found === undefined) throw conversationNotFound(id);
  return found;
}

/** The body, a JSON object; an empty body is `{}` (the `openai` client sends none for an empty create). */
export async function bodyOf(request: Request, maxBytes: number): Promise<Record<string, unknown>> {
  let raw: unknown;
  try {
    raw = await readJsonBody(request, maxBytes);
  } catch (error) {
    if (error instanceof InvalidRequestError && error.code === "missing_body") return {};
    throw error;
  }
  return parseRequest(z.record(z.string(), z.unknown(), { error: "expected a JSON object" }), raw);
}

/** What an `include` query may name (the Responses API's includables). */
const INCLUDABLE = new Set([
  "file_search_call.results",
  "web_search_call.results",
  "web_search_call.action.sources",
  "message.input_image.image_url",
  "computer_call_output.output.image_url",
  "code_interpreter_call.outputs",
  "reasoning.encrypted_content",
  "message.output_text.logprobs",
]);

/**
 * `include` (`include[]=…` as the `openai` client sends it, or `include=…`): whether reasoning
 * items carry their encrypted_content; the other includables name nothing this server keeps.
 */
export function sealedReasoning(url: URL): boolean {
  const include = [...url.searchParams.getAll("include"), ...url.searchParams.getAll("include[]")];
  const unknown = include.find((value) => !INCLUDABLE.has(value));
  if (unknown !== undefined) {
    throw new InvalidRequestError(
      `Invalid 'include': '${unknown}' is not one of ${[...INCLUDABLE].map((v) => `'${v}'`).join(", ")}.`,
      { param: "include" },
    );
  }
  return wantsEncryptedReasoning(include);
}
