// OpenAI's error shape, for HTTP bodies and for in-stream `event: error` frames:
//   {"error":{"message","type","param","code"}}
import { type ApiError, type ApiErrorKind } from "../../errors.js";
import { formatJsonEvent } from "../../sse/frame.js";

export interface OpenAiErrorObject {
  message: string;
  type: string;
  param: string | null;
  code: string | null;
}

function typeOf(kind: ApiErrorKind): string {
  switch (kind) {
    case "invalid_request":
    case "not_found":
      return "invalid_request_error";
    case "rate_limit":
      return "rate_limit_error";
    case "server_error":
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
  return new Response(JSON.stringify({ error: openAiErrorObject(error) }), {
    status: error.status,
    headers: { "content-type": "application/json", ...error.headers },
  });
}

/**
 * The `event: error` frame that ends a stream. The fields sit at the top level (as
 * seed 000 shows) AND under `error`, because the OpenAI SDKs raise only when the
 * data has an `error` key.
 */
export function openAiErrorEvent(error: ApiError): string {
  const object = openAiErrorObject(error);
  return formatJsonEvent({ ...object, error: object }, "error");
}
