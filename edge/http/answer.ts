// The one place where a thrown error becomes an HTTP answer: in the error shape of the protocol the
// route table names for the route (app.ts), with that protocol's headers and those the route added
// (core/protocol-family.ts); bugs are reported first and the request log learns the error's kind.
import { isUnexpected, toApiError } from "../base/errors.js";
import type { AppContext } from "../core/context.js";
import { withHeaders } from "../core/answers.js";
import { headersOf, type Protocol } from "../core/protocol-family.js";
import { recordOf } from "../core/request-log.js";

/** The answer to `caught`, thrown while serving `request` on a route of `protocol`. */
export function answerError(protocol: Protocol, context: AppContext, request: Request, caught: unknown): Response {
  const record = recordOf(request);
  const headers = headersOf(protocol, context, request);
  if (isUnexpected(caught)) context.reportUnexpected(caught);
  const error = toApiError(caught);
  if (record !== undefined) [record.outcome, record.errorType] = ["error", error.kind];
  return withHeaders(protocol.errorResponse(error), headers());
}
