// A catalogued model's life on a real sidecar: --keep-alive unloads it once idle (ListModels and
// the memory gauge show it) and the next request loads it again; a request's keep_alive overrides
// it; --models-max 1 with two models alternating never holds both and never fails a request (the
// registry's own log says so); a load waiting for a busy model's room; stop() drains with several
// models loaded; the process's start line lists the catalogue, and a bad presets file stops it.
import { Code, ConnectError } from "@connectrpc/connect";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { FinishReason } from "../../proto/gen/inference/v1/inference_pb.js";
import { modelPath } from "../../gguf/models.js";
import { TOOLS_ANSWER } from "../support/scripted.js";
import { answer, ask, loadsOf, modelGauge, mostLoadedAtOnce, startCatalogue, statuses } from "../support/catalogue.js";
import { startProcess } from "../support/processes.js";
import { clientsFor } from "../support/sidecar.js";

describe("--keep-alive", () => {
  it("unloads a model idle for 2 s; status and memory gauge show it; the next request loads it again", async () => {
    const sidecar = await startCatalogue(["demo", "random-60m"], { keepAliveSeconds: 2 });
    try {
      const client = clientsFor(sidecar.url).grpc;
      expect(answer(await ask(client, "random-60m")).tokens).toBe(4);
      const { models } = await client.listModels({});
      const loaded = models.find((m) => m.id === "random-60m");
      expect(loaded).toMatchObject({ keepAliveSeconds: 2 });
      expect(Number(loaded?.expiresAt)).toBeGreaterThan(0);
      expect(await modelGauge(sidecar.url, "sidecar_model_memory_bytes", "random-60m")).toBe(
        Number(loaded?.memoryBytes),
      );
      expect(Number(loaded?.memoryBytes)).toBeGreaterThan(100 * 2 ** 20);

      await expect
        .poll(async () => (await statuses(client))["random-60m"], { timeout: 20_000, interval: 200 })
        .toBe("AVAILABLE");
      expect(await modelGauge(sidecar.url, "sidecar_model_memory_bytes", "random-60m")).toBe(0);
      expect(await modelGauge(sidecar.url, "sidecar_model_loaded", "random-60m")).toBe(0);
      expect(sidecar.registry.history.filter((e) => e.type === "unloaded")).toEqual([
        { type: "unloaded", model: "random-60m", why: "idle" },
      ]);

      expect(answer(await ask(client, "random-60m")).tokens).toBe(4);
      expect(loadsOf(sidecar.registry.history, "random-60m")).toBe(2);
      expect(await modelGauge(sidecar.url, "sidecar_model_loaded", "random-60m")).toBe(1);
    } finally {
      await sidecar.stop();
    }
  });

  it(
    "a request's keep_alive of 0 unloads its model once it is done, and holds for the model from then " + "on",
    async () => {
      const sidecar = await startCatalogue(["demo", "tools"], { keepAliveSeconds: 600 });
      try {
        const client = clientsFor(sidecar.url)["grpc-web"];
        expect(answer(await ask(client, "tools", "tools", { keepAliveSeconds: 0 })).text).toBe(TOOLS_ANSWER);
        await expect
          .poll(async () => (await statuses(client)).tools, { timeout: 10_000, interval: 100 })
          .toBe("AVAILABLE");
        const { models } = await client.listModels({});
        expect(models.map((m) => [m.id, m.keepAliveSeconds])).toEqual([
          ["demo", 600],
          ["tools", 0],
        ]);
      } finally {
        await sidecar.stop();
      }
    },
  );
});

describe("a model being unloaded", () => {
  it("is listed as loaded until it is freed, and ListModels never reads its freed objects", async () => {
    const sidecar = await startCatalogue(["demo", "random-60m"]);
    try {
      const client = clientsFor(sidecar.url)["grpc-web"];
      const seen = new Set<string>();
      // Each request unloads its model as it ends; ListModels is asked at once, again and again,
      // so that some calls land while the model's objects are being freed.
      for (let round = 0; round < 10; round++) {
        await ask(client, "random-60m", "random-60m", { keepAliveSeconds: 0 });
        for (let i = 0; i < 10; i++) {
          const statusOf = (await statuses(client))["random-60m"];
          if (statusOf !== undefined) seen.add(statusOf);
        }
      }
      expect([...seen].every((s) => s === "LOADED" || s === "AVAILABLE")).toBe(true);
      expect(seen.has("AVAILABLE")).toBe(true);
    } finally {
      await sidecar.stop();
    }
  });
});

