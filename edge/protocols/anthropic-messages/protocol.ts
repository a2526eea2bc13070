// The Anthropic protocol: its error shape, `event: ping` as keep-alive, and a
// `request-id` header on every answer.
import type { Protocol } from "../../core/protocol-family.js";
import { formatEvent, jsonEvent } from "../../sse/frame.js";
import { anthropicErrorResponse } from "./errors.js";

/** Anthropic's keep-alive event, which its SDKs skip. */
export const PING = formatEvent(jsonEvent({ type: "ping" }, "ping"));

export const anthropicProtocol: Protocol = {
  errorResponse: anthropicErrorResponse,
  keepAlive: PING,
  // Like Anthropic's API, every answer names its request (the SDKs read it into `request_id`).
  headers: (requestId: string) => ({ "request-id": requestId }),
};
