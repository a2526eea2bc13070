// OpenAI's error shape, for HTTP bodies and for in-stream `event: error` frames:
//   {"error":{"message","type","param","code"}}
import type { ApiError, ApiErrorKind } from "../../base/errors.js";
import { jsonResponse } from "../../core/answers.js";
import { jsonEvent, type SseEvent } from "../../sse/frame.js";

export interface OpenAiErrorObject {
  message: string;
  type: string;
  param: string | null;
  code: string | null;
}

function typeOf(kind: ApiErrorKind): string {
  switch (kind) {
    case "invalid_request":
    case "authentication":
    case "permission":
    case "too_large":
    case "not_found":
      return "invalid_request_error";
    case "rate_limit":
    case "key_rate_limit":
      return "rate_limit_error";
    case "server_error":
    case "timeout":
    case "unavailable":
      return "server_error";
    default: {
      const unknownKind: never = kind;
      return String(unknownKind);
    }
  }
}

export function openAiErrorObject(error: ApiError): OpenAiErrorObject {
  return { message: error.message, type: typeOf(error.kind), param: error.param, code: error.code };
}

/** The HTTP error response (status from the error class). */
export function openAiErrorResponse(error: ApiError): Response {
  return jsonResponse({ error: openAiErrorObject(error) }, error.status, error.headers);
}

/**
 * The `event: error` frame that ends a stream. The fields sit at the top level (as
 * the contract shows) AND under `error`, because the OpenAI SDKs raise only when the
 * data has an `error` key.
 */
export function openAiErrorEvent(error: ApiError): SseEvent {
  const object = openAiErrorObject(error);
  return jsonEvent({ ...object, error: object }, "error");
}
