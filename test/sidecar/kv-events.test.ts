// The KV-cache events (sidecar/kv-events/, sidecar/engine/llama/kv-blocks.ts): a subscriber that reads them with
// llm-d's schema (test/support/kv-subscriber.ts) rebuilds exactly the blocks the sidecar holds, worked out afresh
// from its sequences and KV tier states (`heldBlocks`), through a load, generations, sequences taken over (their
// states saved: CPU; their cells: GPU), states restored and evicted, an unload, a load that reads the tier's folder
// again, and a restart on the same addresses (numbers from 0 again: the subscriber replays).
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { modelPath } from "../../gguf/models.js";
import type { KvBlock } from "../../sidecar/engine/llama/kv-blocks.js";
import { heldBlocks, type LoadedModel } from "../../sidecar/engine/llama/model.js";
import type { RunningSidecar } from "../../sidecar/start-sidecar.js";
import { comparableBlocks, KvSubscriber } from "../support/kv-subscriber.js";
import { clientsFor, collect, startTestSidecar, promptOf } from "../support/sidecar.js";

const POD = "10.1.2.3:8080";
const MODEL = "random-60m";
const BLOCK = 16;

/** A sidecar publishing to `subscriber` (it binds; the sidecar connects), its replay socket bound on `replay`. */
const start = (cacheDir: string, subscriber: KvSubscriber, replay = "tcp://127.0.0.1:*") =>
  startTestSidecar({
    model: modelPath(MODEL),
    sequences: 1,
    contextSize: 1024,
    cacheRam: 16,
    cacheDir,
    kvEvents: { endpoint: subscriber.endpoint, replay, pod: POD, blockSize: BLOCK },
  });

describe("KV-cache events", () => {
  let sidecar: RunningSidecar;
  let subscriber: KvSubscriber;
  let cacheDir: string;
  const own = (): Map<string, KvBlock> => {
    const loaded: LoadedModel | undefined = sidecar.models.find((m) => m.id === MODEL);
    return loaded === undefined ? new Map() : heldBlocks(loaded, BLOCK);
  };
  /** Waits until the subscriber's view is the sidecar's own (or 10 s), then compares them. */
  const agree = async (): Promise<Map<string, KvBlock>> => {
    const same = () =>
      JSON.stringify(comparableBlocks(subscriber.view(POD, MODEL))) === JSON.stringify(comparableBlocks(own()));
    await vi
      .waitUntil(() => same() || subscriber.errors.length > 0, { timeout: 10_000, interval: 25 })
      .catch(() => undefined);
    expect(subscriber.errors).toEqual([]);
    expect(comparableBlocks(subscriber.view(POD, MODEL))).toEqual(comparableBlocks(own()));
    return own();
  };
  const ask = async (seed: number): Promise<void> => {
    const client = clientsFor(sidecar.url).grpc;
    const events = await collect(
      client.generate({ input: { case: "prompt", value: promptOf(seed) }, maxTokens: 6, sampling: { temperature: 0 } }),
    );
    expect(events.at(-1)?.case).toBe("finish");
  };
  const media = (view: Map<string, KvBlock>, medium: string) => [...view.values()].filter((b) => b.medium === medium);

  beforeAll(async () => {
    cacheDir = await mkdtemp(path.join(os.tmpdir(), "kv-events-test-"));
    subscriber = await KvSubscriber.bound("tcp://127.0.0.1:*");
    sidecar = await start(cacheDir, subscriber);
    subscriber.replayEndpoint = sidecar.kvEvents?.replayEndpoint ?? "";
  }, 120_000);
  afterAll(async () => {
    await subscriber?.close();
    await sidecar?.stop();
    await rm(cacheDir, { recursive: true, force: true });
  });

  it("connects to the address it was given; binds its replay socket, a wildcard port resolved", () => {
    expect(sidecar.kvEvents?.endpoint).toBe(subscriber.endpoint);
    expect(sidecar.kvEvents?.replayEndpoint).toMatch(/^tcp:\/\/127\.0\.0\.1:\d+$/);
  });

  it("a loaded model holds nothing; a generation's prompt and reply are stored, GPU", async () => {
    expect((await agree()).size).toBe(0);
    await ask(0);
    const view = await agree();
    expect(media(view, "GPU").length).toBeGreaterThanOrEqual(8);
    expect(media(view, "CPU")).toEqual([]);
  });

  it("a sequence taken over: its state saved (CPU), its cells replaced (GPU removed and stored)", async () => {
    await ask(1);
    await ask(2);
    await ask(3);
    const view = await agree();
    expect(media(view, "CPU").length).toBeGreaterThanOrEqual(8);
    expect(sidecar.models[0]?.kvTier?.stats.saves).toBeGreaterThanOrEqual(1);
  });

  it("restores and evictions keep the views equal", async () => {
    // One sequence, states of three prompts in 16 MiB: 2 is restored (3's state saved, 0's evicted), then new
    // prompts push the oldest out.
    for (const seed of [2, 4, 5, 0]) {
      await ask(seed);
      await agree();
    }
    const stats = sidecar.models[0]?.kvTier?.stats;
    expect(stats?.hits).toBeGreaterThanOrEqual(1);
    expect(stats?.evictions).toBeGreaterThanOrEqual(1);
  });

  it("an unload removes every block; a load reads the tier's folder back (CPU)", async () => {
    await sidecar.registry.unload(MODEL);
    expect(await agree()).toEqual(new Map());
    await sidecar.registry.load(MODEL);
    const view = await agree();
    expect(media(view, "CPU").length).toBeGreaterThanOrEqual(8);
    expect(media(view, "GPU")).toEqual([]);
  });

  it("a restart: numbers from 0 again, the subscriber replays and agrees", async () => {
    const replay = sidecar.kvEvents?.replayEndpoint ?? "";
    const replays = subscriber.replays;
    await sidecar.stop();
    expect(subscriber.view(POD, MODEL)).toEqual(new Map());
    sidecar = await start(cacheDir, subscriber, replay);
    await ask(0);
    const view = await agree();
    expect(media(view, "GPU").length).toBeGreaterThanOrEqual(8);
    expect(media(view, "CPU").length).toBeGreaterThanOrEqual(8);
    expect(subscriber.restarts).toBe(1);
    expect(subscriber.replays).toBe(replays + 1);
  }, 120_000);
});
