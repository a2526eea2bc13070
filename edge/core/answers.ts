// The one way to build an answer apart from a stream: a JSON body (every protocol's non-streaming
// answers and error bodies), and headers set on a finished Response, whether its headers may still
// change (ours) or not (one from `fetch`, or a static asset's, which is then copied first).

/** A JSON answer. */
export function jsonResponse(body: unknown, status = 200, headers: Readonly<Record<string, string>> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
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
