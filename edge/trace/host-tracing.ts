// What a host hands the app to trace requests (edge/trace/README.md): built from
// OTEL_EXPORTER_OTLP_* by the host; absent when tracing is off, and then no span is made.
import type { TextMapPropagator, Tracer } from "@opentelemetry/api";

export interface Tracing {
  readonly tracer: Tracer;
  /** W3C Trace Context: reads the client's `traceparent` / `tracestate`, writes the sidecar's. */
  readonly propagator: TextMapPropagator;
  /** OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: prompt and reply text on the GenAI span. */
  readonly captureContent: boolean;
  /** Called once a request's spans have ended (workerd flushes them within the request's `waitUntil`). */
  readonly onEnded?: ((request: Request) => void) | undefined;
}
