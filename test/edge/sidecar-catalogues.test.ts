// Routing by catalogue across several sidecars (docs/contract.md, "Several sidecars"), on fake
// sidecars that report their models with different statuses: a sidecar with the model loaded
// first, then loading, available, failed, least loaded first within each; affinity within the
// same order; a load that fails on one sidecar fails over to the next; /v1/models merges the
// catalogues (each id once, its best status); load goes to one sidecar, unload to every one.
import { describe, expect, it } from "vitest";
import { createApp, type App } from "../../edge/http/app.js";
import { rendezvousOrder } from "../../edge/upstream/rendezvous.js";
import { SidecarPool } from "../../edge/upstream/pool.js";
import { catalogued, FakeSidecar, finish, loadFailed, loadFailure, start, token } from "../support/fake-sidecar.js";

/** Sidecars a, b, c… behind one app (and the same ones as a bare pool), each with its catalogue. */
function sidecars(...catalogues: ReturnType<typeof catalogued>[][]) {
  const fakes = catalogues.map((models, i) => {
    const fake = new FakeSidecar([
      start(),
      token(String.fromCharCode(97 + i)),
      finish("stop", { completionTokens: 1 }),
    ]);
    fake.models = models;
    return fake;
  });
  const targets = fakes.map((client, i) => ({ url: `http://${String.fromCharCode(97 + i)}.test`, client }));
  const app = createApp({ sidecars: targets, routing: { now: () => 1_000_000 } });
  return { app, fakes, pool: new SidecarPool(targets, { now: () => 1_000_000 }), urls: targets.map((t) => t.url) };
}

async function chat(app: App, model: string): Promise<{ status: number; text: string }> {
  const body = JSON.stringify({ model, messages: [{ role: "user", content: "Hi" }] });
  const response = await app.fetch(new Request("http://127.0.0.1/v1/chat/completions", { method: "POST", body }));
  const json = (await response.json()) as { choices?: { message: { content: string } }[] };
  return { status: response.status, text: json.choices?.[0]?.message.content ?? JSON.stringify(json) };
}

async function call(app: App, path: string, body?: unknown): Promise<Response> {
  const init = body === undefined ? {} : { method: "POST", body: JSON.stringify(body) };
  return app.fetch(new Request(`http://127.0.0.1${path}`, init));
}

describe("the order of candidates by the model's status", () => {
  it("loaded first even when busier, then loading, then available, failed last", async () => {
    const { pool, urls } = sidecars(
      [catalogued("coder", { status: "failed", failure: "too big" })],
      [catalogued("coder", { status: "available" })],
      [catalogued("coder", { status: "loading", progress: 0.5 })],
      [catalogued("coder", { active: 4, queued: 3 })],
    );
    expect((await pool.candidates("coder")).map((s) => s.url)).toEqual([urls[3], urls[2], urls[1], urls[0]]);
  });

  it("least loaded first among sidecars where the model stands the same", async () => {
    const { pool, urls } = sidecars(
      [catalogued("coder", { active: 3 })],
      [catalogued("coder", { status: "available" })],
      [catalogued("coder", { active: 1 })],
      [catalogued("coder", { status: "available" }), catalogued("other", { active: 4 })],
    );
    // The load that counts is the model's own: d's busy "other" does not put it behind b.
    expect((await pool.candidates("coder")).map((s) => s.url)).toEqual([urls[2], urls[0], urls[1], urls[3]]);
  });

  it(
    "an affinity key orders by rendezvous within each status, never a loading sidecar before a loaded " + "one",
    async () => {
      const { pool, urls } = sidecars(
        [catalogued("coder")],
        [catalogued("coder", { status: "available" })],
        [catalogued("coder")],
        [catalogued("coder", { status: "available" })],
        [catalogued("coder", { status: "failed" })],
      );
      const at = (...i: number[]) => i.map((n) => urls[n] ?? "");
      for (const key of ["id:conv_1", "id:conv_2", "opening:abc", "cache:42"]) {
        const loaded = await rendezvousOrder(key, at(0, 2), (u) => u);
        const available = await rendezvousOrder(key, at(1, 3), (u) => u);
        expect((await pool.candidates("coder", key)).map((s) => s.url)).toEqual([...loaded, ...available, ...at(4)]);
      }
    },
  );

  it("an alias routes as its model's id; a model one catalogue holds goes there; unknown is 404", async () => {
    const { app, fakes } = sidecars(
      [catalogued("demo")],
      [catalogued("demo", { status: "available" }), catalogued("coder", { aliases: ["code"] })],
    );
    expect(await chat(app, "code")).toEqual({ status: 200, text: "b" });
    expect(await chat(app, "demo")).toEqual({ status: 200, text: "a" });
    expect((await chat(app, "nope")).status).toBe(404);
    expect(fakes.map((f) => f.calls.map((c) => c.request.model))).toEqual([["demo"], ["code"]]);
  });

  it(
    "a sidecar whose load fails is passed over for the next (not marked down); all fail: 500 " + "model_load_failed",
    async () => {
      const { app, fakes } = sidecars(
        [catalogued("coder", { status: "available" })],
        [catalogued("coder", { status: "available", active: 1 })],
      );
      const [a, b] = fakes as [FakeSidecar, FakeSidecar];
      a.script = [loadFailed("coder", "too big for the memory budget (needs 9 GiB, 6 GiB free)")];
      expect(await chat(app, "coder")).toEqual({ status: 200, text: "b" });
      expect([a.calls.length, b.calls.length]).toEqual([1, 1]);
      const health = (await (await call(app, "/health")).json()) as { sidecars: { status: string }[] };
      expect(health.sidecars.map((s) => s.status)).toEqual(["ok", "ok"]);
      b.script = [loadFailed("coder", "the file is truncated")];
      const failed = await call(app, "/v1/chat/completions", {
        model: "coder",
        messages: [{ role: "user", content: "Hi" }],
      });
      expect(failed.status).toBe(500);
      expect(await failed.json()).toEqual({
        error: {
          message: "The model 'coder' could not be loaded: the file is truncated",
          type: "server_error",
          param: "model",
          code: "model_load_failed",
        },
      });
    },
  );
});

