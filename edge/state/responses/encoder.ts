// The JSON shapes of a stored response's input items: one page of a list, as the API pages lists.
import { InvalidRequestError } from "../../base/errors.js";
import type { StoredItem } from "../store/store.js";

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;

export interface PageOptions {
  readonly order: "asc" | "desc";
  readonly limit: number;
  readonly after: string | undefined;
}

/** `order` (desc: newest first, the default), `limit` (1–100, default 20), `after` (an item id). */
export function pageOptions(url: URL): PageOptions {
  const order = url.searchParams.get("order") ?? "desc";
  if (order !== "asc" && order !== "desc") throw new InvalidRequestError("Invalid 'order': expected 'asc' or 'desc'.", { param: "order" });
  const raw = url.searchParams.get("limit");
  if (raw !== null && (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > MAX_LIMIT)) {
    throw new InvalidRequestError(`Invalid 'limit': expected an integer from 1 to ${MAX_LIMIT}.`, { param: "limit" });
  }
  return { order, limit: raw === null ? DEFAULT_LIMIT : Number(raw), after: url.searchParams.get("after") ?? undefined };
}

export function inputItemsPage(items: readonly StoredItem[], options: PageOptions): Record<string, unknown> {
  const ordered = options.order === "asc" ? [...items] : [...items].reverse();
  let start = 0;
  if (options.after !== undefined) {
    const at = ordered.findIndex((item) => item["id"] === options.after);
    if (at < 0) throw new InvalidRequestError(`Invalid 'after': no input item with id '${options.after}'.`, { param: "after" });
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
