// Many models on one sidecar, over real gRPC and gRPC-Web with real generated models: a catalogue
// of three listed before any load and each answering by name once loaded on demand; unknown names,
// aliases, --default-model and a preset's chat template; one model answering any name; concurrent
// first requests loading once; a corrupt file failing alone with ModelLoadFailed; a model too big
// for the memory budget; LoadModel and UnloadModel; one shared --embedding-model
// (docs/decisions.md, "Many models on one sidecar").
import { Code, ConnectError } from "@connectrpc/connect";
import { copyFileSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FinishReason, ModelLoadFailedSchema, ModelStatus, Role } from "../../proto/gen/inference/v1/inference_pb.js";
import { modelPath } from "../../gguf/models.js";
import type { RunningSidecar } from "../../sidecar/start-sidecar.js";
import { THINK_REASONING, TOOLS_ANSWER } from "../support/scripted.js";
import { answer, ask, loadsOf, modelGauge, startCatalogue, statuses } from "../support/catalogue.js";
import { clientsFor, collect, startTestSidecar } from "../support/sidecar.js";

/** The error a call failed with: its code, message and ModelLoadFailed detail, if any. */
async function failure(
  promise: Promise<unknown>,
): Promise<{ code: string; message: string; detail?: { model: string; reason: string } }> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof ConnectError)) throw new Error(`expected a ConnectError, got ${String(error)}`);
  const [detail] = error.findDetails(ModelLoadFailedSchema);
  return {
    code: Code[error.code],
    message: error.rawMessage,
    ...(detail ? { detail: { model: detail.model, reason: detail.reason } } : {}),
  };
}

describe("a catalogue of three models", () => {
  let sidecar: RunningSidecar;
  beforeAll(async () => {
    sidecar = await startCatalogue(["demo", "tools", "random-60m"]);
  });
  afterAll(() => sidecar?.stop());

  it("lists every model before any load: available, with its settings, file size and estimate", async () => {
    const client = clientsFor(sidecar.url).grpc;
    // The file sizes and estimates are read off the start's path.
    await expect
      .poll(async () => (await client.listModels({})).models.every((m) => m.fileBytes > 0n), { timeout: 10_000 })
      .toBe(true);
    const { models } = await client.listModels({});
    expect(
      models.map((m) => [
        m.id,
        ModelStatus[m.status],
        m.contextSize,
        m.sequences,
        m.kind,
        m.keepAliveSeconds,
        m.expiresAt,
      ]),
    ).toEqual([
      ["demo", "AVAILABLE", 512, 1, "generate", 300, 0n],
      ["tools", "AVAILABLE", 512, 1, "generate", 300, 0n],
      ["random-60m", "AVAILABLE", 512, 1, "generate", 300, 0n],
    ]);
    for (const m of models) {
      expect(m.fileBytes).toBe(BigInt(statSync(modelPath(m.id as "demo")).size));
      expect(m.memoryBytes).toBeGreaterThan(0n);
    }
    expect(sidecar.models).toEqual([]);
  });

  it.each(["grpc", "grpc-web"] as const)(
    "each answers by name over %s, loaded by its first request and once only",
    async (transport) => {
      const client = clientsFor(sidecar.url)[transport];
      const [demo, tools, random] = await Promise.all([
        ask(client, "demo"),
        ask(client, "tools"),
        ask(client, "random-60m"),
      ]);
      expect(answer(demo)).toMatchObject({ model: "demo", text: " Once upon a" });
      expect(answer(tools)).toMatchObject({ model: "tools", text: TOOLS_ANSWER, reasoning: THINK_REASONING });
      expect(answer(random)).toMatchObject({ model: "random-60m", tokens: 4 });
      expect(random.at(-1)?.value).toMatchObject({ reason: FinishReason.LENGTH, completionTokens: 4 });
      expect(await statuses(client)).toEqual({ demo: "LOADED", tools: "LOADED", "random-60m": "LOADED" });
      for (const name of ["demo", "tools", "random-60m"]) expect(loadsOf(sidecar.registry.history, name)).toBe(1);
    },
  );

  it("tokenizes with the model named, and reports each loaded model's gauges", async () => {
    const client = clientsFor(sidecar.url).grpc;
    const demo = await client.tokenize({ model: "demo", input: { case: "text", value: "Once upon a time" } });
    const tools = await client.tokenize({ model: "tools", input: { case: "text", value: "Once upon a time" } });
    expect(demo.tokens).not.toEqual(tools.tokens);
    const { models } = await client.listModels({});
    for (const m of models) {
      expect(m).toMatchObject({
        status: ModelStatus.LOADED,
        loadProgress: 1,
        failure: "",
        architecture: expect.any(String),
      });
      expect(await modelGauge(sidecar.url, "sidecar_model_loaded", m.id)).toBe(1);
      expect(await modelGauge(sidecar.url, "sidecar_model_loading", m.id)).toBe(0);
      expect(await modelGauge(sidecar.url, "sidecar_model_memory_bytes", m.id)).toBe(Number(m.memoryBytes));
      expect(await modelGauge(sidecar.url, "sidecar_model_requests", m.id)).toBe(0);
    }
  });

  it("refuses a name the catalogue does not know with NOT_FOUND naming the catalogue, on every call", async () => {
    const client = clientsFor(sidecar.url)["grpc-web"];
    const served = 'model "gpt-4o" is not served here (served: demo, tools, random-60m)';
    expect(await failure(collect(client.generate({ model: "gpt-4o", input: { case: "prompt", value: "x" } })))).toEqual(
      { code: "NotFound", message: served },
    );
    expect(await failure(client.tokenize({ model: "gpt-4o", input: { case: "text", value: "x" } }))).toEqual({
      code: "NotFound",
      message: served,
    });
    expect(
      await failure(client.embed({ model: "gpt-4o", inputs: [{ input: { case: "text", value: "x" } }] })),
    ).toMatchObject({ code: "NotFound" });
    expect(await failure(client.loadModel({ model: "gpt-4o" }))).toEqual({
      code: "NotFound",
      message: 'model "gpt-4o" is not in the catalogue (demo, tools, random-60m)',
    });
  });
});

