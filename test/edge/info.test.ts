// GET /v1/info: the discovery document, exactly; it names no secret, follows the sidecar's
// status, needs a key when keys are configured, and reports the package's version.
import { readFileSync } from "node:fs";
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { SERVER_VERSION } from "../../edge/core/identity.js";
import { get, testApp } from "../support/app.js";

const ENDPOINTS = [
  { method: "POST", path: "/v1/chat/completions", protocol: "openai" },
  { method: "POST", path: "/v1/completions", protocol: "openai" },
  { method: "POST", path: "/infill", protocol: "openai" },
  { method: "POST", path: "/v1/responses", protocol: "openai" },
  { method: "POST", path: "/v1/responses/:id/cancel", protocol: "openai" },
  { method: "GET", path: "/v1/responses/:id", protocol: "openai" },
  { method: "GET", path: "/v1/responses", protocol: "openai" },
  { method: "POST", path: "/v1/responses/compact", protocol: "openai" },
  { method: "POST", path: "/v1/messages", protocol: "anthropic" },
  { method: "POST", path: "/v1/messages/count_tokens", protocol: "anthropic" },
  { method: "GET", path: "/v1/models", protocol: "openai" },
  { method: "POST", path: "/models/load", protocol: "openai" },
  { method: "POST", path: "/models/unload", protocol: "openai" },
  { method: "GET", path: "/lora-adapters", protocol: "openai" },
  { method: "POST", path: "/lora-adapters", protocol: "openai" },
  { method: "POST", path: "/v1/embeddings", protocol: "openai" },
  { method: "POST", path: "/v1/rerank", protocol: "openai" },
  { method: "POST", path: "/rerank", protocol: "openai" },
  { method: "POST", path: "/tokenize", protocol: "openai" },
  { method: "POST", path: "/detokenize", protocol: "openai" },
  { method: "POST", path: "/apply-template", protocol: "openai" },
  { method: "GET", path: "/v1/models/:id+", protocol: "openai" },
  { method: "POST", path: "/api/chat", protocol: "ollama" },
  { method: "POST", path: "/api/generate", protocol: "ollama" },
  { method: "POST", path: "/api/embed", protocol: "ollama" },
  { method: "POST", path: "/api/embeddings", protocol: "ollama" },
  { method: "GET", path: "/api/tags", protocol: "ollama" },
  { method: "POST", path: "/api/show", protocol: "ollama" },
  { method: "GET", path: "/api/ps", protocol: "ollama" },
  { method: "GET", path: "/api/version", protocol: "ollama" },
  { method: "POST", path: "/api/pull", protocol: "ollama" },
  { method: "DELETE", path: "/api/delete", protocol: "ollama" },
  { method: "POST", path: "/v1/chat/completions/render", protocol: "vllm" },
  { method: "POST", path: "/v1/completions/render", protocol: "vllm" },
  { method: "GET", path: "/slots", protocol: "openai" },
  { method: "GET", path: "/props", protocol: "openai" },
  { method: "GET", path: "/v1/streams/:id", protocol: "openai" },
  { method: "GET", path: "/v1/info", protocol: "server" },
  { method: "GET", path: "/health", protocol: "server" },
];

describe("GET /v1/info", () => {
  it("describes the server, its models, endpoints and limits", async () => {
    const { app, sidecar } = testApp();
    for (const model of sidecar.models)
      Object.assign(model, {
        maxQueue: 64,
        queueTimeoutMs: 60000,
        architecture: "llama",
        engineBuild: "prebuilt",
        embeddingDimensions: 288,
        modelLayers: 12,
        speculation: "lookup",
        draftMax: 8,
        draftTokens: 40n,
        draftAcceptedTokens: 30n,
      });
    const response = await get(app, "/v1/info");
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      object: "server.info",
      name: "llm-edge",
      version: SERVER_VERSION,
      protocols: ["openai", "anthropic", "ollama", "vllm"],
      endpoints: ENDPOINTS,
      models: [
        {
          id: "fake-model",
          context_length: 4096,
          sequences: 4,
          architecture: "llama",
          engine_build: "prebuilt",
          embedding_dimensions: 288,
          gpu: { type: null, devices: [], vram_bytes: 0, layers_offloaded: 0, layers: 12 },
          speculation: { type: "lookup", draft_max: 8, drafted_tokens: 40, accepted_tokens: 30, acceptance_rate: 0.75 },
          fill_in_middle: null,
          modalities: ["text"],
        },
      ],
      limits: {
        max_body_bytes: 32 * 1024 * 1024,
        max_image_bytes: 20 * 1024 * 1024,
        max_images: 16,
        image_urls_fetched: true,
        max_tokens: 4096,
        max_stop_sequences: 16,
        max_top_logprobs: 20,
        sequences: 4,
        max_queue: 64,
        queue_timeout_ms: 60000,
      },
      auth: { api_key_required: false, mode: "open", headers: ["authorization: Bearer <key>", "x-api-key: <key>"] },
      sidecar: { status: "ok" },
    });
  });

  it("says when the sidecar does not answer, and still answers 200", async () => {
    const { app, sidecar } = testApp();
    sidecar.listModelsFailure = new ConnectError("connect ECONNREFUSED", Code.Unavailable);
    const body = (await (await get(app, "/v1/info")).json()) as { sidecar: unknown; models: unknown[] };
    expect(body.sidecar).toEqual({ status: "unavailable", message: "connect ECONNREFUSED" });
    expect(body.models).toEqual([]);
  });

  it("needs a key when keys are configured, and never shows one", async () => {
    const { app } = testApp(undefined, { access: { apiKeys: "sk-info-secret" } });
    expect((await get(app, "/v1/info")).status).toBe(401);
    const response = await get(app, "/v1/info", { headers: { authorization: "Bearer sk-info-secret" } });
    const text = await response.text();
    expect(JSON.parse(text)).toMatchObject({ auth: { api_key_required: true, mode: "keys" } });
    expect(text).not.toContain("sk-info-secret");
  });

  it("reports the package's version", () => {
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
    expect(SERVER_VERSION).toBe(pkg.version);
  });
});
