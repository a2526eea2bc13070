// The OpenAI family (chat, completions, Responses, models): its error shape, the
// `: ping` comment as keep-alive, no extra headers.
import type { Protocol } from "../../protocol.js";
import { formatComment } from "../../sse/frame.js";
import { openAiErrorResponse } from "./errors.js";

export const openAiProtocol: Protocol = {
  errorResponse: openAiErrorResponse,
  keepAlive: formatComment("ping"),
  headers: () => ({}),
};
