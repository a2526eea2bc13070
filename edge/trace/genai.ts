// The OpenTelemetry GenAI semantic conventions as the edge writes them (docs/decisions.md,
// "Traces"): the attribute names, and what a GenerateRequest, its Start and its Finish say in them.
import type { Attributes } from "@opentelemetry/api";
import { FinishReason, type Finish, type GenerateRequest } from "../../proto/gen/inference/v1/inference_pb.js";

/** `gen_ai.provider.name` (the semconv's current name for what was `gen_ai.system`). */
export const PROVIDER = "llama.cpp";

/** The GenAI operations the edge serves: chat-shaped bodies, raw prompts, vectors. */
export type GenAiOperation = "chat" | "text_completion" | "embeddings";

export const ATTR = {
  operation: "gen_ai.operation.name",
  provider: "gen_ai.provider.name",
  requestModel: "gen_ai.request.model",
  maxTokens: "gen_ai.request.max_tokens",
  temperature: "gen_ai.request.temperature",
  topP: "gen_ai.request.top_p",
  seed: "gen_ai.request.seed",
  stream: "gen_ai.request.stream",
  choiceCount: "gen_ai.request.choice.count",
  responseId: "gen_ai.response.id",
  responseModel: "gen_ai.response.model",
  finishReasons: "gen_ai.response.finish_reasons",
  inputTokens: "gen_ai.usage.input_tokens",
  outputTokens: "gen_ai.usage.output_tokens",
  cacheReadTokens: "gen_ai.usage.cache_read.input_tokens",
  reasoningTokens: "gen_ai.usage.reasoning.output_tokens",
  conversationId: "gen_ai.conversation.id",
  inputMessages: "gen_ai.input.messages",
  outputMessages: "gen_ai.output.messages",
  errorType: "error.type",
} as const;

/** The operation a generation is: a chat, or a text completion (a raw prompt, an infill). */
export function operationOf(request: GenerateRequest): GenAiOperation {
  return request.input.case === "chat" ? "chat" : "text_completion";
}

/** The request's attributes: only those the caller set (a default left to the model is not one). */
export function requestAttributes(
  request: GenerateRequest,
  stream: boolean,
  conversationId: string | undefined,
): Attributes {
  const sampling = request.sampling;
  const attributes: Attributes = {
    [ATTR.operation]: operationOf(request),
    [ATTR.provider]: PROVIDER,
    [ATTR.requestModel]: request.model,
    [ATTR.stream]: stream,
    [ATTR.maxTokens]: request.maxTokens,
    [ATTR.temperature]: asSent(sampling?.temperature),
    [ATTR.topP]: asSent(sampling?.topP),
    [ATTR.seed]: sampling?.seed,
    [ATTR.choiceCount]: request.n > 1 ? request.n : undefined,
    [ATTR.conversationId]: conversationId,
  };
  return Object.fromEntries(Object.entries(attributes).filter(([, value]) => value !== undefined));
}

/** A proto float (32 bits) as the caller wrote it: 0.7, not 0.699999988079071. */
function asSent(value: number | undefined): number | undefined {
  return value === undefined ? undefined : Number(value.toPrecision(7));
}

/** A finish reason as the semconv's list holds it (the OpenAI spelling where one exists). */
export function finishReasonName(reason: FinishReason): string {
  switch (reason) {
    case FinishReason.STOP:
      return "stop";
    case FinishReason.LENGTH:
    case FinishReason.CONTEXT_FULL:
      return "length";
    case FinishReason.TOOL_CALLS:
      return "tool_calls";
    case FinishReason.ABORT:
      return "cancelled";
    default:
      return "unknown";
  }
}

/** Usage summed over a generation's finishes (one per choice). */
export function usageAttributes(finishes: readonly Finish[]): Attributes {
  const first = finishes[0];
  if (first === undefined) return {};
  const sum = (of: (finish: Finish) => number) => finishes.reduce((total, finish) => total + of(finish), 0);
  return {
    [ATTR.finishReasons]: finishes.map((finish) => finishReasonName(finish.reason)),
    [ATTR.inputTokens]: first.promptTokens,
    [ATTR.outputTokens]: sum((finish) => finish.completionTokens),
    [ATTR.cacheReadTokens]: first.cachedTokens,
    [ATTR.reasoningTokens]: sum((finish) => finish.reasoningTokens),
  };
}