describe("names", () => {
  it("--default-model serves unknown names; an alias reaches its model", async () => {
    const sidecar = await startCatalogue(
      ["demo", "tools"],
      {},
      { defaultModel: "demo", presets: { tools: { alias: ["helper"] } } },
    );
    try {
      const client = clientsFor(sidecar.url).grpc;
      expect(answer(await ask(client, "gpt-4o", "demo"))).toMatchObject({ model: "demo", text: " Once upon a" });
      expect(answer(await ask(client, "helper", "tools"))).toMatchObject({ model: "tools", text: TOOLS_ANSWER });
      const { models } = await client.listModels({});
      expect(models.map((m) => [m.id, m.aliases])).toEqual([
        ["demo", []],
        ["tools", ["helper"]],
      ]);
    } finally {
      await sidecar.stop();
    }
  });

  it("a preset's chat template replaces the file's: a wrapper name or a Jinja template", async () => {
    const jinja = "{% for message in messages %}{{ message.content }}{% endfor %}";
    const sidecar = await startCatalogue(
      ["demo", "tools"],
      {},
      { presets: { tools: { chatTemplate: "chatML" }, demo: { chatTemplate: jinja } } },
    );
    try {
      const client = clientsFor(sidecar.url).grpc;
      const [demo, tools] = await Promise.all([
        client.loadModel({ model: "demo" }),
        client.loadModel({ model: "tools" }),
      ]);
      expect([demo.chatTemplate, tools.chatTemplate]).toEqual(["JinjaTemplate", "ChatML"]);
      const { tokens } = await client.tokenize({
        model: "demo",
        input: { case: "chat", value: { messages: [{ role: Role.USER, content: "Hi" }] } },
      });
      expect((await client.detokenize({ model: "demo", tokens })).text).toContain("Hi");
    } finally {
      await sidecar.stop();
    }
  });

  it("a one-model catalogue answers any name, loaded at start and kept (no keep-alive unless set)", async () => {
    const sidecar = await startTestSidecar();
    try {
      const client = clientsFor(sidecar.url).grpc;
      const events = await collect(
        client.generate({ model: "gpt-4o", input: { case: "prompt", value: "Once upon a time" }, maxTokens: 3 }),
      );
      expect(answer(events).model).toBe("scripted");
      const { models } = await client.listModels({});
      expect(models.map((m) => [m.id, ModelStatus[m.status], m.keepAliveSeconds, m.expiresAt])).toEqual([
        ["scripted", "LOADED", -1, 0n],
      ]);
    } finally {
      await sidecar.stop();
    }
  });
});

