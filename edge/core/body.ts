// Reads a JSON request body: bounded in size, strict UTF-8, then JSON.parse.
// Any content-type is accepted (curl -d sends application/x-www-form-urlencoded).
import { InvalidRequestError, PayloadTooLargeError } from "../base/errors.js";

/** Default limit on request bodies: 32 MiB, room for images inline (base64 adds a third; docs/decisions.md). */
export const DEFAULT_MAX_BODY_BYTES = 32 * 1024 * 1024;

/**
 * After a body passes the limit, up to this many more bytes are read and dropped
 * before answering 413. Answering while the client is still sending makes some
 * stacks reset the connection before the client reads the answer (seen under
 * `wrangler dev` with chunked uploads); beyond this, the edge stops reading anyway.
 */
export const MAX_DISCARD_BYTES = 16 * 1024 * 1024;

function tooLarge(limit: number): PayloadTooLargeError {
  return new PayloadTooLargeError(limit);
}

async function discardRest(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
  let dropped = 0;
  try {
    while (dropped <= MAX_DISCARD_BYTES) {
      const { done, value } = await reader.read();
      if (done) return;
      dropped += value.byteLength;
    }
    reader.releaseLock();
  } catch {
    // the client went away; nothing to answer
  }
}

/**
 * Reads at most `limit` bytes; a larger body is a PayloadTooLargeError. When the
 * content-length says so, nothing is read (the body is left to the server, which
 * drains or closes the connection). A body whose declared length is within the limit
 * is read in one piece (the HTTP layer delivers exactly that many bytes; on Node,
 * @hono/node-server reads it from the socket without building a Web stream, ~0.3 ms
 * less per request); a body of unknown length is counted while it streams.
 */
export async function readBodyBytes(request: Request, limit: number): Promise<Uint8Array> {
  const declared = request.headers.get("content-length")?.trim();
  if (declared !== undefined && /^\d+$/.test(declared)) {
    if (Number(declared) > limit) throw tooLarge(limit);
    return new Uint8Array(await request.arrayBuffer());
  }
  if (request.body === null) return new Uint8Array(0);
  return readCapped(request.body, limit, async (reader) => {
    await discardRest(reader);
    throw tooLarge(limit);
  });
}

/**
 * A stream's bytes, counted as they arrive: past `limit`, what was read is dropped and `over` (which throws) is given
 * the reader, to cancel or drain it.
 */
export async function readCapped(
  body: ReadableStream<Uint8Array>,
  limit: number,
  over: (reader: ReadableStreamDefaultReader<Uint8Array>) => Promise<never>,
): Promise<Uint8Array> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      chunks.length = 0;
      return over(reader);
    }
    chunks.push(value);
  }
  if (chunks.length === 1 && chunks[0] !== undefined) return chunks[0];
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

/** The request body as parsed JSON (any JSON value; the schema checks its shape). */
export async function readJsonBody(request: Request, limit: number): Promise<unknown> {
  const bytes = await readBodyBytes(request, limit);
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new InvalidRequestError("The request body is not valid UTF-8.", { code: "invalid_encoding" });
  }
  if (text.trim() === "") {
    throw new InvalidRequestError("The request body is empty; send a JSON object (content-type: application/json).", {
      code: "missing_body",
    });
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new InvalidRequestError("The request body is not valid JSON.", { code: "invalid_json" });
  }
}
