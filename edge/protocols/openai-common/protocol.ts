// The OpenAI family (chat, completions, Responses, models): its error shape, the
// `: ping` comment as keep-alive, and the request's id as `x-request-id`, as OpenAI's API sends it.
import type { Protocol } from "../../core/protocol-family.js";
import { formatComment } from "../../sse/frame.js";
import { openAiErrorResponse } from "./errors.js";

export const openAiProtocol: Protocol = {
  errorResponse: openAiErrorResponse,
  keepAlive: formatComment("ping"),
  headers: (requestId: string) => ({ "x-request-id": requestId }),
};
