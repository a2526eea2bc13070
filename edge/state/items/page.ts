// How a list of stored items is paged, as the API pages lists (`order`, `limit`, `after`): stored
// responses' input items and OpenAI conversations' items alike.
import { InvalidRequestError } from "../../base/errors.js";

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
  if (order !== "asc" && order !== "desc")
    throw new InvalidRequestError("Invalid 'order': expected 'asc' or 'desc'.", { param: "order" });
  const raw = url.searchParams.get("limit");
  if (raw !== null && (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > MAX_LIMIT)) {
    throw new InvalidRequestError(`Invalid 'limit': expected an integer from 1 to ${MAX_LIMIT}.`, { param: "limit" });
  }
  return {
    order,
    limit: raw === null ? DEFAULT_LIMIT : Number(raw),
    after: url.searchParams.get("after") ?? undefined,
  };
}
