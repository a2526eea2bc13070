// Responses items as the state keeps them, for stored responses and OpenAI conversations alike: the
// item type, where an `item_reference` is looked up, and a request's own items normalised and given
// ids (a string is one user message; `item_reference` items become the stored items they name).

import { InvalidRequestError } from "../../base/errors.js";

/** A stored Responses item (an input or output item, as the Responses API spells it, with its `id`). */
export type StoredItem = Readonly<Record<string, unknown>>;

/** Where `item_reference` finds an item: the caller's stored responses, else their OpenAI conversations. */
export interface ItemSource {
  /** A stored input or output item of `owner`'s responses (else of `owner`'s OpenAI conversations), by its id. */
  getItem(owner: string, id: string): Promise<StoredItem | undefined>;
}

/** The id prefix an input item gets when it has none. */
const PREFIXES: Readonly<Record<string, string>> = {
  message: "msg_",
  function_call: "fc_",
  function_call_output: "fco_",
  reasoning: "rs_",
  compaction: "cmp_",
};

export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** A message's string content as one text part, as the API lists stored input items. */
function normalised(item: Record<string, unknown>, newId: () => string): StoredItem {
  const type = typeof item["type"] === "string" ? item["type"] : "message";
  const withType: Record<string, unknown> = { ...item, type };
  if (type === "message" && typeof item["content"] === "string") {
    withType["content"] = [
      { type: item["role"] === "assistant" ? "output_text" : "input_text", text: item["content"] },
    ];
  }
  return typeof item["id"] === "string" ? withType : { id: `${PREFIXES[type] ?? "item_"}${newId()}`, ...withType };
}

/**
 * The request's own input items, normalised and with ids; `item_reference` items resolve to the
 * caller's stored items (an unknown id is a 400 naming `input[i].id`, or `<field>[i].id`). Anything
 * else is left for the schema to judge.
 */
export async function ownItems(
  input: unknown,
  store: ItemSource,
  owner: string,
  newId: () => string,
  field = "input",
): Promise<unknown> {
  if (typeof input === "string") return [normalised({ type: "message", role: "user", content: input }, newId)];
  if (!Array.isArray(input)) return input;
  const items: unknown[] = [];
  for (const [i, item] of input.entries()) {
    if (!isRecord(item)) {
      items.push(item);
    } else if (item["type"] === "item_reference") {
      const id = typeof item["id"] === "string" ? item["id"] : "";
      const found = await store.getItem(owner, id);
      if (found === undefined)
        throw new InvalidRequestError(`Item with id '${id}' not found.`, { param: `${field}[${i}].id` });
      items.push(found);
    } else {
      items.push(normalised(item, newId));
    }
  }
  return items;
}
