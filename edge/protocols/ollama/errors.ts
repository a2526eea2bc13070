// Ollama's error shape: `{"error": "…"}` with the status of the error's class (400 a bad body, 401 a
// missing key, 404 an unknown model or route, 429/503 busy, 500 a failure), as Ollama's server
// answers; in a stream that already started, the same object on a line of its own, which Ollama's
// clients raise.
import type { ApiError } from "../../base/errors.js";
import { jsonResponse } from "../../core/answers.js";
import { jsonEvent, type SseEvent } from "../../sse/frame.js";

/** The error's text: an unknown model named as Ollama names it (its clients match `not found`). */
function ollamaMessage(error: ApiError): string {
  return error.code === "model_not_found" ? `model not found: ${error.message}` : error.message;
}

export function ollamaErrorResponse(error: ApiError): Response {
  return jsonResponse({ error: ollamaMessage(error) }, error.status, error.headers);
}

/** The line that ends a stream which failed after it started. */
export function ollamaErrorLine(error: ApiError): SseEvent {
  return jsonEvent({ error: ollamaMessage(error) });
}
