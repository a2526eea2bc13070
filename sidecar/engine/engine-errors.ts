// The errors the engine refuses or fails a request with, as ConnectErrors with their gRPC codes;
// shared by every room and by the transports.
import { Code, ConnectError } from "@connectrpc/connect";
import {
  FillInMiddleUnsupportedSchema,
  ModelLoadFailedSchema,
  PreemptedSchema,
  PromptTooLongSchema,
} from "../../proto/gen/inference/v1/inference_pb.js";

/** A request the engine refuses: bad options, a prompt that does not fit. Maps to INVALID_ARGUMENT. */
export function invalidArgument(message: string): ConnectError {
  return new ConnectError(message, Code.InvalidArgument);
}

/** An unknown model while several are served. Maps to NOT_FOUND. */
export function notFound(message: string): ConnectError {
  return new ConnectError(message, Code.NotFound);
}

/** The caller's deadline passed. Maps to DEADLINE_EXCEEDED. */
export function alreadyExists(message: string): ConnectError {
  return new ConnectError(message, Code.AlreadyExists);
}

export function failedPrecondition(message: string): ConnectError {
  return new ConnectError(message, Code.FailedPrecondition);
}

export function deadlineExceeded(message: string): ConnectError {
  return new ConnectError(message, Code.DeadlineExceeded);
}

/** Every sequence is busy and the wait queue is full. Maps to RESOURCE_EXHAUSTED. */
export function overloaded(message: string): ConnectError {
  return new ConnectError(message, Code.ResourceExhausted);
}

/** The request waited for a sequence longer than allowed. Maps to DEADLINE_EXCEEDED. */
export function queueTimeout(message: string): ConnectError {
  return new ConnectError(message, Code.DeadlineExceeded);
}

/** The sidecar is loading or draining. Maps to UNAVAILABLE. */
export function unavailable(message: string): ConnectError {
  return new ConnectError(message, Code.Unavailable);
}

/** The message of `preempted`: what the edge's batch runner and operators read. */
export const PREEMPTED_MESSAGE = "preempted by an interactive request; retry";

/**
 * A PRIORITY_BATCH generation stopped to free its sequence for an interactive request: ABORTED
 * with a Preempted detail (proto: GenerateRequest.priority). The same request may be sent again.
 */
export function preempted(completionTokens: number): ConnectError {
  return new ConnectError(PREEMPTED_MESSAGE, Code.Aborted, undefined, [
    { desc: PreemptedSchema, value: { completionTokens } },
  ]);
}

/** The caller left. Maps to CANCELLED. */
export function cancelled(message = "the request was cancelled"): ConnectError {
  return new ConnectError(message, Code.Canceled);
}

/** A prompt longer than the context: INVALID_ARGUMENT with the counts as a PromptTooLong detail. */
export function promptTooLong(promptTokens: number, contextSize: number): ConnectError {
  return new ConnectError(
    `the prompt has ${promptTokens} tokens, but the context holds ${contextSize} tokens for prompt and reply together`,
    Code.InvalidArgument,
    undefined,
    [{ desc: PromptTooLongSchema, value: { promptTokens, contextSize } }],
  );
}

/** A call the sidecar does not serve. Maps to UNIMPLEMENTED. */
export function unimplemented(message: string): ConnectError {
  return new ConnectError(message, Code.Unimplemented);
}

/** A model that could not be loaded: INTERNAL with a ModelLoadFailed detail naming it and why. */
export function modelLoadFailed(model: string, reason: string): ConnectError {
  return new ConnectError(`model "${model}" could not be loaded: ${reason}`, Code.Internal, undefined, [
    { desc: ModelLoadFailedSchema, value: { model, reason } },
  ]);
}

/** What a caught error says, for a log line. */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** An infill on a model without FIM tokens: INVALID_ARGUMENT with a FillInMiddleUnsupported detail. */
export function fillInMiddleUnsupported(model: string, missing: readonly string[]): ConnectError {
  return new ConnectError(
    `the model "${model}" has no fill-in-the-middle tokens (${missing.join(", ")} missing): it cannot fill in ` +
      "the middle; use a code model with FIM tokens (Qwen2.5-Coder, CodeLlama, StarCoder2, DeepSeek-Coder, …)",
    Code.InvalidArgument,
    undefined,
    [{ desc: FillInMiddleUnsupportedSchema, value: { model, missing: [...missing] } }],
  );
}
