// Traces under workerd (docs/decisions.md, "Traces"): OpenTelemetry's SDK (its TracerProvider, the
// defaults sdk-trace-base's BasicTracerProvider reads from an environment workerd does not have) with
// an exporter over `fetch` (workerd has no Node HTTP client), the spans encoded by otlp.ts (protobuf
// or JSON, the bytes of OpenTelemetry's serializers), and sent once a request's spans have ended,
// inside that request's `waitUntil`, so an isolate that goes idle loses none.
import { ExportResultCode, W3CTraceContextPropagator, type ExportResult } from "@opentelemetry/core";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, type ReadableSpan, type SpanExporter, TracerProvider } from "@opentelemetry/sdk-trace";
import type { TraceSettings } from "../../config/parse.js";
import { SERVER_NAME, SERVER_VERSION } from "../../core/identity.js";
import type { Tracing } from "../../trace/host-tracing.js";
import { otlpJson, otlpProtobuf } from "./otlp.js";

/** What workerd hands each request to keep work going after the answer (ExecutionContext). */
export interface WaitUntil {
  waitUntil(promise: Promise<unknown>): void;
}

/** OTLP/HTTP over `fetch`: one POST per batch, in the settings' encoding. */
class FetchSpanExporter implements SpanExporter {
  constructor(private readonly settings: TraceSettings) {}

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    const json = this.settings.protocol === "http/json";
    const body = (json ? otlpJson : otlpProtobuf)(spans);
    const headers = { "content-type": json ? "application/json" : "application/x-protobuf" };
    fetch(this.settings.url, { method: "POST", headers, body: body as Uint8Array<ArrayBuffer> }).then(
      async (response) => {
        await response.body?.cancel();
        done({ code: response.ok ? ExportResultCode.SUCCESS : ExportResultCode.FAILED });
      },
      (error: unknown) =>
        done({ code: ExportResultCode.FAILED, error: error instanceof Error ? error : new Error(String(error)) }),
    );
  }

  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

export interface WorkerTracing {
  readonly tracing: Tracing;
  /** Remembers the request's `waitUntil`: its spans are sent within it once they end. */
  track(request: Request, context: WaitUntil): void;
}

/** The isolate's tracer: spans batched, the batch sent when a request's spans end. */
export function startWorkerTracing(settings: TraceSettings): WorkerTracing {
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ "service.name": settings.serviceName, "service.version": SERVER_VERSION }),
    spanProcessors: [new BatchSpanProcessor({ exporter: new FetchSpanExporter(settings) })],
  });
  const contexts = new WeakMap<Request, WaitUntil>();
  const tracing: Tracing = {
    tracer: provider.getTracer(SERVER_NAME, SERVER_VERSION),
    propagator: new W3CTraceContextPropagator(),
    captureContent: settings.captureContent,
    onEnded: (request) => contexts.get(request)?.waitUntil(provider.forceFlush()),
  };
  return { tracing, track: (request, context) => contexts.set(request, context) };
}
