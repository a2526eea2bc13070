import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { ModelInfoSchema } from "../../proto/gen/inference/v1/inference_pb.js";
import { BASE, get, testApp } from "../support/app.js";

// A sidecar older than catalogues reports no status: its models are loaded, and generate.
const model = {
  id: "fake-model",
  object: "model",
  created: 1_700_000_000,
  owned_by: "local",
  status: { value: "loaded" },
  context_length: 4096,
  aliases: [],
  kind: "generate",
};

describe("GET /v1/models", () => {
  it("lists the sidecar's models", async () => {
    const { app, sidecar } = testApp();
    sidecar.models.push(create(ModelInfoSchema, { id: "org/other.v2", created: 5n, contextSize: 2048 }));
    const response = await get(app, "/v1/models");
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      object: "list",
      data: [model, { ...model, id: "org/other.v2", created: 5, context_length: 2048 }],
    });
  });

  it("GET /v1/models/:id returns one model (ids may contain / and .)", async () => {
    const { app, sidecar } = testApp();
    sidecar.models.push(create(ModelInfoSchema, { id: "org/other.v2", created: 5n }));
    expect(await (await get(app, "/v1/models/fake-model")).json()).toEqual(model);
    expect(((await (await get(app, "/v1/models/org/other.v2")).json()) as { id: string }).id).toBe("org/other.v2");
    expect(((await (await get(app, "/v1/models/org%2Fother.v2")).json()) as { id: string }).id).toBe("org/other.v2");
  });

  it("an unknown id is a 404 model_not_found (a malformed escape too)", async () => {
    const { app } = testApp();
    expect((await get(app, "/v1/models/bad%E0%A4%A")).status).toBe(404);
    const response = await get(app, "/v1/models/gpt-4");
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({
      error: {
        message: "The model 'gpt-4' does not exist.",
        type: "invalid_request_error",
        param: "model",
        code: "model_not_found",
      },
    });
  });

  it("an unreachable sidecar is a 503", async () => {
    const { app, sidecar } = testApp();
    sidecar.listModelsFailure = new ConnectError("The inference sidecar is unreachable.", Code.Unavailable);
    const response = await get(app, "/v1/models");
    expect(response.status).toBe(503);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe("service_unavailable");
  });
});

describe("GET /health", () => {
  it("200 when the sidecar answers", async () => {
    const { app } = testApp();
    const response = await get(app, "/health");
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: "ok", sidecar: "ok", models: ["fake-model"] });
  });

  it("503 when the sidecar fails", async () => {
    const { app, sidecar } = testApp();
    sidecar.listModelsFailure = new ConnectError("The inference sidecar is unreachable.", Code.Unavailable);
    const response = await get(app, "/health");
    expect(response.status).toBe(503);
    expect(await response.json()).toEqual({
      status: "unavailable",
      sidecar: "unavailable",
      message: "The inference sidecar is unreachable.",
    });
  });

  it("503 when the sidecar does not answer in time", async () => {
    const { app, sidecar } = testApp(undefined, { healthTimeoutMs: 50 });
    sidecar.listModelsFailure = "hang";
    const started = Date.now();
    const response = await get(app, "/health");
    expect(response.status).toBe(503);
    expect(Date.now() - started).toBeLessThan(1000);
  });
});

describe("CORS", () => {
  it("answers a preflight on any path", async () => {
    const { app } = testApp();
    const response = await app.fetch(
      new Request(`${BASE}/v1/chat/completions`, {
        method: "OPTIONS",
        headers: {
          origin: "https://app.example",
          "access-control-request-method": "POST",
          "access-control-request-headers": "authorization, content-type, x-stainless-os",
        },
      }),
    );
    expect(response.status).toBe(204);
    expect(response.headers.get("access-control-allow-origin")).toBe("*");
    expect(response.headers.get("access-control-allow-methods")).toBe("GET, POST, DELETE, OPTIONS");
    expect(response.headers.get("access-control-allow-headers")).toBe("authorization, content-type, x-stainless-os");
  });

  it("every response carries access-control-allow-origin, statuses intact", async () => {
    const { app } = testApp();
    for (const [path, status] of [
      ["/health", 200],
      ["/v1/models", 200],
      ["/nope", 404],
    ] as const) {
      const response = await get(app, path);
      expect(response.status).toBe(status);
      expect(response.headers.get("access-control-allow-origin")).toBe("*");
    }
  });
});

describe("unexpected failures", () => {
  it("are reported (without request content) and answered with a generic 500", async () => {
    const reported: unknown[] = [];
    const { app, sidecar } = testApp(undefined, { onUnexpectedError: (e) => reported.push(e) });
    sidecar.listModels = () => Promise.reject(new TypeError("a bug"));
    const response = await get(app, "/v1/models");
    expect(response.status).toBe(500);
    expect(await response.json()).toEqual({
      error: {
        message: "The server had an error while processing the request.",
        type: "server_error",
        param: null,
        code: null,
      },
    });
    expect(reported).toHaveLength(1);
  });

  it("sidecar statuses and client errors are not reported", async () => {
    const reported: unknown[] = [];
    const { app, sidecar } = testApp(undefined, { onUnexpectedError: (e) => reported.push(e) });
    sidecar.listModelsFailure = new ConnectError("down", Code.Unavailable);
    await get(app, "/v1/models");
    await get(app, "/nope");
    expect(reported).toEqual([]);
  });
});
