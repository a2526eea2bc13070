// What an API protocol family (OpenAI, Anthropic) decides for every route it
// serves, apart from its bodies: the shape of its errors, its keep-alive frame and
// headers it adds to every answer. `answer` is the one place where a route's thrown
// error becomes that protocol's HTTP error response.
import type { AppContext } from "./context.js";
import { isUnexpected, toApiError, type ApiError } from "../base/errors.js";
import { recordOf } from "./request-log.js";

export interface Protocol {
  /** The HTTP error response in this protocol's shape (status, body, error headers). */
  errorResponse(error: ApiError): Response;
  /** SSE text written on a started stream after `keepAliveMs` of silence. */
  readonly keepAlive: string;
  /** Headers added to every answer of one request, success or error (e.g. Anthropic's `request-id`). */
  headers(requestId: string): Record<string, string>;
}

/** Sets `headers` on `response` (copying it if its headers are immutable). */
export function withHeaders(response: Response, headers: Readonly<Record<string, string>>): Response {
  const entries = Object.entries(headers);
  if (entries.length === 0) return response;
  let out = response;
  try {
    for (const [name, value] of entries) out.headers.set(name, value);
  } catch {
    out = new Response(response.body, response);
    for (const [name, value] of entries) out.headers.set(name, value);
  }
  return out;
}

/**
 * Runs a route handler; whatever it throws is answered in `protocol`'s error shape
 * (bugs are reported first). The protocol's headers go on every answer.
 */
export async function answer(
  protocol: Protocol,
  context: AppContext,
  request: Request,
  run: () => Promise<Response>,
): Promise<Response> {
  const record = recordOf(request);
  const headers = protocol.headers(record?.requestId ?? `req_${context.newId()}`);
  try {
    return withHeaders(await run(), headers);
  } catch (caught) {
    if (isUnexpected(caught)) context.reportUnexpected(caught);
    const error = toApiError(caught);
    if (record !== undefined) [record.outcome, record.errorType] = ["error", error.kind];
    return withHeaders(protocol.errorResponse(error), headers);
  }
}
