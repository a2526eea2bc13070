// The locked edge–sidecar link: with SIDECAR_TOKEN set, every call without it is refused with
// UNAUTHENTICATED on native gRPC and gRPC-Web alike, /metrics needs it, health probes do not; and
// the sidecar will not listen beyond loopback without a token unless told so explicitly.
import { Code, ConnectError, createClient, type Interceptor } from "@connectrpc/connect";
import { createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import * as grpc from "@grpc/grpc-js";
import { service as healthService } from "grpc-health-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InferenceService } from "../../proto/gen/inference/v1/inference_pb.js";
import { readConfig } from "../../sidecar/config.js";
import type { RunningSidecar } from "../../sidecar/start-sidecar.js";
import { startTestSidecar } from "../support/sidecar.js";

const TOKEN = "sidecar-secret-42";

describe("a sidecar with a token", () => {
  let sidecar: RunningSidecar;
  beforeAll(async () => {
    sidecar = await startTestSidecar({ token: TOKEN });
  });
  afterAll(async () => {
    await sidecar.stop();
  });

  const transports = {
    grpc: (headers?: Record<string, string>) =>
      createGrpcTransport({ baseUrl: sidecar.url, ...(headers ? { interceptors: [withHeaders(headers)] } : {}) }),
    "grpc-web": (headers?: Record<string, string>) =>
      createGrpcWebTransport({
        baseUrl: sidecar.url,
        httpVersion: "1.1",
        ...(headers ? { interceptors: [withHeaders(headers)] } : {}),
      }),
  };

  it.each(Object.entries(transports))(
    "refuses %s calls without it or with another, and serves them with it",
    async (_name, transport) => {
      for (const headers of [undefined, { authorization: "Bearer wrong" }, { authorization: TOKEN }]) {
        const error = await createClient(InferenceService, transport(headers))
          .listModels({})
          .catch((e: unknown) => e);
        expect(error).toBeInstanceOf(ConnectError);
        expect((error as ConnectError).code).toBe(Code.Unauthenticated);
      }
      const stream = createClient(InferenceService, transport({ authorization: `Bearer ${TOKEN}` })).generate({
        input: { case: "prompt", value: "Once upon a time" },
        maxTokens: 2,
      });
      const events: string[] = [];
      for await (const { event } of stream) events.push(event.case ?? "");
      expect(events).toEqual(["start", "token", "token", "finish"]);
    },
  );

  it("answers health probes without it", async () => {
    const Health = grpc.makeGenericClientConstructor(healthService, "Health");
    const health = new Health(`127.0.0.1:${sidecar.port}`, grpc.credentials.createInsecure()) as unknown as {
      check(req: { service: string }, cb: (e: Error | null, r: { status: string }) => void): void;
      close(): void;
    };
    const status = await new Promise<string>((resolve, reject) =>
      health.check({ service: "" }, (e, r) => (e ? reject(e) : resolve(r.status))),
    );
    health.close();
    expect(status).toBe("SERVING");
    expect((await fetch(`${sidecar.url}/healthz`)).status).toBe(200);
  });

  it("locks /metrics", async () => {
    expect((await fetch(`${sidecar.url}/metrics`)).status).toBe(401);
    const metrics = await fetch(`${sidecar.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toContain("sidecar_requests_started_total");
  });
});

describe("exposure", () => {
  it("refuses a non-loopback address without a token, unless told so", () => {
    expect(() => readConfig(["--host", "0.0.0.0"], {})).toThrow(/refusing to listen on 0\.0\.0\.0 without a token/);
    expect(readConfig(["--host", "0.0.0.0"], { SIDECAR_TOKEN: "t" }).token).toBe("t");
    expect(readConfig(["--host", "0.0.0.0", "--insecure", "true"], {}).host).toBe("0.0.0.0");
    expect(readConfig(["--host", "127.0.0.1"], {}).token).toBeUndefined();
  });
});

function withHeaders(headers: Record<string, string>): Interceptor {
  return (next) => async (request) => {
    for (const [name, value] of Object.entries(headers)) request.header.set(name, value);
    return next(request);
  };
}
