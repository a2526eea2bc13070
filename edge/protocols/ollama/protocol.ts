// The Ollama protocol: its error shape, NDJSON streams (no keep-alive line: Ollama sends none, and its
// clients warn on a line that is no JSON), no headers of its own.
import type { Protocol } from "../../core/protocol-family.js";
import { ollamaErrorResponse } from "./errors.js";

export const ollamaProtocol: Protocol = {
  errorResponse: ollamaErrorResponse,
  keepAlive: "",
  lines: true,
  headers: () => ({}),
};
