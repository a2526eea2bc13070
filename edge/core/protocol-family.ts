// What an API protocol family (OpenAI, Anthropic) decides for every route it
// serves, apart from its bodies: the shape of its errors, its keep-alive frame and
// headers it adds to every answer. A route's thrown error becomes that protocol's HTTP error
// response in one place, http/answer.ts, with the protocol of its entry in the route table.
import type { AppContext } from "./context.js";
import type { ApiError } from "../base/errors.js";
import { withHeaders } from "./answers.js";
import { recordOf } from "./request-log.js";

export interface Protocol {
  /** The HTTP error response in this protocol's shape (status, body, error headers). */
  errorResponse(error: ApiError): Response;
  /** SSE text written on a started stream after `keepAliveMs` of silence. */
  readonly keepAlive: string;
  /**
   * Streams as NDJSON (Ollama's): each event's data on a line of its own, `application/x-ndjson`, no
   * keep-alive line (a client noticing a silence would read a line that is no JSON).
   */
  readonly lines?: true;
  /** Headers added to every answer of one request, success or error (e.g. Anthropic's `request-id`). */
  headers(requestId: string): Record<string, string>;
}

/** Headers a route adds to every answer of one request, errors included (e.g. /c1's conversation id). */
const answerHeaders = new WeakMap<Request, Record<string, string>>();

/** Adds headers to every answer of `request` from now on, errors included. */
export function addAnswerHeaders(request: Request, headers: Readonly<Record<string, string>>): void {
  answerHeaders.set(request, { ...answerHeaders.get(request), ...headers });
}

/** The protocol's headers for this request, then those the route added (addAnswerHeaders). */
export function headersOf(protocol: Protocol, context: AppContext, request: Request): () => Record<string, string> {
  const own = protocol.headers(recordOf(request)?.requestId ?? `req_${context.newId()}`);
  return () => ({ ...own, ...answerHeaders.get(request) });
}

/**
 * Runs a route handler and puts `protocol`'s headers on its answer. A thrown error goes on to the
 * app (http/answer.ts), which answers it in the route's protocol with the same headers.
 */
export async function withProtocolHeaders(
  protocol: Protocol,
  context: AppContext,
  request: Request,
  run: () => Promise<Response>,
): Promise<Response> {
  const headers = headersOf(protocol, context, request);
  return withHeaders(await run(), headers());
}
