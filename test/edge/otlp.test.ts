// The Worker's OTLP bodies (edge/hosts/worker/otlp.ts) are byte for byte those of OpenTelemetry's
// own trace serializers, protobuf and JSON, for spans as the edge makes them and for every kind of
// value the SDK keeps.
import { type Context, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, TraceFlags } from "@opentelemetry/api";
import { TraceState } from "@opentelemetry/core";
import { JsonTraceSerializer, ProtobufTraceSerializer } from "@opentelemetry/otlp-transformer";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { type ReadableSpan, type SpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import { describe, expect, it } from "vitest";
import { otlpJson, otlpProtobuf } from "../../edge/hosts/worker/otlp.js";

function remoteParent(sampled: boolean, state?: string): Context {
  const context = { traceId: "0af7651916cd43dd8448eb211c80319c", spanId: "b7ad6b7169203331", isRemote: true };
  const traceFlags = sampled ? TraceFlags.SAMPLED : TraceFlags.NONE;
  return trace.setSpanContext(
    ROOT_CONTEXT,
    state === undefined ? { ...context, traceFlags } : { ...context, traceFlags, traceState: new TraceState(state) },
  );
}

/** Spans as the edge ends them (server and GenAI spans), and one of every value, event and link. */
function spans(): ReadableSpan[] {
  const ended: ReadableSpan[] = [];
  const collect: SpanProcessor = {
    onStart: () => {},
    onEnd: (span) => ended.push(span),
    forceFlush: async () => {},
    shutdown: async () => {},
  };
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ "service.name": "llm-edge", "service.version": "0.1.0" }),
    spanProcessors: [collect],
  });
  const tracer = provider.getTracer("llm-edge", "0.1.0");
  const server = tracer.startSpan(
    "POST",
    { kind: SpanKind.SERVER, attributes: { "http.request.method": "POST" } },
    remoteParent(true, "a=1,b=2"),
  );
  server.updateName("POST /v1/chat/completions");
  const genAi = tracer.startSpan("chat m", { kind: SpanKind.CLIENT }, trace.setSpan(ROOT_CONTEXT, server));
  genAi.setAttributes({
    "gen_ai.usage.input_tokens": 12,
    ratio: 0.5,
    big: 2 ** 60,
    negative: -7,
    huge: 2 ** 64,
    ok: true,
    text: "é ✓",
  });
  genAi.setAttributes({ list: ["a", "b"], numbers: [1, 2.5], holes: [null, "x", undefined] as string[], empty: "" });
  genAi.addEvent("client_left");
  genAi.addEvent("with", { n: 1, s: "v" });
  genAi.addLink({ context: server.spanContext(), attributes: { why: "follows" } });
  genAi.setStatus({ code: SpanStatusCode.ERROR, message: "broke" });
  genAi.end();
  server.setStatus({ code: SpanStatusCode.ERROR });
  server.end();
  tracer.startSpan("GET", { kind: SpanKind.INTERNAL }, remoteParent(false)).end();
  provider.getTracer("other").startSpan("alone").end();
  return ended;
}

describe("the Worker's OTLP bodies", () => {
  const ended = spans();

  it("has spans to encode: three recorded, the unsampled parent's child not", () => {
    expect(ended.map((span) => span.name)).toEqual(["chat m", "POST /v1/chat/completions", "alone"]);
  });

  it("protobuf: the bytes of OpenTelemetry's ProtobufTraceSerializer", () => {
    expect(Buffer.from(otlpProtobuf(ended)).toString("hex")).toBe(
      Buffer.from(ProtobufTraceSerializer.serializeRequest(ended) ?? []).toString("hex"),
    );
  });

  it("JSON: the text of OpenTelemetry's JsonTraceSerializer", () => {
    const decode = (bytes: Uint8Array | undefined) => new TextDecoder().decode(bytes);
    expect(decode(otlpJson(ended))).toBe(decode(JsonTraceSerializer.serializeRequest(ended)));
  });

  it("encodes no spans as an empty request", () => {
    expect(otlpProtobuf([])).toEqual(new Uint8Array());
    expect(new TextDecoder().decode(otlpJson([]))).toBe('{"resourceSpans":[]}');
  });
});
