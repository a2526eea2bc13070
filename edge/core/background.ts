// Background jobs (Responses' `background`): a non-streaming request run detached in the sidecar as
// a resumable stream; the call only waits for the sidecar to accept it and answers at once, and the
// caller polls (docs/contract.md, "Resumable streams").
import type * as z from "zod";
import { jsonResponse } from "./json.js";
import type { Endpoint, ResponseMeta } from "./endpoint.js";

/** Whether this request runs as a background job: not a stream, and the endpoint says so. */
export function isBackgroundJob<S extends z.ZodType>(endpoint: Endpoint<S>, body: z.output<S>, stream: boolean): boolean {
  return !stream && endpoint.isBackground?.(body) === true;
}

/** The answer to an accepted job; the call's own wait ends here, the job goes on. */
export function acceptedJob<S extends z.ZodType>(endpoint: Endpoint<S>, body: z.output<S>, meta: ResponseMeta, abort: AbortController): Response {
  // The job goes on in the sidecar (detached); this call only waited for it to be accepted.
  abort.abort(new Error("a background job: the caller polls it"));
  return jsonResponse(endpoint.accepted?.(body, meta) ?? {});
}
