// One error hierarchy for the edge. Every failure the edge reports is an ApiError;
// each subclass fixes the HTTP status and a protocol-neutral `kind`, and protocol
// renderers (protocols/openai-common/errors.ts, protocols/anthropic-messages/errors.ts)
// turn it into their own wire shape (Anthropic answers the `rate_limit` kind with its
// own 529 "overloaded" status).
// Failures reported by the sidecar arrive as ConnectErrors and are mapped here,
// in one switch, by `fromConnectError`.
import { Code, ConnectError } from "@connectrpc/connect";
import {
  FillInMiddleUnsupportedSchema,
  ModelLoadFailedSchema,
  PromptTooLongSchema,
} from "../../proto/gen/inference/v1/inference_pb.js";

/** Seconds a client is told to wait after a 429/503 when the sidecar suggests nothing. */
export const DEFAULT_RETRY_AFTER_SECONDS = 1;

export interface ApiErrorOptions {
  /** The request field at fault, as a path like `messages[0].role`; null when none. */
  param?: string | null;
  /** A short machine-readable code, e.g. `model_not_found`. */
  code?: string | null;
  /** Extra response headers (e.g. `retry-after`). */
  headers?: Record<string, string>;
  /** Machine-readable details a protocol puts in its error body (Anthropic's `error.details`). */
  details?: Readonly<Record<string, unknown>>;
  cause?: unknown;
}

/** The broad kind of failure; protocol renderers map it to their own type names. */
export type ApiErrorKind =
  | "invalid_request"
  | "authentication"
  | "permission"
  | "key_rate_limit"
  | "too_large"
  | "not_found"
  | "rate_limit"
  | "server_error"
  | "timeout"
  | "unavailable";

export abstract class ApiError extends Error {
  abstract readonly status: number;
  abstract readonly kind: ApiErrorKind;
  readonly param: string | null;
  readonly code: string | null;
  readonly headers: Readonly<Record<string, string>>;
  readonly details: Readonly<Record<string, unknown>> | undefined;

  constructor(message: string, options: ApiErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    // Each class also declares its name: the Worker's bundle keeps no class names (wrangler.toml).
    this.name = new.target.name;
    this.param = options.param ?? null;
    this.code = options.code ?? null;
    this.headers = options.headers ?? {};
    this.details = options.details;
  }
}

/** 400: the request is malformed or asks for something unsupported. */
export class InvalidRequestError extends ApiError {
  override readonly name: string = "InvalidRequestError";
  readonly status = 400;
  readonly kind = "invalid_request";
}

/**
 * 400: the sidecar refused a request the edge had accepted (the prompt does not fit
 * the context, the chat template cannot render the messages, a sampling option is
 * out of range). On a stream this is reported as an in-stream error event, not as an
 * HTTP status (docs/contract.md, "Every stream").
 */
export class GenerationRejectedError extends InvalidRequestError {
  override readonly name: string = "GenerationRejectedError";
}

/**
 * 400 `fill_in_middle_unsupported`: a fill-in-the-middle request (a suffix) for a model without FIM
 * tokens (the sidecar's FillInMiddleUnsupported detail). `field` names the protocol's own field.
 */
export class FillInMiddleUnsupportedError extends GenerationRejectedError {
  override readonly name: string = "FillInMiddleUnsupportedError";

  constructor(
    readonly model: string,
    readonly missing: readonly string[],
    field: string | null,
    cause?: unknown,
  ) {
    const subject = field === null ? "Fill-in-the-middle" : `'${field}' asks for fill-in-the-middle, but it`;
    super(
      `${subject} is not supported by the model '${model}': it has no fill-in-the-middle tokens ` +
        `(${missing.join(", ")} missing). Use a code model with FIM tokens ` +
        "(Qwen2.5-Coder, CodeLlama, StarCoder2, DeepSeek-Coder, …)" +
        (field === null ? "." : `, or send no '${field}'.`),
      { param: field, code: "fill_in_middle_unsupported", cause },
    );
  }

