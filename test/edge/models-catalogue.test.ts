// The model catalogue through the edge with one sidecar (docs/contract.md, "Models"): GET /v1/models
// and /v1/models/{id} with each status (loaded, loading with progress, available, failed with the
// reason) and the catalogue's fields, an alias finding its model; POST /models/load and
// /models/unload answering the model object, with keep_alive, the sidecar's 404 and load failure,
// bad bodies, and API keys when keys are set.
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { BASE, get, post, testApp } from "../support/app.js";
import { catalogued, loadFailure } from "../support/fake-sidecar.js";

const GiB = 1024 ** 3;

/** demo loaded and idle, coder loading, tiny available, broken failed. */
function catalogueApp() {
  const test = testApp();
  test.sidecar.models = [
    catalogued("demo", {
      created: 1_700_000_000,
      memoryBytes: 2 * GiB,
      expiresAt: 1_700_000_300,
      aliases: ["default"],
    }),
    catalogued("coder", { status: "loading", progress: 0.4, contextSize: 8192, aliases: ["code", "qwen-coder"] }),
    catalogued("tiny", { status: "available", contextSize: 0, sequences: 0 }),
    catalogued("broken", { status: "failed", failure: "not a GGUF file (magic 'PK\\u0003\\u0004')", kind: "generate" }),
  ];
  return test;
}

const demo = {
  id: "demo",
  object: "model",
  created: 1_700_000_000,
  owned_by: "local",
  status: { value: "loaded" },
  context_length: 4096,
  memory_bytes: 2 * GiB,
  aliases: ["default"],
  kind: "generate",
  expires_at: 1_700_000_300,
};
const coder = {
  id: "coder",
  object: "model",
  created: 0,
  owned_by: "local",
  status: { value: "loading", progress: 0.4 },
  context_length: 8192,
  aliases: ["code", "qwen-coder"],
  kind: "generate",
};
const tiny = {
  id: "tiny",
  object: "model",
  created: 0,
  owned_by: "local",
  status: { value: "available" },
  context_length: null,
  aliases: [],
  kind: "generate",
};
const broken = {
  id: "broken",
  object: "model",
  created: 0,
  owned_by: "local",
  status: { value: "failed", reason: "not a GGUF file (magic 'PK\\u0003\\u0004')" },
  context_length: 4096,
  aliases: [],
  kind: "generate",
};

describe("GET /v1/models with a catalogue", () => {
  it("lists every catalogued model with its status and the catalogue's fields", async () => {
    const { app } = catalogueApp();
    const response = await get(app, "/v1/models");
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ object: "list", data: [demo, coder, tiny, broken] });
  });

  it("GET /v1/models/{id}: one model by its id, or by an alias (answered under its id)", async () => {
    const { app } = catalogueApp();
    expect(await (await get(app, "/v1/models/tiny")).json()).toEqual(tiny);
    expect(await (await get(app, "/v1/models/broken")).json()).toEqual(broken);
    expect(await (await get(app, "/v1/models/qwen-coder")).json()).toEqual(coder);
    expect(await (await get(app, "/v1/models/default")).json()).toEqual(demo);
    const missing = await get(app, "/v1/models/nope");
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({
      error: {
        message: "The model 'nope' does not exist.",
        type: "invalid_request_error",
        param: "model",
        code: "model_not_found",
      },
    });
  });

  it("the same list with Anthropic's headers (no Anthropic-shaped list is served)", async () => {
    const { app } = catalogueApp();
    const response = await get(app, "/v1/models", { headers: { "x-api-key": "k", "anthropic-version": "2023-06-01" } });
    expect(await response.json()).toEqual({ object: "list", data: [demo, coder, tiny, broken] });
  });
});

