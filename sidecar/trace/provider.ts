// The sidecar's tracer (docs/decisions.md, "Traces"): OpenTelemetry's SDK, spans batched and sent
// over OTLP/HTTP in the protocol the settings name.
import type { TextMapPropagator, Tracer } from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPTraceExporter as JsonExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as ProtobufExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BasicTracerProvider, BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";
import type { SidecarTraceSettings } from "./trace-settings.js";

export interface SidecarTracing {
  readonly tracer: Tracer;
  /** W3C Trace Context: the caller's `traceparent` / `tracestate`. */
  readonly propagator: TextMapPropagator;
  /** Sends the spans still batched and stops. */
  shutdown(): Promise<void>;
}

export function startSidecarTracing(settings: SidecarTraceSettings): SidecarTracing {
  const exporter =
    settings.protocol === "http/json"
      ? new JsonExporter({ url: settings.url })
      : new ProtobufExporter({ url: settings.url });
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ "service.name": settings.serviceName }),
    spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: 1000 })],
  });
  return {
    tracer: provider.getTracer("llm-sidecar"),
    propagator: new W3CTraceContextPropagator(),
    shutdown: () => provider.shutdown(),
  };
}
