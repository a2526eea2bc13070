// A Generate call's stream watched as it passes (docs/decisions.md, "Traces"): the GenAI server
// metrics always; with traces on, the call's server span, a child of the caller's `traceparent`,
// and once the generation finishes its queue wait, prompt evaluation and decoding spans, laid back
// from the finish's timings (proto: Timings). No prompt or reply text is recorded.
import { type Attributes, type Span, SpanKind, SpanStatusCode, trace, ROOT_CONTEXT } from "@opentelemetry/api";
import { Code, ConnectError } from "@connectrpc/connect";
import { FinishReason, type GenerateRequest } from "../../proto/gen/inference/v1/inference_pb.js";
import type { GenerateEvent } from "../engine/decode/generate.js";
import type { Registry } from "prom-client";
import { GenAiServerMetrics, type GenerationLabels } from "../metrics/genai-metrics.js";
import { startSidecarTracing, type SidecarTracing } from "./provider.js";
import type { SidecarTraceSettings } from "./trace-settings.js";

type FinishInit = Extract<NonNullable<GenerateEvent["event"]>, { case: "finish" }>["value"];

const headerGetter = {
  keys: (carrier: Headers) => [...carrier.keys()],
  get: (carrier: Headers, key: string) => carrier.get(key) ?? undefined,
};

/** Now, in milliseconds since the epoch, finer than a millisecond (what spans' times take). */
const epochMs = (): number => performance.timeOrigin + performance.now();

export interface Observer {
  readonly metrics: GenAiServerMetrics;
  readonly tracing?: SidecarTracing | undefined;
}

/** The GenAI server metrics in `registry`, and the tracer of `settings` when traces are on. */
export function startObserver(settings: SidecarTraceSettings | undefined, registry: Registry): Observer {
  return {
    metrics: new GenAiServerMetrics(registry),
    tracing: settings === undefined ? undefined : startSidecarTracing(settings),
  };
}

/** `events` as they were, watched: metrics, and spans when traces are on. */
export async function* observed(
  events: AsyncIterable<GenerateEvent>,
  request: GenerateRequest,
  headers: Headers,
  observer: Observer,
): AsyncGenerator<GenerateEvent, void, undefined> {
  const arrived = epochMs();
  const labels: GenerationLabels = {
    operation: request.input.case === "chat" ? "chat" : "text_completion",
    model: request.model,
  };
  const span = observer.tracing === undefined ? undefined : serverSpan(observer.tracing, labels, headers, arrived);
  let firstToken: number | undefined;
  const finishes: FinishInit[] = [];
  try {
    for await (const event of events) {
      if (event.event?.case === "token") firstToken ??= epochMs();
      else if (event.event?.case === "finish") finishes.push(event.event.value);
      yield event;
    }
  } catch (error) {
    const errorType = Code[ConnectError.from(error).code] ?? "Unknown";
    observer.metrics.record(labels, { total: (epochMs() - arrived) / 1000 }, errorType);
    span?.setAttribute("error.type", errorType).setStatus({ code: SpanStatusCode.ERROR });
    throw error;
  } finally {
    if (span !== undefined) endServerSpan(span, finishes, observer.tracing?.tracer);
  }
  const last = finishes.at(-1);
  if (last === undefined) return;
  const outputTokens = finishes.reduce((sum, finish) => sum + (finish.completionTokens ?? 0), 0);
  const perToken =
    outputTokens > finishes.length
      ? (last.timings?.generationMs ?? 0) / 1000 / (outputTokens - finishes.length)
      : undefined;
  const firstTokenSeconds = firstToken === undefined ? undefined : (firstToken - arrived) / 1000;
  observer.metrics.record(labels, { total: (epochMs() - arrived) / 1000, firstToken: firstTokenSeconds, perToken });
}

function serverSpan(tracing: SidecarTracing, labels: GenerationLabels, headers: Headers, arrived: number): Span {
  const parent = tracing.propagator.extract(ROOT_CONTEXT, headers, headerGetter);
  const attributes: Attributes = {
    "rpc.system": "grpc",
    "rpc.service": "inference.v1.InferenceService",
    "rpc.method": "Generate",
    "gen_ai.operation.name": labels.operation,
    "gen_ai.provider.name": "llama.cpp",
    "gen_ai.request.model": labels.model,
  };
  return tracing.tracer.startSpan(
    "inference.v1.InferenceService/Generate",
    { kind: SpanKind.SERVER, attributes, startTime: arrived },
    parent,
  );
}

/**
 * The server span's end, after its steps: queue wait, prompt evaluation, decoding (the finish's timings, laid back
 * from now).
 */
function endServerSpan(
  span: Span,
  finishes: readonly FinishInit[],
  tracer: SidecarTracing["tracer"] | undefined,
): void {
  const last = finishes.at(-1);
  const now = epochMs();
  // A caller that left: no finish came through, or the generation's finish says so.
  if (last === undefined || last.reason === FinishReason.ABORT) span.addEvent("cancelled");
  if (last === undefined || tracer === undefined) {
    span.end(now);
    return;
  }
  const timings = last.timings ?? {};
  const decodeStart = now - (timings.generationMs ?? 0);
  const promptStart = decodeStart - (timings.promptMs ?? 0);
  const queueStart = promptStart - (timings.queueMs ?? 0);
  const context = trace.setSpan(ROOT_CONTEXT, span);
  const step = (name: string, start: number, end: number, attributes: Attributes) =>
    tracer.startSpan(name, { startTime: start, attributes }, context).end(end);
  step("queue wait", queueStart, promptStart, {});
  step("prompt evaluation", promptStart, decodeStart, {
    "gen_ai.usage.input_tokens": last.promptTokens ?? 0,
    "gen_ai.usage.cache_read.input_tokens": last.cachedTokens ?? 0,
  });
  step("decoding", decodeStart, now, {
    "gen_ai.usage.output_tokens": finishes.reduce((sum, finish) => sum + (finish.completionTokens ?? 0), 0),
    "gen_ai.usage.reasoning.output_tokens": finishes.reduce((sum, finish) => sum + (finish.reasoningTokens ?? 0), 0),
  });
  span.end(now);
}
