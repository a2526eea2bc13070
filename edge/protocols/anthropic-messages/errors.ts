// Anthropic's error shape, for HTTP bodies and for the in-stream `event: error`:
//   {"type":"error","error":{"type":…,"message":…}}
// Types and statuses as Anthropic documents them. The one status that differs from
// the edge's hierarchy: a busy sidecar (RESOURCE_EXHAUSTED, the `rate_limit` kind) is
// 529 `overloaded_error`, Anthropic's "temporarily overloaded" — not 429
// `rate_limit_error`, which Anthropic uses for a client's own rate limit. Both keep
// the Retry-After header, and the SDKs retry both.
import { ContextLengthError, type ApiError, type ApiErrorKind } from "../../base/errors.js";
import { jsonResponse } from "../../core/answers.js";
import { jsonEvent, type SseEvent } from "../../sse/frame.js";

export type AnthropicErrorType =
  | "invalid_request_error"
  | "authentication_error"
  | "permission_error"
  | "rate_limit_error"
  | "request_too_large"
  | "not_found_error"
  | "overloaded_error"
  | "api_error"
  | "timeout_error";

/** HTTP 529: Anthropic's status for "the API is temporarily overloaded". */
export const OVERLOADED_STATUS = 529;

function typeOf(kind: ApiErrorKind): AnthropicErrorType {
  switch (kind) {
    case "invalid_request":
      return "invalid_request_error";
    case "authentication":
      return "authentication_error";
    case "permission":
      return "permission_error";
    case "key_rate_limit":
      return "rate_limit_error";
    case "too_large":
      return "request_too_large";
    case "not_found":
      return "not_found_error";
    case "rate_limit":
      return "overloaded_error";
    case "timeout":
      return "timeout_error";
    case "server_error":
    case "unavailable":
      return "api_error";
    default: {
      const unknownKind: never = kind;
      return String(unknownKind) as AnthropicErrorType;
    }
  }
}

function statusOf(error: ApiError): number {
  return error.kind === "rate_limit" ? OVERLOADED_STATUS : error.status;
}

export interface AnthropicErrorBody {
  type: "error";
  error: { type: AnthropicErrorType; message: string; details?: Readonly<Record<string, unknown>> };
}

export function anthropicErrorBody(error: ApiError): AnthropicErrorBody {
  const message = error instanceof ContextLengthError ? error.anthropicMessage : error.message;
  return {
    type: "error",
    error: { type: typeOf(error.kind), message, ...(error.details === undefined ? {} : { details: error.details }) },
  };
}

export function anthropicErrorResponse(error: ApiError): Response {
  return jsonResponse(anthropicErrorBody(error), statusOf(error), error.headers);
}

/** The `event: error` that ends a stream which failed after `message_start`. */
export function anthropicErrorEvent(error: ApiError): SseEvent {
  return jsonEvent(anthropicErrorBody(error), "error");
}
