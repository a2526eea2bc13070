// One parse for both hosts: the environment (the Node process's variables, or the Worker's env
// with its vars and secrets) → the typed settings of settings.ts, or one EdgeConfigError naming
// every bad variable and what it accepts. An empty value counts as unset.
import { Refusal } from "./kinds.js";
import { SETTINGS_OF, type EdgeConfig, type Host, type Setting } from "./settings.js";

/** A setting the edge cannot start with; `problems` has one line per variable. */
export class EdgeConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(problems.join("; "));
    this.name = "EdgeConfigError";
  }
}

/** A Worker var may be a number, a boolean or an object ([vars] in wrangler.toml); read as text. */
function rawOf(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  const raw = typeof value === "string" ? value : typeof value === "object" ? JSON.stringify(value) : String(value);
  return raw.trim() === "" ? undefined : raw;
}

/** `NAME: "value" is not …`, without the value for secrets and URLs. */
function problemOf(setting: Setting, raw: string, error: unknown): string {
  const detail = error instanceof Refusal && error.message !== "" ? error.message : undefined;
  if (detail !== undefined) return `${setting.env}: ${detail}; it takes ${setting.kind.accepts}`;
  const shown = setting.secret === true ? "the value" : JSON.stringify(raw);
  return `${setting.env}: ${shown} is not ${setting.kind.accepts}`;
}

/** The settings `host` reads from `env`, defaults filled in; throws an EdgeConfigError. */
export function parseEdgeConfig<H extends Host>(env: Readonly<Record<string, unknown>>, host: H): EdgeConfig<H> {
  const table: Readonly<Record<string, Setting>> = SETTINGS_OF[host];
  const config: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [key, setting] of Object.entries(table)) {
    const raw = rawOf(env[setting.env]);
    if (raw === undefined) {
      config[key] = setting.default;
      continue;
    }
    try {
      config[key] = setting.kind.parse(raw);
    } catch (error) {
      problems.push(problemOf(setting, raw, error));
    }
  }
  if (problems.length > 0) throw new EdgeConfigError(problems);
  return config as EdgeConfig<H>;
}

/** The sidecars to call: `SIDECAR_URLS` when it names any, else `SIDECAR_URL` (or its default). */
export function sidecarUrlsOf(config: EdgeConfig<Host>): string[] {
  return config.sidecarUrls !== undefined && config.sidecarUrls.length > 0 ? config.sidecarUrls : [config.sidecarUrl];
}

/** Where and how spans are sent (docs/decisions.md, "Traces"). */
export interface TraceSettings {
  /** The full URL of the collector's traces endpoint. */
  readonly url: string;
  readonly protocol: "http/protobuf" | "http/json";
  readonly serviceName: string;
  readonly captureContent: boolean;
}

/** The trace settings, or undefined when neither OTLP endpoint is set (traces off). */
export function traceSettingsOf(config: EdgeConfig<Host>): TraceSettings | undefined {
  const url =
    config.otlpTracesEndpoint ??
    (config.otlpEndpoint === undefined ? undefined : `${config.otlpEndpoint.replace(/\/+$/, "")}/v1/traces`);
  if (url === undefined) return undefined;
  return {
    url,
    protocol: config.otlpProtocol,
    serviceName: config.otelServiceName,
    captureContent: config.captureContent,
  };
}
