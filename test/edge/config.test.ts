// The edge's settings table (edge/config/): every kind, the defaults (equal to what the app and the
// Node host fall back to), and one error naming each bad variable and what it accepts.
import { describe, expect, it } from "vitest";
import { DEFAULT_KEEP_ALIVE_MS, DEFAULT_SIDECAR_STALL_MS } from "../../edge/http/app.js";
import { DEFAULT_MAX_BODY_BYTES } from "../../edge/core/body.js";
import { DEFAULT_MEDIA_FETCH_TIMEOUT_MS, DEFAULT_MEDIA_MAX_BYTES } from "../../edge/core/media/settings.js";
import { mediaOptionsOf } from "../../edge/config/media.js";
import { EdgeConfigError, parseEdgeConfig, sidecarUrlsOf } from "../../edge/config/parse.js";
import { DEFAULT_LIMITS } from "../../edge/hosts/node/server.js";
import { DEFAULT_STORE_PATH } from "../../edge/hosts/node/store.js";
import { DEFAULT_FILES_PATH } from "../../edge/hosts/node/files.js";
import { DEFAULT_SIDECAR_URL } from "../../edge/upstream/connection.js";

function refusal(env: Record<string, unknown>, host: "node" | "worker" = "node"): string {
  try {
    parseEdgeConfig(env, host);
  } catch (error) {
    expect(error).toBeInstanceOf(EdgeConfigError);
    return (error as Error).message;
  }
  throw new Error("accepted");
}

