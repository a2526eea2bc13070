// A locked-down edge on both runtimes, configured as a deployment is (environment variables on
// Node; variables and a secret under `wrangler dev`): the official clients with the right key, a
// wrong key raising each SDK's authentication error, the per-key rate limit (the Workers Rate
// Limiting binding under workerd, the in-memory limiter on Node), and a keyless edge refusing a
// request addressed to a name that is not loopback.
import Anthropic from "@anthropic-ai/sdk";
import { request as httpRequest } from "node:http";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accessFromEnv, startNodeEdge } from "../../edge/hosts/node/main.js";
import { FakeSidecar, finish, start, token } from "../support/fake-sidecar.js";
import { serveGrpcWeb, type GrpcWebTestServer } from "../support/grpc-web-server.js";
import { startWrangler } from "../support/wrangler.js";

const KEY = "sk-e2e-key-123";
const LIMIT = 4;

interface Edge {
  readonly url: string;
  stop(): Promise<void>;
}

type Runtime = (vars: Record<string, string>) => Promise<Edge>;

const runtimes: Record<string, Runtime> = {
  node: async (vars) => {
    const { SIDECAR_URL, ...env } = vars;
    const edge = await startNodeEdge({
      port: 0,
      ...(SIDECAR_URL !== undefined ? { sidecarUrl: SIDECAR_URL } : {}),
      access: accessFromEnv(env),
    });
    return { url: edge.url, stop: () => edge.close() };
  },
  workerd: async (vars) => {
    const wrangler = await startWrangler(vars);
    return { url: wrangler.url, stop: () => wrangler.stop() };
  },
};

/** A raw request with a chosen Host header (fetch does not let one set it). */
function withHost(url: string, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${url}/v1/models`, { headers: { host } }, (response) => {
      let body = "";
      response.on("data", (chunk: Buffer) => (body += chunk.toString()));
      response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
    });
    request.on("error", reject);
    request.end();
  });
}

describe.each(Object.entries(runtimes))("access on %s", (_name, startEdge) => {
  const fake = new FakeSidecar([
    start("fake-model", 4),
    token("Hi"),
    token(" there"),
    finish("stop", { completionTokens: 2 }),
  ]);
  let sidecar: GrpcWebTestServer;
  let locked: Edge;
  let keyless: Edge;

  beforeAll(async () => {
    sidecar = await serveGrpcWeb(fake);
    [locked, keyless] = await Promise.all([
      startEdge({ SIDECAR_URL: sidecar.url, API_KEYS: `${KEY},other-key`, RATE_LIMIT: String(LIMIT) }),
      startEdge({ SIDECAR_URL: sidecar.url }),
    ]);
  }, 90_000);

  afterAll(async () => {
    await Promise.all([locked?.stop(), keyless?.stop()]);
    await sidecar?.close();
  });

  it("serves the official clients with the key and raises their authentication error without it", async () => {
    const openai = new OpenAI({ baseURL: `${locked.url}/v1`, apiKey: KEY, maxRetries: 0 });
    const chat = await openai.chat.completions.create({ model: "m", messages: [{ role: "user", content: "hi" }] });
    expect(chat.choices[0]?.message.content).toBe("Hi there");
    const wrong = new OpenAI({ baseURL: `${locked.url}/v1`, apiKey: "sk-wrong", maxRetries: 0 });
    await expect(
      wrong.chat.completions.create({ model: "m", messages: [{ role: "user", content: "hi" }] }),
    ).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
    const anthropic = new Anthropic({ baseURL: locked.url, apiKey: "sk-wrong", maxRetries: 0 });
    const refusal = await anthropic.messages
      .create({ model: "m", max_tokens: 8, messages: [{ role: "user", content: "hi" }] })
      .catch((e: unknown) => e);
    expect(refusal).toBeInstanceOf(Anthropic.AuthenticationError);
    expect((refusal as InstanceType<typeof Anthropic.AuthenticationError>).error).toMatchObject({
      type: "error",
      error: { type: "authentication_error" },
    });
  });

  it("limits each key's requests per minute with 429 and Retry-After", async () => {
    // The local rate limiter counts in fixed windows aligned to the clock's minutes: the requests
    // start early in one, so that no window ends among them (one did in a test run).
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 45_000) await new Promise((resolve) => setTimeout(resolve, 60_000 - intoMinute + 200));
    const statuses: number[] = [];
    let retryAfter: string | null = null;
    for (let i = 0; i < LIMIT + 2; i++) {
      const response = await fetch(`${locked.url}/v1/models`, { headers: { "x-api-key": "other-key" } });
      statuses.push(response.status);
      if (response.status === 429) retryAfter = response.headers.get("retry-after");
      await response.arrayBuffer();
    }
    expect(statuses.slice(0, LIMIT)).toEqual(Array(LIMIT).fill(200));
    expect(statuses.slice(LIMIT)).toEqual([429, 429]);
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
  }, 60_000);

  it("answers /v1/info with the key, naming the sidecar's model and no secret", async () => {
    const response = await fetch(`${locked.url}/v1/info`, { headers: { authorization: `Bearer ${KEY}` } });
    const text = await response.text();
    expect(response.status).toBe(200);
    expect(JSON.parse(text)).toMatchObject({
      models: [{ id: "fake-model" }],
      auth: { api_key_required: true },
      sidecar: { status: "ok" },
    });
    expect(text).not.toContain(KEY);
    expect(text).not.toContain(sidecar.url);
  });

  it("without keys, refuses a request addressed to a name that is not loopback", async () => {
    const rebound = await withHost(keyless.url, "rebind.example:8080");
    expect(rebound.status).toBe(403);
    expect(JSON.parse(rebound.body)).toMatchObject({ error: { code: "host_not_allowed" } });
    expect((await withHost(keyless.url, "localhost:8080")).status).toBe(200);
  });
});
