// Headers set on a finished Response: the one way to do it, whether the Response's headers may still
// change (ours) or not (one from `fetch`, or a static asset's), which is then copied first.

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