describe("POST /models/load", () => {
  it("loads the model by name (an alias too) and answers it loaded; keep_alive reaches the sidecar", async () => {
    const { app, sidecar } = catalogueApp();
    const response = await post(app, "/models/load", { model: "tiny", keep_alive: "10m" });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ ...tiny, status: { value: "loaded" } });
    expect((await post(app, "/models/load", { model: "code" })).status).toBe(200);
    expect(sidecar.loadCalls.map((c) => [c.model, c.keepAliveSeconds])).toEqual([
      ["tiny", 600],
      ["code", undefined],
    ]);
    expect(((await (await get(app, "/v1/models/tiny")).json()) as { status: unknown }).status).toEqual({
      value: "loaded",
    });
  });

  it("a model the sidecar does not know: 404 model_not_found", async () => {
    const { app } = catalogueApp();
    const response = await post(app, "/models/load", { model: "gpt-4" });
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({
      error: {
        message: 'model "gpt-4" is not in the catalogue',
        type: "invalid_request_error",
        param: null,
        code: "model_not_found",
      },
    });
  });

  it("a load that fails: 500 model_load_failed naming the model and why", async () => {
    const { app, sidecar } = catalogueApp();
    sidecar.loadFailure = loadFailure("broken", "not a GGUF file");
    const response = await post(app, "/models/load", { model: "broken" });
    expect(response.status).toBe(500);
    expect(await response.json()).toEqual({
      error: {
        message: "The model 'broken' could not be loaded: not a GGUF file",
        type: "server_error",
        param: "model",
        code: "model_load_failed",
      },
    });
  });

  it.each([
    [{}, "Missing required parameter: 'model'.", "model"],
    [{ model: "" }, "Invalid 'model': expected a model name", "model"],
    [
      { model: "tiny", keep_alive: "later" },
      `Invalid 'keep_alive': expected a number of seconds or a duration such as "5m", "1h", "30s", "0" or "-1" ` +
        `(negative: keep loaded)`,
      "keep_alive",
    ],
  ])("a bad body %j: 400 naming the field, nothing sent", async (body, message, param) => {
    const { app, sidecar } = catalogueApp();
    const response = await post(app, "/models/load", body);
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: { message, type: "invalid_request_error", param, code: null } });
    expect(sidecar.loadCalls).toEqual([]);
  });

  it("GET is not the way: 405", async () => {
    const { app } = catalogueApp();
    expect((await get(app, "/models/load")).status).toBe(405);
  });
});

describe("POST /models/unload", () => {
  it("unloads the model and answers its status after", async () => {
    const { app, sidecar } = catalogueApp();
    const response = await post(app, "/models/unload", { model: "demo" });
    expect(response.status).toBe(200);
    const { memory_bytes: _, expires_at: __, ...rest } = demo;
    expect(await response.json()).toEqual({ ...rest, status: { value: "available" } });
    expect(sidecar.unloadCalls.map((c) => c.model)).toEqual(["demo"]);
  });

  it("an unknown model: 404; a sidecar that does not serve the call yet: 500 with its message", async () => {
    const { app, sidecar } = catalogueApp();
    expect((await post(app, "/models/unload", { model: "nope" })).status).toBe(404);
    sidecar.unloadFailure = new ConnectError("UnloadModel is not served by this sidecar", Code.Unimplemented);
    const response = await post(app, "/models/unload", { model: "demo" });
    expect(response.status).toBe(500);
    expect(await response.json()).toEqual({
      error: { message: "UnloadModel is not served by this sidecar", type: "server_error", param: null, code: null },
    });
  });
});

describe("with API keys", () => {
  it("load and unload need a key, as every other route", async () => {
    const { sidecar } = catalogueApp();
    const keyed = testApp(undefined, { access: { apiKeys: "sk-one" } });
    keyed.sidecar.models = sidecar.models;
    for (const path of ["/models/load", "/models/unload"]) {
      const refused = await post(keyed.app, path, { model: "tiny" });
      expect(refused.status).toBe(401);
      expect(await refused.json()).toEqual({
        error: {
          message: "No API key provided. Send it as 'Authorization: Bearer <key>' or 'x-api-key: <key>'.",
          type: "invalid_request_error",
          param: null,
          code: "invalid_api_key",
        },
      });
    }
    expect([keyed.sidecar.loadCalls, keyed.sidecar.unloadCalls]).toEqual([[], []]);
    const ok = await keyed.app.fetch(
      new Request(`${BASE}/models/load`, {
        method: "POST",
        headers: { authorization: "Bearer sk-one" },
        body: JSON.stringify({ model: "tiny" }),
      }),
    );
    expect(ok.status).toBe(200);
    expect(keyed.sidecar.loadCalls.map((c) => c.model)).toEqual(["tiny"]);
  });
});
