// A stored-Responses request's input: the context of the response it continues (that response's
// whole input, then its output), before its own items (state/items/items.ts normalises those).
import { previousResponseNotFound } from "../../protocols/openai-responses/handler.js";
import type { StoredItem } from "../items/items.js";
import type { ResponseStore, StoredResponse } from "./store.js";

/**
 * The stored response previous_response_id names, or OpenAI's 400 `previous_response_not_found`
 * (a 400, not a 404, as OpenAI answers it: clients and proxies recover from it as a bad request).
 */
export async function previousResponse(store: ResponseStore, owner: string, id: string): Promise<StoredResponse> {
  const found = await store.getResponse(owner, id);
  if (found === undefined) throw previousResponseNotFound(`Previous response with id '${id}' not found.`);
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
  return text.replace(/input\[(\d+)\]/g, (whole, n: string) =>
    Number(n) >= base ? `input[${Number(n) - base}]` : whole,
  );
}
