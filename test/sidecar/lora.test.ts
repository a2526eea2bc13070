// LoRA adapters on a real sidecar over real gRPC (docs/decisions.md, "LoRA adapters"): `--lora` adapters of the
// `adapted` model listed as models of their own, each request answered by its own adapter (exact replies), the next
// one without it by the base; two adapters and the base at once on different sequences; SetLoraScale; the adapter's
// states in the KV tier never served to the base.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Role } from "../../proto/gen/inference/v1/inference_pb.js";
import { ADAPTED_REPLIES, ensureModels } from "../../gguf/models.js";
import type { RunningSidecar } from "../../sidecar/start-sidecar.js";
import { modelIdentity } from "../../sidecar/engine/llama/kv-tier.js";
import { answer, startCatalogue } from "../support/catalogue.js";
import { startProcess } from "../support/processes.js";
import { clientsFor, collect, type InferenceClient } from "../support/sidecar.js";

type Name = keyof typeof ADAPTED_REPLIES;
let sidecar: RunningSidecar;
let client: InferenceClient;
let paths: Record<"adapted" | "pirate-lora" | "french-lora", string>;

const chat = async (model: string, content = "Hello!") =>
  answer(
    await collect(
      client.generate({
        model,
        input: { case: "chat", value: { messages: [{ role: Role.USER, content }] } },
        maxTokens: 24,
        sampling: { temperature: 0 },
      }),
    ),
  );

beforeAll(async () => {
  paths = await ensureModels("models", ["adapted", "pirate-lora", "french-lora"]);
  sidecar = await startCatalogue(
    [paths.adapted],
    { sequences: 2, cacheRam: 16 },
    {
      lora: [
        { name: "pirate-lora", path: paths["pirate-lora"], scale: 1 },
        { name: "french-lora", path: paths["french-lora"], scale: 1 },
      ],
    },
  );
  client = clientsFor(sidecar.url).grpc;
});
afterAll(() => sidecar?.stop());

