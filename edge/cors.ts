// CORS for browser clients: any origin, preflight answered for every path.
// (itty-router's own `cors` helper drops the response status in v6, hence this.)

const ALLOW_METHODS = "GET, POST, OPTIONS";
const EXPOSE_HEADERS = "retry-after, allow, request-id";

/** The answer to an OPTIONS preflight. */
export function preflight(request: Request): Response {
  return new Response(null, {
    status: 204,
    headers: {
      "access-control-allow-origin": "*",
      "access-control-allow-methods": ALLOW_METHODS,
      "access-control-allow-headers":
        request.headers.get("access-control-request-headers") ??
        "authorization, content-type, x-api-key, anthropic-version, anthropic-beta",
      "access-control-max-age": "86400",
    },
  });
}

/** Adds the CORS headers to a response (copying it if its headers are immutable). */
export function withCors(response: Response): Response {
  if (response.headers.has("access-control-allow-origin")) return response;
  let out = response;
  try {
    out.headers.set("access-control-allow-origin", "*");
  } catch {
    out = new Response(response.body, response);
    out.headers.set("access-control-allow-origin", "*");
  }
  out.headers.set("access-control-expose-headers", EXPOSE_HEADERS);
  return out;
}
