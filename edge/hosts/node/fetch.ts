// The fetch the Node edge calls its sidecars with: undici's `request` on a pool of kept-alive
// connections, its answer wrapped as a Web Response for the gRPC-Web transport. It writes a call
// in the same turn it is made, where the global fetch takes several turns, and costs a third of
// its CPU (docs/decisions.md, "On Node, undici's `request` under that fetch"). With `SIDECAR_CA`,
// it trusts that private CA for `https://` sidecars, as deployments use.
import { readFileSync } from "node:fs";
import { Readable } from "node:stream";
import { Agent, type Dispatcher, request } from "undici";
import type { FetchImpl } from "../../upstream/connection.js";

/** Statuses whose Response may not have a body. */
const NO_BODY = new Set([101, 204, 205, 304]);

export function sidecarFetch(caFile?: string): FetchImpl {
  const dispatcher = new Agent(caFile === undefined ? {} : { connect: { ca: readFileSync(caFile) } });
  return async (input, init = {}) => {
    const url = input instanceof Request ? input.url : String(input);
    const answer = await request(url, {
      dispatcher,
      method: (init.method ?? "GET") as Dispatcher.HttpMethod,
      headers: Object.fromEntries(new Headers(init.headers)),
      body: (init.body ?? null) as Uint8Array | string | null,
      signal: init.signal ?? null,
    });
    const headers = new Headers();
    for (const [name, value] of Object.entries(answer.headers)) {
      for (const one of Array.isArray(value) ? value : [value]) if (one !== undefined) headers.append(name, one);
    }
    if (NO_BODY.has(answer.statusCode)) {
      answer.body.resume();
      return new Response(null, { status: answer.statusCode, headers });
    }
    return new Response(Readable.toWeb(answer.body) as ReadableStream<Uint8Array>, {
      status: answer.statusCode,
      headers,
    });
  };
}
