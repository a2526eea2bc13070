// A stored-Responses request's input: its own items, normalised and given ids (a string is one
// user message; `item_reference` items become the stored items they name), after the context of
// the response it continues (that response's whole input, then its output).
import { InvalidRequestError, NotFoundError } from "../../base/errors.js";
import type { ConversationStore, StoredItem, StoredResponse } from "../store/store.js";

/** The id prefix an input item gets when it has none. */
const PREFIXES: Readonly<Record<string, string>> = { message: "msg_", function_call: "fc_", function_call_output: "fco_", reasoning: "rs_" };

export const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/** A message's string content as one text part, as the API lists stored input items. */
function normalised(item: Record<string, unknown>, newId: () => string): StoredItem {
  const type = typeof item["type"] === "string" ? item["type"] : "message";
  const withType: Record<string, unknown> = { ...item, type };
  if (type === "message" && typeof item["content"] === "string") {
    withType["content"] = [{ type: item["role"] === "assistant" ? "output_text" : "input_text", text: item["content"] }];
  }
  return typeof item["id"] === "string" ? withType : { id: `${PREFIXES[type] ?? "item_"}${newId()}`, ...withType };
}

/**
 * The request's own input items, normalised and with ids; `item_reference` items resolve to the
 * caller's stored items (an unknown id is a 400 naming `input[i].id`, or `<field>[i].id`). Anything
 * else is left for the schema to judge.
 */
export async function ownItems(input: unknown, store: ConversationStore, owner: string, newId: () => string, field = "input"): Promise<unknown> {
  if (typeof input === "string") return [normalised({ type: "message", role: "user", content: input }, newId)];
  if (!Array.isArray(input)) return input;
  const items: unknown[] = [];
  for (const [i, item] of input.entries()) {
    if (!isRecord(item)) {
      items.push(item);
    } else if (item["type"] === "item_reference") {
      const id = typeof item["id"] === "string" ? item["id"] : "";
      const found = await store.getItem(owner, id);
      if (found === undefined) throw new InvalidRequestError(`Item with id '${id}' not found.`, { param: `${field}[${i}].id` });
      items.push(found);
    } else {
      items.push(normalised(item, newId));
    }
  }
  return items;
}

/** The stored response previous_response_id names, or OpenAI's 404. */
export async function previousResponse(store: ConversationStore, owner: string, id: string): Promise<StoredResponse> {
  const found = await store.getResponse(owner, id);
  if (found === undefined) {
    throw new NotFoundError(`Previous response with id '${id}' not found.`, { param: "previous_response_id", code: "previous_response_not_found" });
  }
  return found;
}

/** What the model saw for a stored response, then what it answered: the next response's context. */
export function contextAfter(previous: StoredResponse | undefined): StoredItem[] {
  if (previous === undefined) return [];
  const output = previous.response["output"];
  return [...previous.context, ...(Array.isArray(output) ? (output as StoredItem[]) : [])];
}

/** `input[N]` of the whole context → `input[N - base]` of the request, in an error's param or message. */
export function shifted(text: string, base: number): string {
  return text.replace(/input\[(\d+)\]/g, (whole, n: string) => (Number(n) >= base ? `input[${Number(n) - base}]` : whole));
}
