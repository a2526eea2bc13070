// The JSON shapes of a stored response's input items: one page of a list, as the API pages lists.
import { InvalidRequestError } from "../../base/errors.js";
import type { StoredItem } from "../items/items.js";
import type { PageOptions } from "../items/page.js";

export function inputItemsPage(items: readonly StoredItem[], options: PageOptions): Record<string, unknown> {
  const ordered = options.order === "asc" ? [...items] : [...items].reverse();
  let start = 0;
  if (options.after !== undefined) {
    const at = ordered.findIndex((item) => item["id"] === options.after);
    if (at < 0)
      throw new InvalidRequestError(`Invalid 'after': no input item with id '${options.after}'.`, { param: "after" });
    start = at + 1;
  }
  const data = ordered.slice(start, start + options.limit);
  return {
    object: "list",
    data,
    first_id: data[0]?.["id"] ?? null,
    last_id: data.at(-1)?.["id"] ?? null,
    has_more: start + options.limit < ordered.length,
  };
}
