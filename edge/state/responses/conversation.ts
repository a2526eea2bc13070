// The Responses `conversation` parameter (a conversation id, or `{id}`): the OpenAI conversation's
// items are the context, and the response's input and output items are appended to it once the
// response finished (endpoint.ts). Not with previous_response_id, as OpenAI's API has it.
import { ConflictError, InvalidRequestError, NotFoundError } from "../../base/errors.js";
import { asConversationItem } from "../openai-conversations/conversation-items.js";
import type { ConversationStore } from "../openai-conversations/store.js";
import { isRecord, type StoredItem } from "../items/items.js";

export interface ResponseConversation {
  readonly id: string;
  /** Its items when the request began: the response's context. */
  readonly items: readonly StoredItem[];
}

/** The id `conversation` names; undefined when absent or null. */
function conversationIdOf(value: unknown): string | undefined {
  if (value == null) return undefined;
  const id = isRecord(value) ? value["id"] : value;
  if (typeof id === "string" && id !== "") return id;
  if (isRecord(value))
    throw new InvalidRequestError("Invalid 'conversation.id': expected a conversation id (a non-empty string).", {
      param: "conversation.id",
    });
  throw new InvalidRequestError(
    "Invalid 'conversation': expected a conversation id (a non-empty string), or an object with one as 'id'.",
    {
      param: "conversation",
    },
  );
}

/**
 * The conversation the request names, with its items; 400 beside previous_response_id, 404 if unknown or another key's.
 */
export async function requestConversation(
  fields: Record<string, unknown>,
  previousId: string | undefined,
  store: ConversationStore,
  owner: string,
): Promise<ResponseConversation | undefined> {
  const id = conversationIdOf(fields["conversation"]);
  if (id === undefined) return undefined;
  if (previousId !== undefined) {
    throw new InvalidRequestError(
      "Mutually exclusive parameters: Ensure you are only providing one of: 'previous_response_id' or 'conversation'.",
      {
        code: "mutually_exclusive_parameters",
      },
    );
  }
  const items = await store.conversationItems(owner, id);
  if (items === undefined)
    throw new NotFoundError(`Conversation with id '${id}' not found.`, {
      param: "conversation",
      code: "conversation_not_found",
    });
  return { id, items };
}

/** Appends a finished response's input and output items, all or none. */
export async function appendResponse(
  store: ConversationStore,
  owner: string,
  conversationId: string,
  inputItems: readonly StoredItem[],
  response: Readonly<Record<string, unknown>>,
): Promise<void> {
  const output = Array.isArray(response["output"]) ? (response["output"] as StoredItem[]) : [];
  if (await store.appendConversationItems(owner, conversationId, [...inputItems, ...output].map(asConversationItem)))
    return;
  throw new ConflictError(
    `Conversation '${conversationId}' was deleted while this response was generated; its items were not added.`,
    {
      code: "conversation_conflict",
    },
  );
}