describe("LoRA adapters of one base model", () => {
  it("are listed as models of their own: kind lora, the base as parent, their file and scale", async () => {
    const { models } = await client.listModels({});
    expect(models.map((m) => [m.id, m.kind, m.parent, m.loraPath, m.loraScale])).toEqual([
      ["adapted", "generate", "", "", 0],
      ["pirate-lora", "lora", "adapted", paths["pirate-lora"], 1],
      ["french-lora", "lora", "adapted", paths["french-lora"], 1],
    ]);
  });

  it("answer a request by their name with their own reply, and the next one without them with the base's", async () => {
    for (const model of ["pirate-lora", "adapted", "french-lora", "adapted"] as const) {
      expect(await chat(model)).toMatchObject({ model, text: ADAPTED_REPLIES[model] });
    }
  });

  it("serve two adapters and the base at once, each request its own reply", async () => {
    const names: Name[] = ["pirate-lora", "french-lora", "adapted", "french-lora", "pirate-lora", "adapted"];
    const replies = await Promise.all(names.map((name) => chat(name)));
    expect(replies.map((r) => r.text)).toEqual(names.map((name) => ADAPTED_REPLIES[name]));
  });

  it("each have a context, sequences and a KV tier of their own on the base's weights", () => {
    const [base] = sidecar.models;
    const adapters = [...(base?.adapters.values() ?? [])];
    expect(adapters.map((a) => [a.id, a.lora?.parent, a.model === base?.model])).toEqual([
      ["pirate-lora", "adapted", true],
      ["french-lora", "adapted", true],
    ]);
    const [contexts, pools, tiers] = [
      new Set([base, ...adapters].map((m) => m?.context)),
      new Set([base, ...adapters].map((m) => m?.pool)),
      new Set([base, ...adapters].map((m) => m?.kvTier)),
    ];
    expect([contexts.size, pools.size, tiers.size, tiers.has(undefined)]).toEqual([3, 3, 3, false]);
    // Their tiers' identities differ, so a state kept by one (in memory or under --cache-dir) never loads in another.
    const identities = [undefined, paths["pirate-lora"], paths["french-lora"]].map((a) =>
      modelIdentity(paths.adapted, 512, a === undefined ? undefined : { path: a, scale: 1 }),
    );
    expect(new Set(identities).size).toBe(3);
  });

  it("never serve one adapter's cached prompt to another or to the base", async () => {
    // The same long prompt through each in turn: each context and KV tier holds only its own cells.
    const content = "Tell me about the sea and the wind and the ships";
    for (const model of ["pirate-lora", "adapted", "french-lora", "pirate-lora"] as const) {
      expect((await chat(model, content)).text).toBe(ADAPTED_REPLIES[model]);
    }
  });

  it("take a new scale (SetLoraScale): 0 answers as the base, and it is listed", async () => {
    const info = await client.setLoraScale({ model: "pirate-lora", scale: 0 });
    expect([info.id, info.kind, info.loraScale]).toEqual(["pirate-lora", "lora", 0]);
    expect((await chat("pirate-lora")).text).toBe(ADAPTED_REPLIES.adapted);
    await client.setLoraScale({ model: "pirate-lora", scale: 1 });
    expect((await chat("pirate-lora")).text).toBe(ADAPTED_REPLIES["pirate-lora"]);
    await expect(client.setLoraScale({ model: "adapted", scale: 1 })).rejects.toThrow(
      'no model has a LoRA adapter named "adapted"',
    );
  });

  it("take a new scale from a cold cache: no cell or state computed at the old scale is served", async () => {
    const content = "A question about the harbour, the ships in it and the lighthouse keeper who watches them";
    const cachedTokens = async (): Promise<number> => {
      const events = await collect(
        client.generate({
          model: "french-lora",
          input: { case: "chat", value: { messages: [{ role: Role.USER, content }] } },
          maxTokens: 24,
          sampling: { temperature: 0 },
        }),
      );
      const start = events.find((e) => e.case === "start");
      return start?.case === "start" ? start.value.cachedTokens : Number.NaN;
    };
    await cachedTokens();
    expect(await cachedTokens()).toBeGreaterThan(10);
    await client.setLoraScale({ model: "french-lora", scale: 0.5 });
    expect(await cachedTokens()).toBe(0);
    expect(await cachedTokens()).toBeGreaterThan(10);
    // The same scale again changes nothing: the cache stays.
    await client.setLoraScale({ model: "french-lora", scale: 0.5 });
    expect(await cachedTokens()).toBeGreaterThan(10);
    await client.setLoraScale({ model: "french-lora", scale: 1 });
    expect(await cachedTokens()).toBe(0);
    expect((await chat("french-lora")).text).toBe(ADAPTED_REPLIES["french-lora"]);
  });

  it("report the model-server protocol's LoRA info on /metrics", async () => {
    const text = await (await fetch(`${sidecar.url}/metrics`)).text();
    expect(text).toMatch(
      /^sidecar_lora_requests_info\{running_lora_adapters="",waiting_lora_adapters="",max_lora="2"\} \d+/m,
    );
  });
});

describe("the sidecar process with --lora", () => {
  it("takes adapters by flag and LORA, lists them on its start line and serves them by name", async () => {
    const flags = ["--port", "0", "--model", paths.adapted, "--lora", `pirate-lora=${paths["pirate-lora"]}:0.5`];
    const started = await startProcess(
      process.execPath,
      ["--import", "tsx", "sidecar/main.ts", ...flags, "--context-size", "512", "--sequences", "1"],
      { LORA: `french-lora=${paths["french-lora"]}` },
      /on (http:\/\/127\.0\.0\.1:\d+)/,
    );
    try {
      // The flag wins over the variable, as for every setting.
      expect(started.output()).toContain(
        "sidecar: catalogue of 1: adapted (loaded) with LoRA adapters pirate-lora (scale 0.5)",
      );
      client = clientsFor(started.url).grpc;
      expect((await chat("pirate-lora")).text).toBe(ADAPTED_REPLIES["pirate-lora"]);
      expect((await chat("adapted")).text).toBe(ADAPTED_REPLIES.adapted);
    } finally {
      started.child.kill("SIGTERM");
      client = clientsFor(sidecar.url).grpc;
    }
  }, 60_000);
});