describe("edge settings", () => {
  it("fill in the defaults the app and the Node host fall back to", () => {
    const node = parseEdgeConfig({}, "node");
    expect(node).toEqual({
      sidecarUrl: DEFAULT_SIDECAR_URL,
      sidecarUrls: undefined,
      sidecarToken: undefined,
      sidecarHeaders: undefined,
      apiKeys: undefined,
      allowOpen: false,
      corsOrigins: undefined,
      rateLimit: undefined,
      maxBodyBytes: DEFAULT_MAX_BODY_BYTES,
      mediaMaxBytes: DEFAULT_MEDIA_MAX_BYTES,
      mediaFetch: true,
      mediaFetchTimeoutMs: DEFAULT_MEDIA_FETCH_TIMEOUT_MS,
      mediaAllowHosts: undefined,
      keepAliveMs: DEFAULT_KEEP_ALIVE_MS,
      sidecarStallMs: DEFAULT_SIDECAR_STALL_MS,
      logRequests: true,
      logBodies: false,
      otlpEndpoint: undefined,
      otlpTracesEndpoint: undefined,
      otlpProtocol: "http/protobuf",
      otelServiceName: "llm-edge",
      captureContent: false,
      port: 8080,
      hostname: "127.0.0.1",
      sidecarCa: undefined,
      storePath: DEFAULT_STORE_PATH,
      filesPath: DEFAULT_FILES_PATH,
      ...DEFAULT_LIMITS,
    });
    const worker = parseEdgeConfig({}, "worker");
    expect(worker.abandonProbeMs).toBe(500);
    expect("port" in worker).toBe(false);
    expect("abandonProbeMs" in node).toBe(false);
  });

  it("read MEDIA_* as the app's media options, allowed hosts in lower case without brackets", () => {
    const config = parseEdgeConfig(
      { MEDIA_MAX_BYTES: "1024", MEDIA_FETCH: "false", MEDIA_ALLOW_HOSTS: " 127.0.0.1, Images.Internal ,[::1]" },
      "worker",
    );
    expect(mediaOptionsOf(config)).toEqual({
      maxBytes: 1024,
      fetch: false,
      fetchTimeoutMs: DEFAULT_MEDIA_FETCH_TIMEOUT_MS,
      allowHosts: ["127.0.0.1", "images.internal", "::1"],
    });
  });

  it("treat an empty value as unset", () => {
    expect(parseEdgeConfig({ RATE_LIMIT: "", EDGE_HOST: " ", LOG_REQUESTS: "" }, "node")).toMatchObject({
      rateLimit: undefined,
      hostname: "127.0.0.1",
      logRequests: true,
    });
  });

  it("read integers, booleans, text, URLs, URL lists and JSON objects", () => {
    const config = parseEdgeConfig(
      {
        RATE_LIMIT: " 60 ",
        EDGE_PORT: "0",
        ALLOW_OPEN: "TRUE",
        LOG_REQUESTS: "false",
        STORE_PATH: ":memory:",
        SIDECAR_URL: "https://gpu.example:443",
        SIDECAR_URLS: " http://10.0.0.1:50051, https://gpu2.example:443 ,",
        SIDECAR_HEADERS: '{"CF-Access-Client-Id":"id"}',
        API_KEYS: `one, sha256:${"ab".repeat(32)}`,
        CORS_ORIGINS: "*",
      },
      "node",
    );
    expect(config).toMatchObject({
      rateLimit: 60,
      port: 0,
      allowOpen: true,
      logRequests: false,
      storePath: ":memory:",
      sidecarUrl: "https://gpu.example:443",
      sidecarUrls: ["http://10.0.0.1:50051", "https://gpu2.example:443"],
      sidecarHeaders: { "CF-Access-Client-Id": "id" },
      apiKeys: `one, sha256:${"ab".repeat(32)}`,
      corsOrigins: "*",
    });
    expect(sidecarUrlsOf(config)).toEqual(["http://10.0.0.1:50051", "https://gpu2.example:443"]);
    expect(sidecarUrlsOf(parseEdgeConfig({ SIDECAR_URL: "http://one:1", SIDECAR_URLS: ", ," }, "node"))).toEqual([
      "http://one:1",
    ]);
  });

  it("read a Worker var that wrangler.toml gives as a number, a boolean or an object", () => {
    expect(
      parseEdgeConfig({ RATE_LIMIT: 60, ALLOW_OPEN: true, SIDECAR_HEADERS: { a: "b" }, DB: {} }, "worker"),
    ).toMatchObject({
      rateLimit: 60,
      allowOpen: true,
      sidecarHeaders: { a: "b" },
    });
  });

  it("name the variable and what it accepts", () => {
    expect(refusal({ RATE_LIMIT: "6O" })).toBe('RATE_LIMIT: "6O" is not a non-negative integer');
    expect(refusal({ RATE_LIMIT: "6O" }, "worker")).toBe('RATE_LIMIT: "6O" is not a non-negative integer');
    expect(refusal({ KEEP_ALIVE_MS: "-1" })).toBe('KEEP_ALIVE_MS: "-1" is not a non-negative integer');
    expect(refusal({ MAX_BODY_BYTES: "1e6" })).toBe('MAX_BODY_BYTES: "1e6" is not a non-negative integer');
    expect(refusal({ EDGE_PORT: "70000" })).toBe('EDGE_PORT: "70000" is not an integer from 0 to 65535');
    expect(refusal({ ALLOW_OPEN: "yes" })).toBe('ALLOW_OPEN: "yes" is not true or false');
    expect(refusal({ ABANDON_PROBE_MS: "soon" }, "worker")).toBe(
      'ABANDON_PROBE_MS: "soon" is not a non-negative integer',
    );
  });

  it("never repeat a secret or a URL in a refusal", () => {
    expect(refusal({ SIDECAR_URL: "tcp://user:pw@host" })).toBe("SIDECAR_URL: the value is not an http(s) URL");
    expect(refusal({ SIDECAR_URLS: "http://a:1,gpu2:50051" })).toBe(
      "SIDECAR_URLS: entry 2 is not an http(s) URL; it takes http(s) URLs, comma-separated, each once",
    );
    expect(refusal({ SIDECAR_URLS: "http://a:1,http://a:1" })).toBe(
      "SIDECAR_URLS: names the same sidecar twice; it takes http(s) URLs, comma-separated, each once",
    );
    expect(refusal({ SIDECAR_HEADERS: "secret{" })).toBe(
      "SIDECAR_HEADERS: the value is not JSON; it takes a JSON object of header names to string values",
    );
    expect(refusal({ SIDECAR_HEADERS: '{"a":1}' })).toBe(
      "SIDECAR_HEADERS: the value is not a JSON object of header names to string values",
    );
    expect(refusal({ SIDECAR_HEADERS: '["secret"]' })).not.toContain("secret");
    expect(refusal({ API_KEYS: "good,sha256:beef" })).toBe(
      "API_KEYS: entry 2: sha256: must be followed by 64 hex digits; it takes keys, comma-separated, each a key or " +
        "sha256:<64 hex digits>",
    );
  });

  it("name every bad variable in one error, and read only the host's own", () => {
    const error = (() => {
      try {
        return parseEdgeConfig({ RATE_LIMIT: "6O", LOG_BODIES: "1", EDGE_PORT: "x" }, "worker");
      } catch (caught) {
        return caught as EdgeConfigError;
      }
    })() as EdgeConfigError;
    expect(error.problems).toEqual([
      'RATE_LIMIT: "6O" is not a non-negative integer',
      'LOG_BODIES: "1" is not true or false',
    ]);
    expect(parseEdgeConfig({ ABANDON_PROBE_MS: "x" }, "node").port).toBe(8080);
  });
});
