// The Ollama-style `keep_alive` request field (docs/contract.md, "Models"): the parse of every form
// (seconds, Go-style durations, "0", "-1"), and on every protocol that reaches a model the value the
// sidecar is sent (GenerateRequest / EmbedRequest keep_alive_seconds), or the 400 in the protocol's
// own shape naming the field.
import { describe, expect, it } from "vitest";
import { KEEP_ALIVE_FORMS, keepAliveSeconds } from "../../edge/fields/keep-alive.js";
import { openSqliteStore } from "../../edge/hosts/node/store.js";
import { post, testApp } from "../support/app.js";

describe("keepAliveSeconds", () => {
  it.each([
    [300, 300],
    [0, 0],
    [-1, -1],
    [-300, -1],
    [2.5, 3],
    [1e12, 2_147_483_647],
    ["5m", 300],
    ["1h", 3600],
    ["30s", 30],
    ["0", 0],
    ["-1", -1],
    ["-1m", -1],
    ["-0s", 0],
    ["300", 300],
    ["1h30m", 5400],
    ["1.5h", 5400],
    ["+2m", 120],
    ["500ms", 1],
    [".5s", 1],
    ["90000us", 1],
  ] as const)("%j → %d seconds", (value, seconds) => {
    expect(keepAliveSeconds(value)).toBe(seconds);
  });

  it("absent or null is unset", () => {
    expect(keepAliveSeconds(undefined)).toBeUndefined();
    expect(keepAliveSeconds(null)).toBeUndefined();
  });

  it.each(["", "soon", "5x", "m", " 5m", "5 m", "1h-30m", "--1", true, {}, [300]])(
    "%j is not a keep_alive",
    (value) => {
      expect(keepAliveSeconds(value)).toBeNull();
    },
  );
});

const PROTOCOLS = [
  { path: "/v1/chat/completions", body: { model: "m", messages: [{ role: "user", content: "hi" }] } },
  { path: "/v1/completions", body: { model: "m", prompt: "hi" } },
  { path: "/v1/responses", body: { model: "m", input: "hi" } },
  { path: "/v1/messages", body: { model: "m", max_tokens: 8, messages: [{ role: "user", content: "hi" }] } },
] as const;

describe.each(PROTOCOLS)("keep_alive on $path", ({ path, body }) => {
  it("reaches the sidecar as keep_alive_seconds", async () => {
    const { app, sidecar } = testApp();
    for (const [keepAlive, seconds] of [
      ["5m", 300],
      [-1, -1],
      ["0", 0],
      [45, 45],
    ] as const) {
      const response = await post(app, path, { ...body, keep_alive: keepAlive });
      expect(response.status, await response.text()).toBe(200);
      expect(sidecar.lastCall?.request.keepAliveSeconds).toBe(seconds);
    }
  });

  it("is unset when the request has none (or null): the sidecar's --keep-alive applies", async () => {
    const { app, sidecar } = testApp();
    expect((await post(app, path, body)).status).toBe(200);
    expect(sidecar.lastCall?.request.keepAliveSeconds).toBeUndefined();
    expect((await post(app, path, { ...body, keep_alive: null })).status).toBe(200);
    expect(sidecar.lastCall?.request.keepAliveSeconds).toBeUndefined();
  });
});

describe("a bad keep_alive is a 400 in the protocol's shape, before the sidecar", () => {
  const message = `Invalid 'keep_alive': ${KEEP_ALIVE_FORMS}`;

  it.each(PROTOCOLS.filter((p) => p.path !== "/v1/messages"))("OpenAI: $path", async ({ path, body }) => {
    const { app, sidecar } = testApp();
    const response = await post(app, path, { ...body, keep_alive: "soon" });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      error: { message, type: "invalid_request_error", param: "keep_alive", code: null },
    });
    expect(sidecar.calls).toHaveLength(0);
  });

  it("Anthropic: /v1/messages", async () => {
    const { app, sidecar } = testApp();
    const response = await post(app, "/v1/messages", { ...PROTOCOLS[3].body, keep_alive: true });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ type: "error", error: { type: "invalid_request_error", message } });
    expect(sidecar.calls).toHaveLength(0);
  });

  it("embeddings", async () => {
    const { app, sidecar } = testApp();
    const response = await post(app, "/v1/embeddings", { model: "m", input: "hi", keep_alive: "5 minutes" });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      error: { message, type: "invalid_request_error", param: "keep_alive", code: null },
    });
    expect(sidecar.embedCalls).toHaveLength(0);
  });
});

describe("keep_alive on /v1/embeddings", () => {
  it("reaches the sidecar's Embed as keep_alive_seconds, unset when absent", async () => {
    const { app, sidecar } = testApp();
    sidecar.embedResult = [[1, 0]];
    expect((await post(app, "/v1/embeddings", { model: "m", input: "hi", keep_alive: "1h" })).status).toBe(200);
    expect(sidecar.embedCalls.at(-1)?.keepAliveSeconds).toBe(3600);
    expect((await post(app, "/v1/embeddings", { model: "m", input: "hi" })).status).toBe(200);
    expect(sidecar.embedCalls.at(-1)?.keepAliveSeconds).toBeUndefined();
  });
});

describe("keep_alive on the routes that keep state (a store)", () => {
  it.each([
    ["/c1/chat", { messages: [{ role: "user", content: "hi" }], keep_alive: "2m" }],
    ["/v1/responses", { model: "m", input: "hi", keep_alive: "2m" }],
    [
      "/v1/messages",
      {
        model: "m",
        max_tokens: 8,
        messages: [{ role: "user", content: "hi" }],
        thread: { type: "create" },
        keep_alive: "2m",
      },
    ],
  ])("%s", async (path, body) => {
    const opened = openSqliteStore(":memory:");
    try {
      const { app, sidecar } = testApp(undefined, { store: opened.store });
      const response = await post(app, path, body);
      expect(response.status, await response.text()).toBe(200);
      expect(sidecar.lastCall?.request.keepAliveSeconds).toBe(120);
    } finally {
      opened.close();
    }
  });
});
