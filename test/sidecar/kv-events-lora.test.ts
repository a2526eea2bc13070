// The KV-cache events of LoRA adapters (sidecar/engine/llama/kv-blocks.ts): an adapter's cells and KV tier states are
// published under its base model's topic with its `lora_id` and `lora_name`, keyed apart from the base's (the same
// prompt makes other keys), so a subscriber reading them as llm-d does (blocks under the adapter's name) rebuilds each
// model's blocks exactly, the base's without the adapters' cells; an unload removes them all.
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { Role } from "../../proto/gen/inference/v1/inference_pb.js";
import { ADAPTED_REPLIES, ensureModels } from "../../gguf/models.js";
import type { KvBlock } from "../../sidecar/engine/llama/kv-blocks.js";
import { heldBlocks, type LoadedModel } from "../../sidecar/engine/llama/model.js";
import type { RunningSidecar } from "../../sidecar/start-sidecar.js";
import { answer, startCatalogue } from "../support/catalogue.js";
import { comparableBlocks, KvSubscriber } from "../support/kv-subscriber.js";
import { clientsFor, collect } from "../support/sidecar.js";

const POD = "10.1.2.4:8080";
const BLOCK = 16;
const MODELS = ["adapted", "pirate-lora", "french-lora"] as const;
type Name = (typeof MODELS)[number];
/** A prompt of a few blocks, the same for every model. */
const PROMPT = "Tell me about the sea, the ships on it, the harbour and the lighthouse keeper who watches them all.";

describe("KV-cache events of LoRA adapters", () => {
  let sidecar: RunningSidecar;
  let subscriber: KvSubscriber;
  let cacheDir: string;
  const loadedOf = (name: Name): LoadedModel | undefined => {
    const [base] = sidecar.models;
    return name === "adapted" ? base : base?.adapters.get(name);
  };
  const own = (name: Name): Map<string, KvBlock> => {
    const loaded = loadedOf(name);
    return loaded === undefined ? new Map() : heldBlocks(loaded, BLOCK);
  };
  const same = () =>
    MODELS.every(
      (name) =>
        JSON.stringify(comparableBlocks(subscriber.view(POD, name))) === JSON.stringify(comparableBlocks(own(name))),
    );
  /** Waits until the subscriber's view of every model is the sidecar's own (or 10 s), then compares them. */
  const agree = async (): Promise<void> => {
    await vi
      .waitUntil(() => same() || subscriber.errors.length > 0, { timeout: 10_000, interval: 25 })
      .catch(() => undefined);
    expect(subscriber.errors).toEqual([]);
    for (const name of MODELS)
      expect([name, comparableBlocks(subscriber.view(POD, name))]).toEqual([name, comparableBlocks(own(name))]);
  };
  const chat = async (model: Name, content = PROMPT) => {
    const client = clientsFor(sidecar.url).grpc;
    const messages = [{ role: Role.USER, content }];
    return answer(
      await collect(
        client.generate({
          model,
          input: { case: "chat", value: { messages } },
          maxTokens: 24,
          sampling: { temperature: 0 },
        }),
      ),
    );
  };

  beforeAll(async () => {
    const paths = await ensureModels("models", [...MODELS]);
    cacheDir = await mkdtemp(path.join(os.tmpdir(), "kv-events-lora-"));
    subscriber = await KvSubscriber.bound("tcp://127.0.0.1:*");
    sidecar = await startCatalogue(
      [paths.adapted],
      {
        sequences: 1,
        contextSize: 1024,
        cacheRam: 16,
        cacheDir,
        kvEvents: { endpoint: subscriber.endpoint, replay: "tcp://127.0.0.1:*", pod: POD, blockSize: BLOCK },
      },
      {
        lora: [
          { name: "pirate-lora", path: paths["pirate-lora"], scale: 1 },
          { name: "french-lora", path: paths["french-lora"], scale: 1 },
        ],
      },
    );
    subscriber.replayEndpoint = sidecar.kvEvents?.replayEndpoint ?? "";
  }, 120_000);
  afterAll(async () => {
    await subscriber?.close();
    await sidecar?.stop();
    await rm(cacheDir, { recursive: true, force: true });
  });

  it("each model's cells under its own name, the same prompt keyed apart per adapter", async () => {
    for (const name of MODELS) expect((await chat(name)).text).toBe(ADAPTED_REPLIES[name]);
    await agree();
    const keys = MODELS.map((name) => new Set(subscriber.view(POD, name).keys()));
    for (const set of keys) expect(set.size).toBeGreaterThan(2);
    // The same prompt's first block: the same tokens under three keys.
    const firsts = MODELS.map((name) => [...subscriber.view(POD, name).values()].find((b) => b.parent === undefined));
    expect(new Set(firsts.map((b) => b?.tokens.join(","))).size).toBe(1);
    expect(new Set(firsts.map((b) => b?.hash)).size).toBe(3);
  });

  it("an adapter's sequence taken over: its state saved in its own tier (CPU), under its name", async () => {
    await chat("pirate-lora", "Something else entirely, long enough to take over the one sequence it has here.");
    await agree();
    const media = [...subscriber.view(POD, "pirate-lora").values()].map((b) => b.medium);
    expect(media).toContain("CPU");
    expect(media).toContain("GPU");
    expect([...subscriber.view(POD, "adapted").values()].every((b) => b.medium === "GPU")).toBe(true);
  });

  it("an unload removes every model's blocks", async () => {
    const client = clientsFor(sidecar.url).grpc;
    await client.unloadModel({ model: "adapted" });
    await agree();
    for (const name of MODELS) expect(subscriber.view(POD, name).size).toBe(0);
  });
});
