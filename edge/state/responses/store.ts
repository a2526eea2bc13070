// What /v1/responses keeps between requests: finished Responses with their input and output items
// (docs/contract.md, "Stored responses"). One interface, its SQL in sql.ts over either driver
// (state/store/). Every call names the owner: another owner's response is not found.
import type { ConversationStore } from "../openai-conversations/store.js";
import type { ItemSource, StoredItem } from "../items/items.js";

/** A finished Response kept for `previous_response_id`, retrieval and `item_reference`. */
export interface StoredResponse {
  readonly id: string;
  readonly owner: string;
  /** Milliseconds since the Unix epoch. */
  readonly createdAt: number;
  /** The Response object as it was answered. */
  readonly response: Readonly<Record<string, unknown>>;
  /** The request's own input items (instructions not among them). */
  readonly inputItems: readonly StoredItem[];
  /** Every input item the model saw: the chain's input and output, then `inputItems`. */
  readonly context: readonly StoredItem[];
}

/** Stored responses, and their items by id for `item_reference` (else an OpenAI conversation's). */
export interface ResponseStore extends ItemSource {
  /** The stored response; undefined if unknown or another owner's. */
  getResponse(owner: string, id: string): Promise<StoredResponse | undefined>;
  /** Stores a response with its input and output items, whole or not at all. */
  putResponse(response: StoredResponse): Promise<void>;
  /** Deletes the response and its items; false if unknown or another owner's. */
  deleteResponse(owner: string, id: string): Promise<boolean>;
}

/** What /v1/responses reads and writes: its responses, and the OpenAI conversation `conversation` names. */
export interface ResponseStores {
  readonly responses: ResponseStore;
  readonly conversations: ConversationStore;
}