describe("--models-max 1", () => {
  it("two models alternating: never both loaded, no request fails, one by one or all at once", async () => {
    const sidecar = await startCatalogue(["demo", "tools"], { modelsMax: 1, keepAliveSeconds: 600 });
    try {
      const client = clientsFor(sidecar.url).grpc;
      for (const name of ["demo", "tools", "demo", "tools"]) {
        expect(answer(await ask(client, name)).model).toBe(name);
        expect(await statuses(client)).toEqual(
          name === "demo" ? { demo: "LOADED", tools: "AVAILABLE" } : { demo: "AVAILABLE", tools: "LOADED" },
        );
      }
      // At once: each load waits for the other model's requests to end.
      const names = ["demo", "tools", "demo", "tools", "demo", "tools"];
      const replies = await Promise.all(names.map((name) => ask(client, name)));
      expect(replies.map((events) => answer(events).model)).toEqual(names);
      expect(replies.map((events) => events.at(-1)?.value)).toEqual(
        names.map(() => expect.objectContaining({ reason: FinishReason.STOP })),
      );
      expect(mostLoadedAtOnce(sidecar.registry.history)).toBe(1);
      expect(sidecar.registry.history.filter((e) => e.type === "failed")).toEqual([]);
    } finally {
      await sidecar.stop();
    }
  });
});

describe("a load that waits for room", () => {
  it(
    "waits for the busy model's stream to end (never unloaded under it); a request that leaves drops out, one that " +
      "stays is answered",
    async () => {
      const sidecar = await startCatalogue(["random-60m", "tools"], { modelsMax: 1, keepAliveSeconds: 600 });
      try {
        const client = clientsFor(sidecar.url).grpc;
        const stream = client
          .generate({ model: "random-60m", input: { case: "prompt", value: "Hello" }, maxTokens: 40 })
          [Symbol.asyncIterator]();
        await stream.next();
        const leaving = new AbortController();
        const waiting = ask(client, "tools", "tools", {}).catch((e: unknown) => e);
        const gone = client
          .tokenize({ model: "tools", input: { case: "text", value: "x" } }, { signal: leaving.signal })
          .catch((e: unknown) => e);
        await expect
          .poll(async () => (await statuses(client)).tools, { timeout: 10_000, interval: 50 })
          .toBe("LOADING");
        leaving.abort();
        expect(await gone).toBeInstanceOf(ConnectError);
        let last: unknown;
        for (let next = await stream.next(); next.done !== true; next = await stream.next())
          last = next.value.event.value;
        expect(last).toMatchObject({ reason: FinishReason.LENGTH, completionTokens: 40 });
        // The request still waiting is answered once the stream ends; the one that left asked for nothing.
        expect(answer((await waiting) as never).text).toBe(TOOLS_ANSWER);
        expect(mostLoadedAtOnce(sidecar.registry.history)).toBe(1);
        expect(loadsOf(sidecar.registry.history, "tools")).toBe(1);
      } finally {
        await sidecar.stop();
      }
    },
  );

  it("with no request left waiting, is given up: the model stays available", async () => {
    const sidecar = await startCatalogue(["random-60m", "tools"], { modelsMax: 1, keepAliveSeconds: 600 });
    try {
      const client = clientsFor(sidecar.url).grpc;
      const stream = client
        .generate({ model: "random-60m", input: { case: "prompt", value: "Hello" }, maxTokens: 40 })
        [Symbol.asyncIterator]();
      await stream.next();
      const leaving = new AbortController();
      const gone = client
        .tokenize({ model: "tools", input: { case: "text", value: "x" } }, { signal: leaving.signal })
        .catch((e: unknown) => e);
      await expect.poll(async () => (await statuses(client)).tools, { timeout: 10_000, interval: 50 }).toBe("LOADING");
      leaving.abort();
      expect(await gone).toBeInstanceOf(ConnectError);
      await expect
        .poll(async () => (await statuses(client)).tools, { timeout: 10_000, interval: 50 })
        .toBe("AVAILABLE");
      while ((await stream.next()).done !== true);
      expect(await statuses(client)).toEqual({ "random-60m": "LOADED", tools: "AVAILABLE" });
      expect(loadsOf(sidecar.registry.history, "tools")).toBe(0);
    } finally {
      await sidecar.stop();
    }
  });
});

