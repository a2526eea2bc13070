// Traces on the Node edge (docs/decisions.md, "Traces"): OpenTelemetry's SDK with its OTLP/HTTP
// exporter (protobuf or JSON, OTEL_EXPORTER_OTLP_PROTOCOL), spans batched; what createApp traces with.
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPTraceExporter as JsonExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as ProtobufExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BasicTracerProvider, BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";
import type { TraceSettings } from "../../config/parse.js";
import { SERVER_NAME, SERVER_VERSION } from "../../core/identity.js";
import type { Tracing } from "../../trace/host-tracing.js";

export interface NodeTracing {
  readonly tracing: Tracing;
  /** Sends the spans still batched and stops. */
  shutdown(): Promise<void>;
}

/** The tracer of `settings`: spans go to `settings.url` in batches. */
export function startNodeTracing(settings: TraceSettings): NodeTracing {
  const exporter =
    settings.protocol === "http/json"
      ? new JsonExporter({ url: settings.url })
      : new ProtobufExporter({ url: settings.url });
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ "service.name": settings.serviceName, "service.version": SERVER_VERSION }),
    spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: 1000 })],
  });
  const tracing: Tracing = {
    tracer: provider.getTracer(SERVER_NAME, SERVER_VERSION),
    propagator: new W3CTraceContextPropagator(),
    captureContent: settings.captureContent,
  };
  return { tracing, shutdown: () => provider.shutdown() };
}
