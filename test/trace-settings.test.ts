// The trace settings of the edge and the sidecar (docs/decisions.md, "Traces"): off without an
// OTLP endpoint, the traces endpoint before the base one, only the OTLP/HTTP protocols.
import { describe, expect, it } from "vitest";
import { parseEdgeConfig, traceSettingsOf } from "../edge/config/parse.js";
import { traceSettingsFromEnv } from "../sidecar/trace/trace-settings.js";

describe("trace settings", () => {
  it("are off without an endpoint, on both", () => {
    expect(traceSettingsOf(parseEdgeConfig({}, "node"))).toBeUndefined();
    expect(traceSettingsOf(parseEdgeConfig({ OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" }, "worker"))).toBeUndefined();
    expect(traceSettingsFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "" })).toBeUndefined();
  });

  it("send to the base endpoint's /v1/traces, or to the traces endpoint as given", () => {
    const base = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/" };
    expect(traceSettingsOf(parseEdgeConfig(base, "node"))).toEqual({
      url: "http://collector:4318/v1/traces",
      protocol: "http/protobuf",
      serviceName: "llm-edge",
      captureContent: false,
    });
    expect(traceSettingsFromEnv(base)).toEqual({
      url: "http://collector:4318/v1/traces",
      protocol: "http/protobuf",
      serviceName: "llm-sidecar",
    });
    const both = {
      ...base,
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://other:9999/t",
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_SERVICE_NAME: "s",
    };
    expect(
      traceSettingsOf(
        parseEdgeConfig({ ...both, OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: "true" }, "worker"),
      ),
    ).toEqual({
      url: "http://other:9999/t",
      protocol: "http/json",
      serviceName: "s",
      captureContent: true,
    });
    expect(traceSettingsFromEnv(both)).toEqual({ url: "http://other:9999/t", protocol: "http/json", serviceName: "s" });
  });

  it("refuse a protocol other than http/protobuf and http/json, naming the variable", () => {
    const grpc = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4317", OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" };
    expect(() => parseEdgeConfig(grpc, "node")).toThrow(/OTEL_EXPORTER_OTLP_PROTOCOL/);
    expect(() => traceSettingsFromEnv(grpc)).toThrow(
      'OTEL_EXPORTER_OTLP_PROTOCOL must be http/protobuf or http/json, got "grpc"',
    );
  });
});
