// --metrics-port: a second port that serves GET /metrics and GET /healthz without the token, so an
// Inference Gateway's endpoint picker (which cannot send a bearer token) can scrape a sidecar whose
// main port is locked and bound to 127.0.0.1 inside its pod. Nothing else is served there.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readConfig } from "../../sidecar/config.js";
import type { RunningSidecar } from "../../sidecar/start-sidecar.js";
import { readMetrics, startTestSidecar } from "../support/sidecar.js";

const TOKEN = "sidecar-secret-metrics";

describe("the metrics port", () => {
  let sidecar: RunningSidecar;
  let metricsUrl: string;
  beforeAll(async () => {
    sidecar = await startTestSidecar({ token: TOKEN, metricsPort: 0 });
    metricsUrl = `http://127.0.0.1:${sidecar.metricsPort}`;
  });
  afterAll(async () => {
    await sidecar.stop();
  });

  it("serves the metrics without the token, while the main port still asks for it", async () => {
    expect(sidecar.metricsPort).not.toBe(sidecar.port);
    expect((await fetch(`${sidecar.url}/metrics`)).status).toBe(401);
    const response = await fetch(`${metricsUrl}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
    const metrics = await readMetrics(metricsUrl);
    expect(metrics).toMatchObject({
      sidecar_queue_length: 0,
      sidecar_sequences_busy: 0,
      sidecar_kv_cache_usage_ratio: 0,
    });
    expect(await readMetrics(sidecar.url, { headers: { authorization: `Bearer ${TOKEN}` } })).toMatchObject({
      sidecar_queue_length: 0,
    });
  });

  it("answers /healthz, and 404 for anything else (no gRPC-Web, no other path)", async () => {
    const health = await fetch(`${metricsUrl}/healthz`);
    expect([health.status, await health.text()]).toEqual([200, "ok\n"]);
    const grpcWeb = await fetch(`${metricsUrl}/inference.v1.InferenceService/ListModels`, {
      method: "POST",
      headers: { "content-type": "application/grpc-web+proto", authorization: `Bearer ${TOKEN}` },
      body: new Uint8Array([0, 0, 0, 0, 0]),
    });
    expect([grpcWeb.status, await grpcWeb.text()]).toEqual([404, "not found\n"]);
    expect((await fetch(`${metricsUrl}/`)).status).toBe(404);
  });
});

describe("readConfig, --metrics-port", () => {
  it(
    "is off unless given; METRICS_PORT and METRICS_HOST (127.0.0.1 by default) set it; bad values name the " + "flag",
    () => {
      expect(readConfig([], {})).toMatchObject({ metricsPort: undefined, metricsHost: "127.0.0.1" });
      expect(readConfig([], { METRICS_PORT: "9400", METRICS_HOST: "0.0.0.0" })).toMatchObject({
        metricsPort: 9400,
        metricsHost: "0.0.0.0",
      });
      expect(readConfig(["--metrics-port", "9500"], { METRICS_PORT: "9400" }).metricsPort).toBe(9500);
      expect(() => readConfig(["--metrics-port", "http"], {})).toThrow(/--metrics-port must be an integer/);
      expect(() => readConfig(["--metrics-port", "70000"], {})).toThrow(/--metrics-port must be at most 65535/);
    },
  );
});
