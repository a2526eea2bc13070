// The locked link end to end, on both runtimes: a real sidecar with SIDECAR_TOKEN, an edge that
// has the same token (the reply comes through), one that has none (a clear 500 naming the setting,
// no sidecar work), and SIDECAR_HEADERS reaching every sidecar call.
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startNodeEdge } from "../../edge/hosts/node/main.js";
import { createSidecarClient } from "../../edge/upstream/connection.js";
import type { RunningSidecar } from "../../sidecar/start-sidecar.js";
import { modelPath } from "../../gguf/models.js";
import { CHAT_REPLY } from "../support/scripted.js";
import { startTestSidecar } from "../support/sidecar.js";
import { startWrangler } from "../support/wrangler.js";

const TOKEN = "link-secret-7";

type StartEdge = (sidecarUrl: string, token: string | undefined) => Promise<{ url: string; stop(): Promise<void> }>;

const runtimes: Record<string, StartEdge> = {
  node: async (sidecarUrl, token) => {
    const edge = await startNodeEdge({ port: 0, sidecarUrl, sidecarLink: { token } });
    return { url: edge.url, stop: () => edge.close() };
  },
  workerd: async (sidecarUrl, token) => {
    const wrangler = await startWrangler({ SIDECAR_URL: sidecarUrl, ...(token ? { SIDECAR_TOKEN: token } : {}) });
    return { url: wrangler.url, stop: () => wrangler.stop() };
  },
};

describe.each(Object.entries(runtimes))("a token-locked sidecar behind the edge on %s", (_name, startEdge) => {
  let sidecar: RunningSidecar;
  let withToken: Awaited<ReturnType<StartEdge>>;
  let without: Awaited<ReturnType<StartEdge>>;

  beforeAll(async () => {
    sidecar = await startTestSidecar({ model: modelPath("scripted"), token: TOKEN });
    // One after the other: two `wrangler dev` of one Worker starting at once once answered a
    // request with a bare 404.
    withToken = await startEdge(sidecar.url, TOKEN);
    without = await startEdge(sidecar.url, undefined);
  }, 90_000);

  afterAll(async () => {
    await Promise.all([withToken?.stop(), without?.stop()]);
    await sidecar?.stop();
  });

  it("answers through the edge that has the token", async () => {
    const client = new OpenAI({ baseURL: `${withToken.url}/v1`, apiKey: "x", maxRetries: 0 });
    const chat = await client.chat.completions.create({
      model: "m",
      messages: [{ role: "user", content: "Hi" }],
      temperature: 0,
    });
    expect(chat.choices[0]?.message.content).toBe(CHAT_REPLY);
  });

  it("fails clearly through an edge without it, and the sidecar does no work", async () => {
    const started = sidecar.metrics.requestsStarted;
    const response = await fetch(`${without.url}/v1/chat/completions`, {
      method: "POST",
      body: JSON.stringify({ messages: [{ role: "user", content: "Hi" }] }),
    });
    expect(response.status).toBe(500);
    expect(await response.json()).toEqual({
      error: {
        message: "The inference sidecar refused the edge's credentials: set the same SIDECAR_TOKEN on both.",
        type: "server_error",
        param: null,
        code: "sidecar_unauthenticated",
      },
    });
    expect(sidecar.metrics.requestsStarted).toBe(started);
  });
});

describe("SIDECAR_HEADERS", () => {
  it("go with every sidecar call, beside the token", async () => {
    const seen: Headers[] = [];
    const client = createSidecarClient(
      "http://sidecar.test",
      async (_input, init) => {
        seen.push(new Headers(init?.headers));
        return new Response(null, { status: 503 });
      },
      { token: "t0k", headers: { "cf-access-client-id": "id.access", "cf-access-client-secret": "s3cret" } },
    );
    await client.listModels({}).catch(() => undefined);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.get("authorization")).toBe("Bearer t0k");
    expect(seen[0]?.get("cf-access-client-id")).toBe("id.access");
    expect(seen[0]?.get("cf-access-client-secret")).toBe("s3cret");
  });
});
