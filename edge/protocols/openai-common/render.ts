// vLLM's render API (POST /v1/chat/completions/render, POST /v1/completions/render), what both routes share: the
// rendered prompt's answer (a subset of vLLM's GenerateRequest: the fields llm-d's token-producer reads, `token_ids`
// and `features`, and the request's own) and vLLM's error shape,
//   {"error":{"message","type","param","code"}}, `code` the HTTP status as a number, `type` vLLM's name for it.
import type { ApiError } from "../../base/errors.js";
import type { AppContext } from "../../core/context.js";
import { jsonResponse } from "../../core/answers.js";
import type { Protocol } from "../../core/protocol-family.js";
import { formatComment } from "../../sse/frame.js";

/** A rendered prompt as vLLM's render endpoints answer it (one GenerateRequest; completions answer a list). */
export interface RenderedPrompt {
  readonly request_id: string;
  readonly token_ids: readonly number[];
  /** Multimodal hashes and placeholders in vLLM; null here: an image's positions are ids of their own in token_ids. */
  readonly features: null;
  readonly model: string;
  readonly stream: boolean;
}

/** The answer to one prompt: `token_ids` as the sidecar evaluates them for the same body. */
export function renderedPrompt(
  idPrefix: "chatcmpl-" | "cmpl-",
  context: AppContext,
  tokens: readonly number[],
  body: { readonly model?: string | null | undefined; readonly stream?: boolean | null | undefined },
): RenderedPrompt {
  return {
    request_id: `${idPrefix}${context.newId()}`,
    token_ids: [...tokens],
    features: null,
    model: body.model ?? "",
    stream: body.stream === true,
  };
}

/** vLLM's `type` for a status: its exception's name where it raises one for it, else the status's phrase. */
const TYPES: Readonly<Record<number, string>> = {
  400: "BadRequestError",
  401: "Unauthorized",
  403: "Forbidden",
  404: "NotFoundError",
  405: "MethodNotAllowed",
  413: "RequestEntityTooLarge",
  429: "TooManyRequests",
  500: "InternalServerError",
  501: "NotImplementedError",
  503: "ServiceUnavailable",
  504: "GatewayTimeout",
};

export function vllmErrorResponse(error: ApiError): Response {
  const body = {
    error: {
      message: error.message,
      type: TYPES[error.status] ?? "InternalServerError",
      param: error.param,
      code: error.status,
    },
  };
  return jsonResponse(body, error.status, error.headers);
}

/** The render routes' protocol: vLLM's error shape; they answer one JSON body, so the keep-alive is never written. */
export const vllmRenderProtocol: Protocol = {
  errorResponse: vllmErrorResponse,
  keepAlive: formatComment("ping"),
  headers: (requestId: string) => ({ "x-request-id": requestId }),
};