  /** The same refusal naming the protocol's field. */
  naming(field: string): FillInMiddleUnsupportedError {
    return new FillInMiddleUnsupportedError(this.model, this.missing, field, this.cause);
  }
}

/** 401: no API key, or a wrong one. */
export class AuthenticationError extends ApiError {
  override readonly name: string = "AuthenticationError";
  readonly status = 401;
  readonly kind = "authentication";
}

/** 403: the request's host or web origin is not allowed to use this server. */
export class PermissionDeniedError extends ApiError {
  override readonly name: string = "PermissionDeniedError";
  readonly status = 403;
  readonly kind = "permission";
}

/** 429: this API key's own request rate is over its limit (`RATE_LIMIT`). */
export class KeyRateLimitError extends ApiError {
  override readonly name: string = "KeyRateLimitError";
  readonly status = 429;
  readonly kind = "key_rate_limit";
}

/**
 * 400 `context_length_exceeded`: the prompt does not fit the model's context. Worded as each API
 * words it, because client libraries match the words and the code to trim and retry.
 */
export class ContextLengthError extends GenerationRejectedError {
  override readonly name: string = "ContextLengthError";
  constructor(
    readonly promptTokens: number,
    readonly contextSize: number,
    cause?: unknown,
  ) {
    super(
      `This model's maximum context length is ${contextSize} tokens. However, your messages resulted in ` +
        `${promptTokens} ` +
        `tokens. Please reduce the length of the messages.`,
      { code: "context_length_exceeded", cause },
    );
  }

  /** Anthropic's wording of the same refusal. */
  get anthropicMessage(): string {
    return `prompt is too long: ${this.promptTokens} tokens > ${this.contextSize} maximum`;
  }
}

/** 404: unknown route or model. */
export class NotFoundError extends ApiError {
  override readonly name: string = "NotFoundError";
  readonly status = 404;
  readonly kind = "not_found";
}

/**
 * 409: the object changed under the request (another turn of the same conversation finished first), or a name is
 * taken (a pulled model's).
 */
export class ConflictError extends ApiError {
  override readonly name: string = "ConflictError";
  readonly status = 409;
  readonly kind = "invalid_request";
}

/** 405: the route exists but not for this method. */
export class MethodNotAllowedError extends ApiError {
  override readonly name: string = "MethodNotAllowedError";
  readonly status = 405;
  readonly kind = "invalid_request";
  constructor(method: string, allowed: readonly string[]) {
    super(`Method ${method} is not allowed here; use ${allowed.join(" or ")}.`, {
      code: "method_not_allowed",
      headers: { allow: allowed.join(", ") },
    });
  }
}

/** 413: the body is larger than the configured limit. */
export class PayloadTooLargeError extends ApiError {
  override readonly name: string = "PayloadTooLargeError";
  readonly status = 413;
  readonly kind = "too_large";
  constructor(limitBytes: number) {
    super(`The request body is larger than the limit of ${limitBytes} bytes.`, {
      code: "request_too_large",
    });
  }
}

/** 429: every sequence is busy and the sidecar's wait queue is full. */
export class RateLimitError extends ApiError {
  override readonly name: string = "RateLimitError";
  readonly status = 429;
  readonly kind = "rate_limit";
}

/** 500: something failed inside the edge or the sidecar. */
export class ServerError extends ApiError {
  override readonly name: string = "ServerError";
  readonly status = 500;
  readonly kind = "server_error";
}

/** 503: the sidecar is unreachable, loading its model, or draining. */
export class ServiceUnavailableError extends ApiError {
  override readonly name: string = "ServiceUnavailableError";
  readonly status = 503;
  readonly kind = "unavailable";
}

/** 504: the request waited too long for a free sequence. */
export class GatewayTimeoutError extends ApiError {
  override readonly name: string = "GatewayTimeoutError";
  readonly status = 504;
  readonly kind = "timeout";
}

