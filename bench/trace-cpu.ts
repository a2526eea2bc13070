// The CPU one traced request costs, for `npm run bench:trace` (bench/trace.ts): the edge's two spans
// (made, fed 64 tokens and a finish, ended) and the sidecar's four (its call watched over the same
// events), each batched and encoded by OpenTelemetry's protobuf serializer as an export would,
// against the same work untraced (the sidecar still keeps its GenAI metrics). In this process, no
// network: a figure that contention moves far less than a whole stack's latency.
import { create } from "@bufbuild/protobuf";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { ProtobufTraceSerializer } from "@opentelemetry/otlp-transformer";
import {
  BasicTracerProvider,
  type ReadableSpan,
  SimpleSpanProcessor,
  type SpanExporter,
} from "@opentelemetry/sdk-trace-base";
import { Registry } from "prom-client";
import {
  FinishReason,
  FinishSchema,
  GenerateRequestSchema,
  StartSchema,
  TokenSchema,
} from "../proto/gen/inference/v1/inference_pb.js";
import { RequestTrace } from "../edge/trace/request-trace.js";
import type { GenerateEvent } from "../sidecar/engine/decode/generate.js";
import { GenAiServerMetrics } from "../sidecar/metrics/genai-metrics.js";
import { observed } from "../sidecar/trace/observe.js";

const TOKENS = 64;

/** An exporter that only encodes, as the OTLP/HTTP exporter does before it sends. */
const encoding: SpanExporter = {
  export(spans: ReadableSpan[], done) {
    ProtobufTraceSerializer.serializeRequest(spans);
    done({ code: 0 });
  },
  shutdown: () => Promise.resolve(),
};

const generateRequest = create(GenerateRequestSchema, {
  model: "bench",
  input: { case: "chat", value: { messages: [] } },
  maxTokens: TOKENS,
});
const token = create(TokenSchema, { text: "x" });
const finish = create(FinishSchema, {
  reason: FinishReason.LENGTH,
  promptTokens: 20,
  completionTokens: TOKENS,
  timings: { queueMs: 1, promptMs: 5, generationMs: 60 },
});

async function* events(): AsyncGenerator<GenerateEvent> {
  for (let i = 0; i < TOKENS; i++) yield { event: { case: "token", value: token } };
  yield { event: { case: "finish", value: finish } };
}

/** Microseconds of CPU per request, untraced and traced, over `requests` requests each. */
export async function cpuPerRequest(requests = 2000): Promise<{ off: number; on: number }> {
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(encoding)] });
  const tracing = {
    tracer: provider.getTracer("bench"),
    propagator: new W3CTraceContextPropagator(),
    captureContent: false,
  };
  const metrics = new GenAiServerMetrics(new Registry());
  const one = async (traced: boolean): Promise<void> => {
    const request = new Request("http://edge/v1/chat/completions", {
      method: "POST",
      headers: { traceparent: `00-${"a".repeat(32)}-${"b".repeat(16)}-01` },
    });
    const trace = traced ? new RequestTrace(tracing, request, "/v1/chat/completions") : undefined;
    trace?.route("/v1/chat/completions");
    const headers = new Headers(trace?.generation(generateRequest, true, undefined, {}) ?? {});
    trace?.started(create(StartSchema, { promptTokens: 20 }), "chatcmpl-x", "bench");
    for await (const event of observed(events(), generateRequest, headers, {
      metrics,
      tracing: traced ? { ...tracing, shutdown: async () => undefined } : undefined,
    })) {
      if (event.event?.case === "token") trace?.token(event.event.value as never);
    }
    trace?.finished(finish);
    trace?.end({ status: 200, outcome: "length", errorType: undefined });
  };
  const measure = async (traced: boolean): Promise<number> => {
    for (let i = 0; i < requests / 10; i++) await one(traced); // warm-up
    const before = process.cpuUsage();
    for (let i = 0; i < requests; i++) await one(traced);
    const used = process.cpuUsage(before);
    return (used.user + used.system) / requests;
  };
  const off = await measure(false);
  const on = await measure(true);
  return { off, on };
}