describe("loads", () => {
  it("concurrent first requests for a model load it once, and all are answered", async () => {
    const sidecar = await startCatalogue(["demo", "tools"], { sequences: 2 });
    try {
      const { grpc, "grpc-web": web } = clientsFor(sidecar.url);
      const text = { case: "text" as const, value: "Hello" };
      const [a, b, c, d, tokens, embedded] = await Promise.all([
        ask(grpc, "tools"),
        ask(web, "tools"),
        ask(grpc, "tools"),
        ask(web, "tools"),
        grpc.tokenize({ model: "tools", input: text }),
        web.embed({ model: "tools", inputs: [{ input: text }] }),
      ]);
      for (const events of [a, b, c, d]) expect(answer(events)).toMatchObject({ model: "tools", text: TOOLS_ANSWER });
      expect(tokens.tokens.length).toBeGreaterThan(0);
      expect(embedded.embeddings).toHaveLength(1);
      expect(loadsOf(sidecar.registry.history, "tools")).toBe(1);
      expect(loadsOf(sidecar.registry.history, "demo")).toBe(0);
    } finally {
      await sidecar.stop();
    }
  });

  it(
    "a corrupt file fails alone with ModelLoadFailed, the others serve, and the next request tries " + "again",
    async () => {
      const folder = mkdtempSync(join(tmpdir(), "catalogue-"));
      const broken = join(folder, "broken.gguf");
      const good = readFileSync(modelPath("tools"));
      writeFileSync(broken, good.subarray(0, good.length / 2));
      writeFileSync(join(folder, "foreign.gguf"), "not a model at all\n");
      const sidecar = await startCatalogue(["demo", broken, join(folder, "foreign.gguf")]);
      try {
        const { grpc, "grpc-web": web } = clientsFor(sidecar.url);
        const [viaGrpc, viaWeb, demo] = await Promise.all([
          failure(ask(grpc, "broken", "tools")),
          failure(ask(web, "broken", "tools")),
          ask(grpc, "demo"),
        ]);
        const reason =
          `the file is truncated or corrupt: it holds ${good.length / 2} bytes, its header promises at ` +
          `least ${good.length}`;
        for (const f of [viaGrpc, viaWeb]) {
          expect(f).toEqual({
            code: "Internal",
            message: `model "broken" could not be loaded: ${reason}`,
            detail: { model: "broken", reason },
          });
        }
        expect(answer(demo)).toMatchObject({ model: "demo", text: " Once upon a" });
        expect(await failure(grpc.tokenize({ model: "foreign", input: { case: "text", value: "x" } }))).toMatchObject({
          code: "Internal",
          detail: { model: "foreign", reason: expect.stringMatching(/Invalid GGUF magic/) },
        });
        const { models } = await grpc.listModels({});
        expect(models.map((m) => [m.id, ModelStatus[m.status], m.failure])).toEqual([
          ["demo", "LOADED", ""],
          ["broken", "FAILED", reason],
          ["foreign", "FAILED", expect.stringMatching(/Invalid GGUF magic/)],
        ]);
        // Mended, the next request loads it.
        copyFileSync(modelPath("tools"), broken);
        expect(answer(await ask(grpc, "broken", "tools"))).toMatchObject({ model: "broken", text: TOOLS_ANSWER });
        expect(sidecar.registry.history.filter((e) => e.model === "broken").map((e) => e.type)).toEqual([
          "failed",
          "loading",
          "loaded",
        ]);
      } finally {
        await sidecar.stop();
      }
    },
  );
});

