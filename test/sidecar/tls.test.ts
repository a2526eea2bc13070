// TLS on the sidecar's one port, with a certificate the suite makes itself: native gRPC over
// HTTP/2 and gRPC-Web over HTTPS (chosen by ALPN), a client that does not trust the CA refused,
// and the Node edge trusting the CA through SIDECAR_CA, token and all.
import { createClient, type Interceptor } from "@connectrpc/connect";
import { createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { readFileSync, rmSync } from "node:fs";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startNodeEdge } from "../../edge/hosts/node/main.js";
import { InferenceService } from "../../proto/gen/inference/v1/inference_pb.js";
import type { RunningSidecar } from "../../sidecar/start-sidecar.js";
import { makeCertificates, type TestCertificates } from "../support/certificates.js";
import { CHAT_REPLY } from "../support/scripted.js";
import { startTestSidecar } from "../support/sidecar.js";

describe("a TLS sidecar", () => {
  let certs: TestCertificates;
  let sidecar: RunningSidecar;

  beforeAll(async () => {
    certs = makeCertificates();
    sidecar = await startTestSidecar({ tlsCert: certs.cert, tlsKey: certs.key, token: "tls-token" });
  });
  afterAll(async () => {
    await sidecar?.stop();
    rmSync(certs.dir, { recursive: true, force: true });
  });

  const withToken: Interceptor = (next) => (request) => {
    request.header.set("authorization", "Bearer tls-token");
    return next(request);
  };
  const auth = { interceptors: [withToken] };

  it("serves native gRPC (h2) and gRPC-Web (http/1.1) over TLS on one port", async () => {
    expect(sidecar.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const ca = readFileSync(certs.ca);
    const native = createClient(
      InferenceService,
      createGrpcTransport({ baseUrl: sidecar.url, nodeOptions: { ca }, ...auth }),
    );
    const web = createClient(
      InferenceService,
      createGrpcWebTransport({ baseUrl: sidecar.url, httpVersion: "1.1", nodeOptions: { ca }, ...auth }),
    );
    for (const client of [native, web]) {
      const { models } = await client.listModels({});
      expect(models.map((m) => m.id)).toEqual(["scripted"]);
    }
  });

  it("is refused by a client that does not trust its CA", async () => {
    const untrusting = createClient(
      InferenceService,
      createGrpcWebTransport({ baseUrl: sidecar.url, httpVersion: "1.1", ...auth }),
    );
    await expect(untrusting.listModels({})).rejects.toThrow(/self[- ]signed|unable to verify|certificate/i);
  });

  it("answers through the Node edge that trusts the CA (SIDECAR_CA)", async () => {
    const edge = await startNodeEdge({
      port: 0,
      sidecarUrl: sidecar.url,
      sidecarCa: certs.ca,
      sidecarLink: { token: "tls-token" },
    });
    try {
      const client = new OpenAI({ baseURL: `${edge.url}/v1`, apiKey: "x", maxRetries: 0 });
      const chat = await client.chat.completions.create({
        model: "m",
        messages: [{ role: "user", content: "Hi" }],
        temperature: 0,
      });
      expect(chat.choices[0]?.message.content).toBe(CHAT_REPLY);
      const stream = await client.chat.completions.create({
        model: "m",
        messages: [{ role: "user", content: "Hi" }],
        temperature: 0,
        stream: true,
      });
      let text = "";
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
      expect(text).toBe(CHAT_REPLY);
    } finally {
      await edge.close();
    }
  });
});
