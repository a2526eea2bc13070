// CORS for browser clients. Which origins may call is the access policy's decision
// (edge/access/policy.ts); this file writes the headers. Preflights are answered for every path.
// (itty-router's own `cors` helper drops the response status in v6, hence this.)
import { withHeaders } from "../core/answers.js";

const ALLOW_METHODS = "GET, POST, DELETE, OPTIONS";
const ALLOW_HEADERS =
  "authorization, content-type, x-api-key, anthropic-version, anthropic-beta, x-conversation-id, x-resumable, " +
  "last-event-id";
const EXPOSE_HEADERS = "retry-after, allow, request-id, x-conversation-id, x-stream-id, traceresponse";

/** The answer to an allowed OPTIONS preflight. */
export function preflight(request: Request, allowOrigin: string | undefined): Response {
  const headers: Record<string, string> = {
    "access-control-allow-methods": ALLOW_METHODS,
    "access-control-allow-headers": request.headers.get("access-control-request-headers") ?? ALLOW_HEADERS,
    "access-control-max-age": "86400",
  };
  if (allowOrigin !== undefined) headers["access-control-allow-origin"] = allowOrigin;
  if (allowOrigin !== "*") headers["vary"] = "origin";
  return new Response(null, { status: 204, headers });
}

/** Adds the CORS headers to a response (copying it if its headers are immutable). */
export function withCors(response: Response, allowOrigin: string | undefined): Response {
  if (allowOrigin === undefined || response.headers.has("access-control-allow-origin")) return response;
  const out = withHeaders(response, {
    "access-control-allow-origin": allowOrigin,
    "access-control-expose-headers": EXPOSE_HEADERS,
  });
  if (allowOrigin !== "*") out.headers.append("vary", "origin");
  return out;
}
