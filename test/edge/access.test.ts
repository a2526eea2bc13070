// Who may use the edge: API keys (both headers, both protocols' 401 shapes, hashed entries, the
// constant-time comparison), loopback-only without keys (hosts and browser origins refused with
// 403 before any work), open mode, admin keys (the catalogue's changes), CORS origins and per-key rate limits.
import { describe, expect, it } from "vitest";
import { sha256, toHex } from "../../edge/access/constant-time.js";
import type { AccessOptions } from "../../edge/access/policy.js";
import type { RateLimiter } from "../../edge/access/rate-limit.js";
import { memoryRateLimiter } from "../../edge/hosts/node/main.js";
import { testApp } from "../support/app.js";

const CHAT = { model: "m", messages: [{ role: "user", content: "hi" }] };
const MESSAGES = { model: "m", max_tokens: 8, messages: [{ role: "user", content: "hi" }] };
const KEY = "sk-test-0123456789";
const OTHER_KEY = "sk-other-abcdef";

function appWith(access: AccessOptions) {
  return testApp(undefined, { access });
}

function call(
  app: ReturnType<typeof appWith>["app"],
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  return app.fetch(
    new Request(url, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(body),
    }),
  );
}

describe("API keys", () => {
  const keyed = () => appWith({ apiKeys: `${KEY}, ${OTHER_KEY}` });

  it("accepts a key as a Bearer token or as x-api-key", async () => {
    const { app } = keyed();
    expect(
      (await call(app, "https://api.example/v1/chat/completions", CHAT, { authorization: `Bearer ${KEY}` })).status,
    ).toBe(200);
    expect((await call(app, "https://api.example/v1/messages", MESSAGES, { "x-api-key": OTHER_KEY })).status).toBe(200);
  });

  it("refuses a missing key with OpenAI's 401 and never calls the sidecar", async () => {
    const { app, sidecar } = keyed();
    const response = await call(app, "https://api.example/v1/chat/completions", CHAT);
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({
      error: {
        message: "No API key provided. Send it as 'Authorization: Bearer <key>' or 'x-api-key: <key>'.",
        type: "invalid_request_error",
        param: null,
        code: "invalid_api_key",
      },
    });
    expect(sidecar.calls).toHaveLength(0);
  });

  it("refuses a wrong key without repeating it, in each protocol's shape", async () => {
    const { app, sidecar } = keyed();
    const openai = await call(
      app,
      "https://api.example/v1/completions",
      { prompt: "x" },
      { authorization: "Bearer sk-wrong-secret" },
    );
    expect(openai.status).toBe(401);
    const openaiText = await openai.text();
    expect(JSON.parse(openaiText)).toEqual({
      error: {
        message: "Incorrect API key provided.",
        type: "invalid_request_error",
        param: null,
        code: "invalid_api_key",
      },
    });
    const anthropic = await call(app, "https://api.example/v1/messages", MESSAGES, { "x-api-key": "sk-wrong-secret" });
    expect(anthropic.status).toBe(401);
    const anthropicText = await anthropic.text();
    expect(JSON.parse(anthropicText)).toEqual({
      type: "error",
      error: { type: "authentication_error", message: "Incorrect API key provided." },
    });
    for (const text of [openaiText, anthropicText]) expect(text).not.toContain("sk-wrong-secret");
    expect(sidecar.calls).toHaveLength(0);
  });

  it("takes sha256:<hex> entries, so the secret need not be stored", async () => {
    const { app } = appWith({ apiKeys: `sha256:${toHex(await sha256(KEY))}` });
    expect(
      (await call(app, "https://api.example/v1/chat/completions", CHAT, { authorization: `Bearer ${KEY}` })).status,
    ).toBe(200);
    expect(
      (await call(app, "https://api.example/v1/chat/completions", CHAT, { authorization: `Bearer ${KEY}x` })).status,
    ).toBe(401);
  });

  it("compares SHA-256 digests with the constant-time compare, every configured key each time", async () => {
    const seen: Array<[number, number]> = [];
    const spy = (a: Uint8Array, b: Uint8Array) => {
      seen.push([a.byteLength, b.byteLength]);
      return a.every((byte, i) => byte === b[i]);
    };
    const { app } = appWith({ apiKeys: `${KEY},${OTHER_KEY}`, compare: spy });
    expect(
      (await call(app, "https://api.example/v1/chat/completions", CHAT, { authorization: `Bearer ${KEY}` })).status,
    ).toBe(200);
    // The first key matched, and the second was compared all the same: no early exit.
    expect(seen).toEqual([
      [32, 32],
      [32, 32],
    ]);
    const refusing = appWith({ apiKeys: KEY, compare: () => false });
    expect(
      (await call(refusing.app, "https://api.example/v1/chat/completions", CHAT, { authorization: `Bearer ${KEY}` }))
        .status,
    ).toBe(401);
  });

  it("serves /health without a key", async () => {
    const { app } = keyed();
    expect((await app.fetch(new Request("https://api.example/health"))).status).toBe(200);
    expect((await app.fetch(new Request("https://api.example/v1/models"))).status).toBe(401);
  });

  it("lets any origin read answers (keys are not cookies) unless CORS_ORIGINS says otherwise", async () => {
    const { app } = keyed();
    const open = await call(app, "https://api.example/v1/chat/completions", CHAT, {
      authorization: `Bearer ${KEY}`,
      origin: "https://app.example",
    });
    expect(open.headers.get("access-control-allow-origin")).toBe("*");
    const limited = appWith({ apiKeys: KEY, corsOrigins: "https://app.example" });
    const allowed = await call(limited.app, "https://api.example/v1/chat/completions", CHAT, {
      authorization: `Bearer ${KEY}`,
      origin: "https://app.example",
    });
    expect(allowed.status).toBe(200);
    expect(allowed.headers.get("access-control-allow-origin")).toBe("https://app.example");
    const refused = await call(limited.app, "https://api.example/v1/chat/completions", CHAT, {
      authorization: `Bearer ${KEY}`,
      origin: "https://evil.example",
    });
    expect(refused.status).toBe(403);
    expect(limited.sidecar.calls).toHaveLength(1);
  });
});

