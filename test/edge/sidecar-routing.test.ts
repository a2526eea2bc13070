// The routing among several sidecars, in isolation: rendezvous hashing (property tests: adding a
// sidecar moves only the keys it wins, about 1/(N+1) of them), the affinity key of a request, and
// the pool on fake sidecars with a fake clock — busy and unreachable failover, backoff that
// doubles, health checks that bring a sidecar back, no failover once `start` has come, and the
// 404 / 503 when no sidecar can serve the model.
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createApp, type App } from "../../edge/http/app.js";
import { affinityKey, OPENING_MIN_CHARS, PROMPT_OPENING_CHARS } from "../../edge/upstream/affinity.js";
import type { SidecarHealth } from "../../edge/upstream/connection.js";
import { SidecarPool } from "../../edge/upstream/pool.js";
import type { SidecarState } from "../../edge/upstream/sidecar-state.js";
import {
  HealthCheckResponse_ServingStatus,
  HealthCheckResponseSchema,
} from "../../proto/gen/grpc/health/v1/health_pb.js";
import { rendezvousOrder, sha256Hex } from "../../edge/upstream/rendezvous.js";
import { openRouted } from "../../edge/upstream/route.js";
import {
  GenerateRequestSchema,
  ModelInfoSchema,
  Role,
  type GenerateRequest,
} from "../../proto/gen/inference/v1/inference_pb.js";
import { delay, fail, FakeSidecar, finish, start, token } from "../support/fake-sidecar.js";

async function winners(names: readonly string[], keys: readonly string[]): Promise<string[]> {
  return Promise.all(keys.map(async (key) => (await rendezvousOrder(key, names, (n) => n))[0] ?? ""));
}

const keys = Array.from({ length: 2000 }, (_, i) => `conversation-${i}`);
const names = fc.uniqueArray(fc.webUrl(), { minLength: 1, maxLength: 6 });

describe("rendezvous hashing", () => {
  it("adding a sidecar moves only the keys the new one wins, about 1/(N+1) of them", async () => {
    await fc.assert(
      fc.asyncProperty(names, fc.webUrl(), async (before, added) => {
        fc.pre(!before.includes(added));
        const [old, now] = [await winners(before, keys), await winners([...before, added], keys)];
        const moved = keys.filter((_, i) => old[i] !== now[i]);
        // Every key that moved went to the new sidecar; the others kept theirs.
        expect(new Set(moved.map((key) => now[keys.indexOf(key)]))).toEqual(new Set(moved.length === 0 ? [] : [added]));
        const expected = keys.length / (before.length + 1);
        expect(moved.length).toBeGreaterThan(expected * 0.75);
        expect(moved.length).toBeLessThan(expected * 1.25);
      }),
      { numRuns: 12 },
    );
  });

  it("removing a sidecar moves only its own keys, to the next in each key's order", async () => {
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(fc.webUrl(), { minLength: 2, maxLength: 6 }), fc.nat(), async (all, pick) => {
        const gone = all[pick % all.length] ?? "";
        const orders = await Promise.all(keys.slice(0, 500).map((key) => rendezvousOrder(key, all, (n) => n)));
        const after = await winners(
          all.filter((n) => n !== gone),
          keys.slice(0, 500),
        );
        orders.forEach((order, i) => {
          expect(after[i]).toBe(order[0] === gone ? order[1] : order[0]);
        });
      }),
      { numRuns: 12 },
    );
  });

  it("gives each of N sidecars about 1/N of the keys, the same way every time", async () => {
    const three = ["http://10.0.0.1:50051", "http://10.0.0.2:50051", "http://10.0.0.3:50051"];
    const first = await winners(three, keys);
    expect(await winners([...three].reverse(), keys)).toEqual(first);
    for (const name of three) {
      const share = first.filter((w) => w === name).length / keys.length;
      expect(share).toBeGreaterThan(0.27);
      expect(share).toBeLessThan(0.4);
    }
  });
});

function chatRequest(messages: readonly [Role, string][], model = ""): GenerateRequest {
  return create(GenerateRequestSchema, {
    model,
    input: { case: "chat", value: { messages: messages.map(([role, content]) => ({ role, content })) } },
  });
}