describe("the memory budget", () => {
  it("fails a model too big for it alone, with the figures, before llama.cpp reads it", async () => {
    const presets = { "random-60m": { contextSize: 65_536, sequences: 64 } };
    const sidecar = await startCatalogue(["demo", "random-60m"], {}, { presets });
    try {
      const client = clientsFor(sidecar.url).grpc;
      const f = await failure(client.tokenize({ model: "random-60m", input: { case: "text", value: "x" } }));
      expect(f).toMatchObject({ code: "Internal", detail: { model: "random-60m" } });
      expect(f.detail?.reason).toMatch(
        new RegExp(
          String.raw`^it needs \d+ MiB of memory; the budget holds \d+ MiB with every other model unloaded ` +
            String.raw`\(free memory less a margin of \d+ MiB\)$`,
        ),
      );
      expect(answer(await ask(client, "demo")).text).toBe(" Once upon a");
      expect(loadsOf(sidecar.registry.history, "random-60m")).toBe(0);
    } finally {
      await sidecar.stop();
    }
  });
});

describe("LoadModel and UnloadModel", () => {
  it(
    "load a model now and unload it once the requests using it are done; the next request loads it " + "again",
    async () => {
      const sidecar = await startCatalogue(["demo", "random-60m"]);
      try {
        const client = clientsFor(sidecar.url).grpc;
        const loaded = await client.loadModel({ model: "random-60m", keepAliveSeconds: 600 });
        expect(loaded).toMatchObject({
          id: "random-60m",
          status: ModelStatus.LOADED,
          keepAliveSeconds: 600,
          contextSize: 512,
        });
        expect(Number(loaded.expiresAt) - Date.now() / 1000).toBeGreaterThan(590);
        expect(await client.loadModel({ model: "random-60m" })).toMatchObject({ status: ModelStatus.LOADED });
        expect(loadsOf(sidecar.registry.history, "random-60m")).toBe(1);

        // A stream holds the model: the unload waits for it, and the stream runs to its end.
        const stream = client
          .generate({ model: "random-60m", input: { case: "prompt", value: "Hello" }, maxTokens: 48 })
          [Symbol.asyncIterator]();
        await stream.next();
        const unloading = client.unloadModel({ model: "random-60m" });
        const events = [];
        for (let next = await stream.next(); next.done !== true; next = await stream.next())
          events.push(next.value.event);
        expect(events.at(-1)?.value).toMatchObject({ reason: FinishReason.LENGTH, completionTokens: 48 });
        expect(await unloading).toMatchObject({
          id: "random-60m",
          status: ModelStatus.AVAILABLE,
          memoryBytes: expect.any(BigInt),
        });
        expect(sidecar.registry.history.at(-1)).toEqual({ type: "unloaded", model: "random-60m", why: "asked" });
        expect(await statuses(client)).toEqual({ demo: "AVAILABLE", "random-60m": "AVAILABLE" });
        expect(await client.unloadModel({ model: "demo" })).toMatchObject({ status: ModelStatus.AVAILABLE });

        expect(answer(await ask(client, "random-60m"))).toMatchObject({ model: "random-60m", tokens: 4 });
        expect(loadsOf(sidecar.registry.history, "random-60m")).toBe(2);
        expect(await failure(client.unloadModel({ model: "nope" }))).toMatchObject({ code: "NotFound" });
      } finally {
        await sidecar.stop();
      }
    },
  );
});

describe("--embedding-model with a catalogue", () => {
  it("is loaded once and embeds for every model", async () => {
    const sidecar = await startCatalogue(["demo", "tools"], { embeddingModel: modelPath("random-tiny") });
    try {
      const client = clientsFor(sidecar.url).grpc;
      const inputs = [{ input: { case: "text" as const, value: "Hello" } }];
      const [viaDemo, viaTools] = await Promise.all([
        client.embed({ model: "demo", inputs }),
        client.embed({ model: "tools", inputs }),
      ]);
      expect(viaDemo.embeddings[0]?.values).toEqual(viaTools.embeddings[0]?.values);
      const [demo, tools] = sidecar.models;
      expect(demo?.embedder).toBe(tools?.embedder);
      const { models } = await client.listModels({});
      expect(models.map((m) => m.embeddingDimensions)).toEqual([demo?.embedder.dimensions, demo?.embedder.dimensions]);
      expect(demo?.embedder.dimensions).not.toBe(demo?.model.embeddingVectorSize);
    } finally {
      await sidecar.stop();
    }
  });
});