describe("without keys: loopback only", () => {
  const local = () => appWith({});

  it("serves loopback hosts", async () => {
    for (const host of ["127.0.0.1:8080", "localhost:8080", "[::1]:8080", "127.1.2.3"]) {
      const { app } = local();
      expect((await call(app, `http://${host}/v1/chat/completions`, CHAT)).status, host).toBe(200);
    }
  });

  it("refuses any other host with 403 in the protocol's shape, before any work", async () => {
    const { app, sidecar } = local();
    const openai = await call(app, "http://rebind.example:8080/v1/chat/completions", CHAT);
    expect(openai.status).toBe(403);
    expect(((await openai.json()) as { error: { code: string } }).error.code).toBe("host_not_allowed");
    const anthropic = await call(app, "http://10.0.0.5:8080/v1/messages", MESSAGES);
    expect(anthropic.status).toBe(403);
    expect(((await anthropic.json()) as { error: { type: string } }).error.type).toBe("permission_error");
    expect(sidecar.calls).toHaveLength(0);
  });

  it("refuses a page from another origin, even a text/plain 'simple' POST, and allows loopback pages", async () => {
    const { app, sidecar } = local();
    const evil = await app.fetch(
      new Request("http://127.0.0.1:8080/v1/chat/completions", {
        method: "POST",
        headers: { "content-type": "text/plain", origin: "https://evil.example" },
        body: JSON.stringify(CHAT),
      }),
    );
    expect(evil.status).toBe(403);
    expect(evil.headers.get("access-control-allow-origin")).toBeNull();
    expect(((await evil.json()) as { error: { code: string } }).error.code).toBe("origin_not_allowed");
    expect(sidecar.calls).toHaveLength(0);
    const nullOrigin = await call(app, "http://127.0.0.1:8080/v1/chat/completions", CHAT, { origin: "null" });
    expect(nullOrigin.status).toBe(403);
    const page = await call(app, "http://127.0.0.1:8080/v1/chat/completions", CHAT, {
      origin: "http://localhost:5173",
    });
    expect(page.status).toBe(200);
    expect(page.headers.get("access-control-allow-origin")).toBe("http://localhost:5173");
    expect(page.headers.get("vary")).toBe("origin");
  });

  it("refuses another origin's preflight", async () => {
    const { app } = local();
    const preflight = (origin: string) =>
      app.fetch(
        new Request("http://127.0.0.1:8080/v1/chat/completions", {
          method: "OPTIONS",
          headers: { origin, "access-control-request-method": "POST" },
        }),
      );
    expect((await preflight("https://evil.example")).status).toBe(403);
    const allowed = await preflight("http://127.0.0.1:3000");
    expect(allowed.status).toBe(204);
    expect(allowed.headers.get("access-control-allow-origin")).toBe("http://127.0.0.1:3000");
  });

  it("ALLOW_OPEN=true serves any host", async () => {
    const { app } = appWith({ allowOpen: true });
    expect((await call(app, "http://rebind.example/v1/chat/completions", CHAT)).status).toBe(200);
  });
});