describe("the affinity key", () => {
  const longSystem = "You are a careful assistant. ".repeat(Math.ceil(OPENING_MIN_CHARS / 29));

  it("is the conversation id when the route has one", async () => {
    expect(await affinityKey(chatRequest([[Role.USER, "Hi"]]), { id: "conv_1" })).toBe("id:conv_1");
  });

  it("is none for a short first turn: the least loaded sidecar takes it", async () => {
    expect(await affinityKey(chatRequest([[Role.USER, "Hi"]]))).toBeUndefined();
  });

  it("is the opening's digest for a long opening, the same on every later turn", async () => {
    const first = await affinityKey(
      chatRequest([
        [Role.SYSTEM, longSystem],
        [Role.USER, "Hi"],
      ]),
    );
    expect(first).toMatch(/^opening:[0-9a-f]{64}$/);
    const later = chatRequest([
      [Role.SYSTEM, longSystem],
      [Role.USER, "Hi"],
      [Role.ASSISTANT, "Hello."],
      [Role.USER, "And then?"],
    ]);
    expect(await affinityKey(later)).toBe(first);
    expect(
      await affinityKey(
        chatRequest([
          [Role.SYSTEM, longSystem],
          [Role.USER, "Something else"],
        ]),
      ),
    ).not.toBe(first);
  });

  it("is the opening's digest for a short conversation that continues (history or previous_response_id)", async () => {
    const resent = await affinityKey(
      chatRequest([
        [Role.USER, "Hi"],
        [Role.ASSISTANT, "Hello."],
        [Role.USER, "More"],
      ]),
    );
    const chained = await affinityKey(chatRequest([[Role.USER, "Hi"]]), { continues: true });
    expect(resent).toMatch(/^opening:/);
    expect(chained).toBe(resent);
  });

  it("joins a prompt_cache_key: key and opening for a long opening, the key alone for a short one", async () => {
    const short = chatRequest([[Role.USER, "Hi"]]);
    const long = chatRequest([
      [Role.SYSTEM, longSystem],
      [Role.USER, "Hi"],
    ]);
    // Short first turns sharing a key go to one sidecar; without the key they had none.
    const keyed = await affinityKey(short, { cacheKey: "user-42" });
    expect(keyed).toBe(`cache:${await sha256Hex("user-42")}`);
    expect(await affinityKey(chatRequest([[Role.USER, "Other"]]), { cacheKey: "user-42" })).toBe(keyed);
    expect(await affinityKey(short, { cacheKey: "user-43" })).not.toBe(keyed);
    // A long opening: the key and the opening together, unlike either alone.
    const joined = await affinityKey(long, { cacheKey: "user-42" });
    expect(joined).toMatch(/^cache-opening:[0-9a-f]{64}$/);
    expect(joined).not.toBe(await affinityKey(long));
    expect(await affinityKey(long, { cacheKey: "user-43" })).not.toBe(joined);
    // An empty key is no key; a conversation id still comes first.
    expect(await affinityKey(short, { cacheKey: "" })).toBeUndefined();
    expect(await affinityKey(long, { id: "conv_1", cacheKey: "user-42" })).toBe("id:conv_1");
  });

  it("is the same for every edit of a long file (an infill's opening: its files, then the prefix)", async () => {
    const infill = (files: { filename: string; text: string }[], prefix: string, suffix: string) =>
      create(GenerateRequestSchema, { input: { case: "infill", value: { files, prefix, suffix } } });
    // A file longer than the opening read: its edits at the cursor lie past it.
    const file = "x".repeat(PROMPT_OPENING_CHARS);
    const edit = await affinityKey(infill([], `${file}\n    step = 1`, "\nrest\n"));
    expect(edit).toBeDefined();
    expect(await affinityKey(infill([], `${file}\n    step = 2`, "\nother\n"))).toBe(edit);
    const other = await affinityKey(infill([{ filename: "a.py", text: "y" }], `${file}\n    step = 1`, "\n"));
    expect(other).not.toBe(edit);
  });
});

/** A pool of two fake sidecars that serve the same model, neither busy. */
function twoFakes(): SidecarPool {
  return new SidecarPool([
    { url: "http://a.test", client: new FakeSidecar() },
    { url: "http://b.test", client: new FakeSidecar() },
  ]);
}

/** Two fake sidecars behind one app, with a clock the test moves. */
function twoSidecars(): { app: App; a: FakeSidecar; b: FakeSidecar; clock: { now: number } } {
  const [a, b] = [new FakeSidecar(), new FakeSidecar()];
  const clock = { now: 1_000_000 };
  const app = createApp({
    sidecars: [
      { url: "http://a.test", client: a },
      { url: "http://b.test", client: b },
    ],
    routing: { now: () => clock.now, reportTtlMs: 1000, backoffMs: 500, maxBackoffMs: 4000 },
  });
  return { app, a, b, clock };
}