describe("the model list across sidecars", () => {
  it("merges the catalogues: each id once, in the order ids first appear, with its best status", async () => {
    const { app } = sidecars(
      [
        catalogued("demo", { memoryBytes: 100 }),
        catalogued("coder", { status: "available" }),
        catalogued("tiny", { status: "failed", failure: "gone" }),
      ],
      [
        catalogued("coder", { status: "loading", progress: 0.25 }),
        catalogued("tiny", { status: "available" }),
        catalogued("embed", { kind: "embed" }),
      ],
      [catalogued("coder", { memoryBytes: 300, expiresAt: 1_700_000_600 })],
    );
    const body = (await (await call(app, "/v1/models")).json()) as {
      data: { id: string; status: unknown; memory_bytes?: number; kind: string }[];
    };
    expect(body.data.map((m) => [m.id, m.status, m.memory_bytes, m.kind])).toEqual([
      ["demo", { value: "loaded" }, 100, "generate"],
      ["coder", { value: "loaded" }, 300, "generate"],
      ["tiny", { value: "available" }, undefined, "generate"],
      ["embed", { value: "loaded" }, undefined, "embed"],
    ]);
    expect(await (await call(app, "/v1/models/coder")).json()).toEqual({
      id: "coder",
      object: "model",
      created: 0,
      owned_by: "local",
      status: { value: "loaded" },
      context_length: 4096,
      memory_bytes: 300,
      aliases: [],
      kind: "generate",
      expires_at: 1_700_000_600,
    });
  });
});

describe("load and unload across sidecars", () => {
  it(
    "load goes to the sidecar that can serve it soonest: the one that has it loaded (a no-op), else the least " +
      "loaded",
    async () => {
      const { app, fakes } = sidecars(
        [catalogued("coder", { status: "available", active: 2 })],
        [catalogued("coder", { status: "available" })],
      );
      const [a, b] = fakes as [FakeSidecar, FakeSidecar];
      const loaded = await call(app, "/models/load", { model: "coder", keep_alive: -1 });
      expect(loaded.status).toBe(200);
      expect(((await loaded.json()) as { status: unknown }).status).toEqual({ value: "loaded" });
      expect([a.loadCalls.length, b.loadCalls.map((c) => c.keepAliveSeconds)]).toEqual([0, [-1]]);
    },
  );

  it(
    "a load that fails on one sidecar fails over; the answer routes the next request to where it loaded, before any " +
      "report",
    async () => {
      const { app, fakes } = sidecars(
        [catalogued("coder", { status: "available" })],
        [catalogued("coder", { status: "available", active: 3 })],
      );
      const [a, b] = fakes as [FakeSidecar, FakeSidecar];
      a.loadFailure = loadFailure("coder", "too big");
      const response = await call(app, "/models/load", { model: "coder" });
      expect(response.status).toBe(200);
      expect([a.loadCalls.length, b.loadCalls.length]).toEqual([1, 1]);
      // The clock has not moved, so no new report was asked for: b's answer (loaded) ranks it first.
      expect(await chat(app, "coder")).toEqual({ status: 200, text: "b" });
      expect(a.calls).toHaveLength(0);
    },
  );

  it("unload goes to every sidecar whose catalogue holds the model, and answers it merged", async () => {
    const { app, fakes } = sidecars(
      [catalogued("coder")],
      [catalogued("demo")],
      [catalogued("coder", { status: "loading" })],
    );
    const response = await call(app, "/models/unload", { model: "coder" });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { id: string; status: unknown }).status).toEqual({ value: "available" });
    expect(fakes.map((f) => f.unloadCalls.map((c) => c.model))).toEqual([["coder"], [], ["coder"]]);
    const list = (await (await call(app, "/v1/models")).json()) as {
      data: { id: string; status: { value: string } }[];
    };
    expect(list.data.map((m) => [m.id, m.status.value])).toEqual([
      ["coder", "available"],
      ["demo", "loaded"],
    ]);
  });
});
