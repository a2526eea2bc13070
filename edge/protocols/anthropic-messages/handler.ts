// POST /v1/messages and /v1/messages/count_tokens: the Messages endpoint (schema, translation,
// encoders, protocol) handed to core/serve.ts, and token counting.
import type { AppContext } from "../../core/context.js";
import { withProtocolHeaders } from "../../core/protocol-family.js";
import { serve } from "../../core/serve.js";
import type { Endpoint } from "../../core/endpoint.js";
import { countTokens } from "./count-tokens.js";
import { createMessagesStreamEncoder, encodeMessage } from "./encoder.js";
import { anthropicProtocol } from "./protocol.js";
import { messagesRequestSchema } from "./schema.js";
import { toGenerateRequest } from "./to-request.js";

/** The Messages endpoint; edge/state/threads/ adds storing a thread's turn to it. */
export const messagesEndpoint: Endpoint<typeof messagesRequestSchema> = {
  protocol: anthropicProtocol,
  schema: messagesRequestSchema,
  idPrefix: "msg_",
  resumeName: "messages",
  toRequest: toGenerateRequest,
  isStream: (body) => body.stream === true,
  // No refusedStream: a request the sidecar refuses is an HTTP 400 (docs/contract.md, "Every stream").
  streamEncoder: createMessagesStreamEncoder,
  encodeResult: encodeMessage,
};

/** POST /v1/messages */
export function handleMessages(request: Request, context: AppContext): Promise<Response> {
  return serve(messagesEndpoint, request, context);
}

/** POST /v1/messages/count_tokens */
export function handleCountTokens(request: Request, context: AppContext): Promise<Response> {
  return withProtocolHeaders(anthropicProtocol, context, request, () => countTokens(request, context));
}