async function chat(app: App, model = "fake-model", stream = false): Promise<Response> {
  const body = JSON.stringify({ model, stream, messages: [{ role: "user", content: "Hi" }] });
  return app.fetch(
    new Request("http://127.0.0.1/v1/chat/completions", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    }),
  );
}

async function health(app: App): Promise<{ sidecar: string; sidecars: { status: string; message?: string }[] }> {
  return (await (await app.fetch(new Request("http://127.0.0.1/health"))).json()) as {
    sidecar: string;
    sidecars: { status: string; message?: string }[];
  };
}

describe("the pool on fake sidecars", () => {
  it("passes a busy sidecar over without marking it down", async () => {
    const { app, a, b } = twoSidecars();
    a.script = [fail(Code.ResourceExhausted, "all 4 sequences are busy and 8 requests are waiting")];
    const response = await chat(app);
    expect(response.status).toBe(200);
    expect(
      ((await response.json()) as { choices: { message: { content: string } }[] }).choices[0]?.message.content,
    ).toBe("Hi");
    expect([a.calls.length, b.calls.length]).toEqual([1, 1]);
    expect((await health(app)).sidecars.map((s) => s.status)).toEqual(["ok", "ok"]);
  });

  it("spreads picks made together: each choice sees the reservations made before it", async () => {
    const pool = twoFakes();
    await pool.status();
    // A burst whose calls go in one turn.
    const picks = await Promise.all([0, 1, 2, 3].map(() => pool.pick("fake-model")));
    expect(picks.map((p) => p.ordered[0]?.url).sort()).toEqual([
      "http://a.test",
      "http://a.test",
      "http://b.test",
      "http://b.test",
    ]);
  });

  it("counts no load for a look at the candidates (tokenize, embeddings)", async () => {
    const pool = twoFakes();
    await pool.status();
    for (let i = 0; i < 3; i++)
      expect((await pool.candidates("fake-model")).map((s) => s.url)).toEqual(["http://a.test", "http://b.test"]);
    expect((await pool.pick("fake-model")).ordered[0]?.url).toBe("http://a.test");
  });

  it("answers 429 when every sidecar is busy", async () => {
    const { app, a, b } = twoSidecars();
    for (const fake of [a, b]) fake.script = [fail(Code.ResourceExhausted, "full")];
    const response = await chat(app);
    expect(response.status).toBe(429);
    expect([a.calls.length, b.calls.length]).toEqual([1, 1]);
  });

  it("marks an unreachable sidecar down, backs off (doubling), and takes it back when its check passes", async () => {
    const { app, a, b, clock } = twoSidecars();
    a.script = [fail(Code.Unavailable, "The inference sidecar is unreachable.")];
    expect((await chat(app)).status).toBe(200);
    expect([a.calls.length, b.calls.length]).toEqual([1, 1]);
    a.listModelsFailure = new ConnectError("The inference sidecar is unreachable.", Code.Unavailable);
    // Down: not tried, not even checked, until its backoff (500 ms) is over.
    expect((await chat(app)).status).toBe(200);
    expect([a.calls.length, b.calls.length]).toEqual([1, 2]);
    expect(await health(app)).toMatchObject({
      sidecar: "degraded",
      sidecars: [{ status: "down", message: "The inference sidecar is unreachable." }, { status: "ok" }],
    });
    // Its first check fails: the backoff doubles (1000 ms), then 2000 ms.
    clock.now += 1000;
    await health(app);
    clock.now += 999;
    a.listModelsFailure = undefined;
    a.script = [start(), token("Back"), finish("stop", { completionTokens: 1 })];
    expect((await health(app)).sidecars[0]?.status).toBe("down");
    clock.now += 1;
    expect((await health(app)).sidecars.map((s) => s.status)).toEqual(["ok", "ok"]);
    const back = await chat(app);
    expect(((await back.json()) as { choices: { message: { content: string } }[] }).choices[0]?.message.content).toBe(
      "Back",
    );
    expect([a.calls.length, b.calls.length]).toEqual([2, 2]);
  });

  it("counts a burst of failures on their way together as one: the backoff does not grow with the burst", async () => {
    const { app, a, b, clock } = twoSidecars();
    await health(app);
    // Both answer later, as over a network: the burst's calls are on their way together.
    a.script = [delay(200), fail(Code.Unavailable, "The inference sidecar is unreachable.")];
    b.script = [delay(200), start(), token("Hi"), finish("stop", { completionTokens: 1 })];
    const burst = await Promise.all([0, 1, 2, 3].map(() => chat(app)));
    expect(burst.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(a.calls.length).toBeGreaterThanOrEqual(2);
    expect(b.calls.length).toBe(4);
    // One failure: down for the first backoff (500 ms) only, then its check brings it back.
    a.script = [start(), token("Back"), finish("stop", { completionTokens: 1 })];
    clock.now += 500;
    expect((await health(app)).sidecars.map((s) => s.status)).toEqual(["ok", "ok"]);
  });

  it("checks a down sidecar with grpc.health.v1 first: NOT_SERVING keeps it down, SERVING brings it back", async () => {
    const [a, b] = [new FakeSidecar(), new FakeSidecar()];
    const clock = { now: 1_000_000 };
    let status = HealthCheckResponse_ServingStatus.NOT_SERVING;
    const checks: string[] = [];
    const health = {
      check: async (request: { service?: string }) => {
        checks.push(request.service ?? "");
        return create(HealthCheckResponseSchema, { status });
      },
    } as unknown as SidecarHealth;
    const pool = new SidecarPool(
      [
        { url: "http://a.test", client: a, health },
        { url: "http://b.test", client: b },
      ],
      { now: () => clock.now, backoffMs: 500 },
    );
    await pool.status();
    expect(checks).toEqual([]); // an up sidecar's report is its ListModels alone
    pool.markDown(pool.states[0] as SidecarState, new ConnectError("gone", Code.Unavailable));
    clock.now += 500;
    expect((await pool.status()).map((s) => [s.status, s.message])).toEqual([
      ["down", "the sidecar's health check says NOT_SERVING"],
      ["ok", undefined],
    ]);
    status = HealthCheckResponse_ServingStatus.SERVING;
    clock.now += 1000;
    expect((await pool.status()).map((s) => s.status)).toEqual(["ok", "ok"]);
    expect(checks).toEqual(["inference.v1.InferenceService", "inference.v1.InferenceService"]);
  });

  it("does not fail over once start has come: the stream ends with the error", async () => {
    const { app, a, b } = twoSidecars();
    a.script = [start(), fail(Code.Unavailable, "gone")];
    const response = await chat(app, "fake-model", true);
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toContain('"message":"gone"');
    expect([a.calls.length, b.calls.length]).toEqual([1, 0]);
  });

  it("answers 404 for a model no sidecar serves, and 503 when the sidecars serving it are down", async () => {
    const { app, a, b } = twoSidecars();
    b.models = [create(ModelInfoSchema, { id: "other", contextSize: 4096, sequences: 4 })];
    const missing = await chat(app, "nope");
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({
      error: {
        message: "The model 'nope' does not exist.",
        type: "invalid_request_error",
        param: "model",
        code: "model_not_found",
      },
    });
    expect((await chat(app, "other")).status).toBe(200);
    expect([a.calls.length, b.calls.length]).toEqual([0, 1]);
    b.script = [fail(Code.Unavailable, "draining")];
    expect((await chat(app, "other")).status).toBe(503);
    const down = await chat(app, "other");
    expect(down.status).toBe(503);
    expect(await down.json()).toEqual({
      error: {
        message: "No inference sidecar serving 'other' is reachable (last error: draining).",
        type: "server_error",
        param: null,
        code: "service_unavailable",
      },
    });
    expect([a.calls.length, b.calls.length]).toEqual([0, 2]);
  });

  it("names the sidecar that runs a generation by the id /health shows, and finds it again by that id", async () => {
    const a = new FakeSidecar();
    a.models = [create(ModelInfoSchema, { id: "fake-model", contextSize: 4096, sequences: 4, active: 3 })];
    const b = new FakeSidecar();
    const pool = new SidecarPool([
      { url: "http://a.test", client: a },
      { url: "http://b.test", client: b },
    ]);
    const request = chatRequest([[Role.USER, "Hi"]], "fake-model");
    const opened = await openRouted(pool, request, undefined, new AbortController().signal, 0);
    for await (const _ of opened.events);
    const ids = (await pool.status()).map((s) => s.id);
    expect(opened.sidecarId).toBe(ids[1]); // a reported 3 of 4 sequences busy: b is less loaded
    expect((await pool.byId(opened.sidecarId))?.client).toBe(b);
    expect(await pool.byId("000000000000")).toBeUndefined();
  });

  it("with one sidecar, asks for no report before generating (as before)", async () => {
    const only = new FakeSidecar();
    only.listModelsFailure = new ConnectError("no reports here", Code.Unavailable);
    const app = createApp({ sidecars: [{ url: "http://only.test", client: only }] });
    expect((await chat(app, "any-name")).status).toBe(200);
    expect(only.calls).toHaveLength(1);
  });
});
