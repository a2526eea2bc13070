// The sidecar's trace settings, from the standard OpenTelemetry variables (docs/decisions.md,
// "Traces"): off unless an OTLP endpoint is set.

export interface SidecarTraceSettings {
  /** The full URL of the collector's traces endpoint. */
  readonly url: string;
  readonly protocol: "http/protobuf" | "http/json";
  readonly serviceName: string;
}

/** The settings of `env`, or undefined (traces off); throws on a protocol other than the HTTP ones. */
export function traceSettingsFromEnv(env: NodeJS.ProcessEnv): SidecarTraceSettings | undefined {
  const base = env["OTEL_EXPORTER_OTLP_ENDPOINT"] || undefined;
  const url =
    env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] ||
    (base === undefined ? undefined : `${base.replace(/\/+$/, "")}/v1/traces`);
  if (url === undefined) return undefined;
  const protocol = env["OTEL_EXPORTER_OTLP_PROTOCOL"] || "http/protobuf";
  if (protocol !== "http/protobuf" && protocol !== "http/json")
    throw new Error(`OTEL_EXPORTER_OTLP_PROTOCOL must be http/protobuf or http/json, got "${protocol}"`);
  return { url, protocol, serviceName: env["OTEL_SERVICE_NAME"] || "llm-sidecar" };
}