describe("admin keys", () => {
  const ADMIN = "sk-admin-fedcba9876";
  const remove = (app: ReturnType<typeof appWith>["app"], url: string, headers: Record<string, string> = {}) =>
    app.fetch(
      new Request(url, {
        method: "DELETE",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify({ model: "m" }),
      }),
    );

  it("an admin key is a client key too; a client key gets 403 for catalogue changes, before any work", async () => {
    const { app, sidecar } = appWith({ apiKeys: KEY, adminKeys: ADMIN });
    expect(
      (await call(app, "https://api.example/v1/chat/completions", CHAT, { authorization: `Bearer ${ADMIN}` })).status,
    ).toBe(200);
    const calls = sidecar.calls.length;
    const refused = await remove(app, "https://api.example/api/delete", { authorization: `Bearer ${KEY}` });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toEqual({
      error: "This operation needs an admin key (one of ADMIN_KEYS, sent as 'Authorization: Bearer <key>').",
    });
    expect(sidecar.calls).toHaveLength(calls);
    // The admin key passes the check (the fake sidecar then finds no model "m": Ollama's 404).
    expect((await remove(app, "https://api.example/api/delete", { authorization: `Bearer ${ADMIN}` })).status).toBe(
      404,
    );
  });

  it("ADMIN_KEYS alone turns keys on", async () => {
    const { app } = appWith({ adminKeys: ADMIN });
    expect((await call(app, "https://api.example/v1/chat/completions", CHAT)).status).toBe(401);
    expect(
      (await call(app, "https://api.example/v1/chat/completions", CHAT, { authorization: `Bearer ${ADMIN}` })).status,
    ).toBe(200);
  });

  it("without keys, loopback callers are admins and an open server's are not", async () => {
    expect((await remove(appWith({}).app, "http://127.0.0.1:8787/api/delete")).status).toBe(404);
    const open = await remove(appWith({ allowOpen: true }).app, "http://open.example/api/delete");
    expect(open.status).toBe(403);
  });
});

describe("per-key rate limits", () => {
  it("answers 429 with Retry-After once a key is over its limit, per key, in each protocol's shape", async () => {
    const { app, sidecar } = appWith({ apiKeys: `${KEY},${OTHER_KEY}`, rateLimiter: memoryRateLimiter(2) });
    const send = (key: string, path = "/v1/chat/completions", body: unknown = CHAT) =>
      call(app, `https://api.example${path}`, body, { authorization: `Bearer ${key}` });
    expect((await send(KEY)).status).toBe(200);
    expect((await send(KEY)).status).toBe(200);
    const over = await send(KEY);
    expect(over.status).toBe(429);
    expect(Number(over.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(((await over.json()) as { error: { code: string } }).error.code).toBe("rate_limit_exceeded");
    const anthropic = await send(KEY, "/v1/messages", MESSAGES);
    expect(anthropic.status).toBe(429);
    expect(((await anthropic.json()) as { error: { type: string } }).error.type).toBe("rate_limit_error");
    expect((await send(OTHER_KEY)).status).toBe(200);
    expect(sidecar.calls).toHaveLength(3);
  });

  it("counts keyless requests under one id", async () => {
    const counted: string[] = [];
    const limiter: RateLimiter = {
      check: async (keyId) => {
        counted.push(keyId);
        return { allowed: true, retryAfterSeconds: 0 };
      },
    };
    const { app } = appWith({ rateLimiter: limiter });
    await call(app, "http://127.0.0.1/v1/chat/completions", CHAT);
    expect(counted).toEqual(["anonymous"]);
  });
});