function retryAfter(error: ConnectError): Record<string, string> {
  const suggested = error.metadata.get("retry-after");
  const seconds =
    suggested !== null && /^\d+$/.test(suggested.trim()) ? suggested.trim() : String(DEFAULT_RETRY_AFTER_SECONDS);
  return { "retry-after": seconds };
}

/**
 * A request the client library could not encode for the sidecar (a value out of a proto field's
 * range that the schema let through): the request's fault, and nothing internal is shown.
 */
function isEncodeFailure(error: ConnectError): boolean {
  return error.code === Code.Internal && error.rawMessage.startsWith("serialize binary");
}

/**
 * 500 `model_load_failed`: the model a request named could not be loaded (INTERNAL with a
 * ModelLoadFailed detail); the message names the model and why (docs/contract.md, "Models").
 */
function loadFailure(error: ConnectError): ServerError | undefined {
  const [failed] = error.findDetails(ModelLoadFailedSchema);
  if (failed === undefined) return undefined;
  return new ServerError(`The model '${failed.model}' could not be loaded: ${failed.reason}`, {
    param: "model",
    code: "model_load_failed",
    cause: error,
  });
}

/** Maps a sidecar failure (gRPC status) to the edge's error hierarchy. */
export function fromConnectError(error: ConnectError): ApiError {
  const message = error.rawMessage;
  const cause = error;
  if (isEncodeFailure(error)) {
    return new InvalidRequestError("The request holds a value out of the range this server accepts.", {
      code: "value_out_of_range",
      cause,
    });
  }
  switch (error.code) {
    case Code.InvalidArgument:
    case Code.FailedPrecondition:
    case Code.OutOfRange: {
      const [tooLong] = error.findDetails(PromptTooLongSchema);
      if (tooLong !== undefined) return new ContextLengthError(tooLong.promptTokens, tooLong.contextSize, cause);
      const [fim] = error.findDetails(FillInMiddleUnsupportedSchema);
      if (fim !== undefined) return new FillInMiddleUnsupportedError(fim.model, fim.missing, null, cause);
      return new GenerationRejectedError(message, { cause });
    }
    case Code.NotFound:
      return new NotFoundError(message, { code: "model_not_found", cause });
    case Code.ResourceExhausted:
      return new RateLimitError(message, {
        code: "rate_limit_exceeded",
        headers: retryAfter(error),
        cause,
      });
    case Code.DeadlineExceeded:
      return new GatewayTimeoutError(message, { code: "timeout", cause });
    case Code.Unavailable:
      return new ServiceUnavailableError(message, {
        code: "service_unavailable",
        headers: retryAfter(error),
        cause,
      });
    case Code.Unauthenticated:
      return new ServerError(
        "The inference sidecar refused the edge's credentials: set the same SIDECAR_TOKEN on both.",
        {
          code: "sidecar_unauthenticated",
          cause,
        },
      );
    case Code.AlreadyExists:
      return new ConflictError(message, { cause });
    case Code.Canceled:
    case Code.Unknown:
    case Code.PermissionDenied:
    case Code.Aborted:
    case Code.Unimplemented:
    case Code.DataLoss:
      return new ServerError(message, { cause });
    case Code.Internal:
      return loadFailure(error) ?? new ServerError(message, { cause });
    default: {
      const unknownCode: never = error.code;
      return new ServerError(`${message} (code ${String(unknownCode)})`, { cause });
    }
  }
}

/** True for failures that are neither a reported API error nor a sidecar status: bugs. */
export function isUnexpected(error: unknown): boolean {
  return !(error instanceof ApiError) && !(error instanceof ConnectError);
}

/** Turns anything thrown while serving a request into an ApiError. */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof ConnectError) return fromConnectError(error);
  return new ServerError("The server had an error while processing the request.", {
    cause: error,
  });
}