describe("stop()", () => {
  it(
    "drains with several models loaded: the stream in progress ends in full, new calls are refused, every model is " +
      "freed",
    async () => {
      const sidecar = await startCatalogue(["demo", "tools", "random-60m"], { drainMs: 60_000 });
      const { grpc: client, "grpc-web": web } = clientsFor(sidecar.url);
      for (const model of ["demo", "tools", "random-60m"]) await web.loadModel({ model });
      const stream = client
        .generate({ model: "random-60m", input: { case: "prompt", value: "Hello" }, maxTokens: 40 })
        [Symbol.asyncIterator]();
      await stream.next();
      const stopping = sidecar.stop();
      // Over gRPC-Web (the edge's connection, kept alive): the registry refuses, whichever model it names.
      const refused = await ask(web, "demo").catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(ConnectError);
      expect([(refused as ConnectError).code, (refused as ConnectError).rawMessage]).toEqual([
        Code.Unavailable,
        "the sidecar is shutting down",
      ]);
      let last: unknown;
      for (let next = await stream.next(); next.done !== true; next = await stream.next())
        last = next.value.event.value;
      expect(last).toMatchObject({ reason: FinishReason.LENGTH, completionTokens: 40 });
      await stopping;
      expect(sidecar.models).toEqual([]);
      const stopped = sidecar.registry.history.filter((e) => e.type === "unloaded").map((e) => e.model);
      expect(stopped.sort()).toEqual(["demo", "random-60m", "tools"]);
    },
  );
});

describe("the sidecar process", () => {
  it("lists the catalogue on its start line, with what it loaded", async () => {
    const flags = [
      "--port",
      "0",
      "--model",
      modelPath("demo"),
      "--model",
      modelPath("tools"),
      "--preload",
      "tools",
      "--context-size",
      "512",
      "--sequences",
      "1",
    ];
    const started = await startProcess(
      process.execPath,
      ["--import", "tsx", "sidecar/main.ts", ...flags],
      {},
      /on (http:\/\/127\.0\.0\.1:\d+)/,
    );
    try {
      expect(started.output()).toContain(
        "sidecar: catalogue of 2: demo (available), tools (loaded); unloaded after 300 s idle, at most 3 loaded",
      );
      expect(started.output()).toMatch(/sidecar: serving tools \(1 sequences × 512 tokens/);
      expect(answer(await ask(clientsFor(started.url).grpc, "demo")).text).toBe(" Once upon a");
      // The load line says what its template writes: the demo's ChatML writes no calls, so node-llama-cpp's own.
      await expect
        .poll(() => started.output(), { timeout: 10_000 })
        .toMatch(
          new RegExp(
            String.raw`sidecar: loaded demo in \d+ ms \(tool calls: generic ` +
              String.raw`\(the template writes none; the prompt describes the functions\)\)`,
          ),
        );
    } finally {
      started.child.kill("SIGTERM");
    }
  }, 60_000);

  it("refuses a presets file with an unknown key, naming it, before anything loads", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "presets-")), "presets.json");
    writeFileSync(file, JSON.stringify({ demo: { contextSize: 512, ctx: 4 } }));
    const child = spawn(
      process.execPath,
      ["--import", "tsx", "sidecar/main.ts", "--model", modelPath("demo"), "--models-preset", file],
      {
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const [code] = await once(child, "exit");
    expect(code).toBe(1);
    expect(stderr).toContain(
      `sidecar: --models-preset ${file}: "demo" has an unknown key "ctx" (known: model, contextSize, sequences, ` +
        `chatTemplate, gpuLayers, alias, specLookup, draft, mmproj, fimOrder, lora)`,
    );
  });
});
