// A prefix another sequence holds is copied instead of evaluated (sidecar/engine/decode/prefix-copy.ts),
// on the real engine: the reply is the one a cold prompt gives, the source keeps its cache, and a
// busy source goes on decoding what it would have alone.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LoadedModel } from "../../sidecar/engine/llama/model.js";
import { EngineMetrics } from "../../sidecar/engine/engine-metrics.js";
import { MIN_COPY_TOKENS, minCopyGain } from "../../sidecar/engine/decode/prefix-copy.js";
import { MIN_STATE_TOKENS } from "../../sidecar/engine/llama/kv-tier.js";
import { decodeQueue } from "../../sidecar/engine/llama/llama-internals.js";
import { type Generated, generateText, loadScripted, watchBatches } from "../support/engine.js";

const load = (): Promise<LoadedModel> => loadScripted({ sequences: 4, contextSize: 2048, cacheRam: 0 });

// A shared system prompt of ~200 tokens, and two conversations after it.
const SYSTEM = "Once upon a time there lived a tiny llama. ".repeat(20);
const PARENT = `${SYSTEM}${"Sing la la. ".repeat(60)}`;
const CHILD = `${SYSTEM}Let us sing`;

describe("the prompt tokens a copy must spare", () => {
  it("are fewer the more a prompt token costs: by model size, 64 tokens of the 60M model down to 8", () => {
    expect(minCopyGain(120_749_664)).toBe(MIN_STATE_TOKENS);
    expect(minCopyGain(5_000_000)).toBe(MIN_STATE_TOKENS);
    // The 850M-class model at Q4_K_M (523 MB) and at F16.
    expect(minCopyGain(523_302_720)).toBe(15);
    expect(minCopyGain(1_705_912_096)).toBe(MIN_COPY_TOKENS);
  });
});

describe("a prefix copied from another sequence", () => {
  let loaded: LoadedModel;
  let cold: LoadedModel;
  beforeAll(async () => {
    [loaded, cold] = await Promise.all([load(), load()]);
  });
  afterAll(async () => {
    await loaded?.dispose();
    await cold?.dispose();
  });

  const run = (
    model: LoadedModel,
    prompt: string,
    maxTokens: number,
    metrics = new EngineMetrics(),
    onToken?: () => unknown,
  ): Promise<Generated> =>
    generateText(model, prompt, maxTokens, onToken === undefined ? { metrics } : { metrics, onToken });
  const systemTokens = (): number => loaded.model.tokenize(SYSTEM.trim()).length;

  it(
    "gives a new conversation the system prompt an idle one holds, and leaves that one's cache as it " + "was",
    async () => {
      await run(loaded, PARENT, 4);
      const parent = loaded.pool.all().find((s) => s.nextTokenIndex > 0);
      const held = parent?.contextTokens.slice();
      const metrics = new EngineMetrics();
      const child = await run(loaded, CHILD, 12, metrics);
      // The parent's sequence holds more than the child shares: the pool takes another and copies.
      expect(metrics.prefixCopies).toBe(1);
      expect(child.cachedTokens).toBeGreaterThanOrEqual(systemTokens());
      // The sequence the pool gave was empty: every cached token came with the copy.
      expect(metrics.prefixCopiedTokens).toBe(child.cachedTokens);
      const reference = await run(cold, CHILD, 12);
      expect(reference.tokens).toBeGreaterThan(0);
      expect([child.tokens, child.text]).toEqual([reference.tokens, reference.text]);
      expect(parent?.contextTokens).toEqual(held);
    },
  );

  it("copies from a sequence that is decoding, which goes on with the reply it gives alone", async () => {
    const parentPrompt = `${SYSTEM}${"Who sings? ".repeat(60)}`;
    const childPrompt = `${SYSTEM}The llama`;
    let started = (): void => undefined;
    const decoding = new Promise<void>((resolve) => (started = resolve));
    let tokens = 0;
    const parent = run(loaded, parentPrompt, 40, new EngineMetrics(), () => ++tokens === 3 && started());
    await decoding;
    const metrics = new EngineMetrics();
    const child = await run(loaded, childPrompt, 12, metrics);
    expect(metrics.prefixCopies).toBe(1);
    expect(child.cachedTokens).toBeGreaterThanOrEqual(systemTokens());
    const reference = await run(cold, childPrompt, 12);
    expect(reference.tokens).toBeGreaterThan(0);
    expect([child.tokens, child.text]).toEqual([reference.tokens, reference.text]);
    expect((await parent).text).toBe((await run(cold, parentPrompt, 40)).text);
  });

  it("copies for three requests that come with one whose step waits on their source: four in a batch", async () => {
    // The bench's four streams of one line with other endings: one request takes the sequence that holds the line
    // and queues its step at once; the three others copy from that sequence while the first batch waits for them.
    const fresh = await load();
    try {
      const line = `${SYSTEM}The llama sings`;
      await run(fresh, `${line} (0)`, 4);
      const batches: number[][] = [];
      watchBatches(fresh, (_tokens, _threads, ids) => batches.push([...ids]));
      const metrics = new EngineMetrics();
      // The first says three are right behind it (as the edge does) and queues its step; then the three come.
      const first = generateText(fresh, `${line} (1)`, 4, { metrics, arrivingWith: 3 });
      while (decodeQueue(fresh.context).queued.length === 0) await new Promise((resolve) => setImmediate(resolve));
      const replies = [first, ...[2, 3, 4].map((n) => run(fresh, `${line} (${n})`, 4, metrics))];
      for (const reply of replies) expect((await reply).cachedTokens).toBeGreaterThanOrEqual(systemTokens());
      expect(metrics.prefixCopies).toBe(3);
      expect(new Set(batches[0]).size).toBe(4);
      for (const [i, reply] of replies.entries())
        expect((await reply).text).toBe((await run(cold, `${line} (${i + 1})`, 4)).text);
    } finally {
      await fresh.dispose();
    }
  });

  it("evaluates the prompt when a copy fails, with a log line that holds no prompt text", async () => {
    // A fresh context holding the parent; its in-memory copies fail: the state restores into nothing.
    const fresh = await load();
    await run(fresh, PARENT, 4);
    const failing: LoadedModel = {
      ...fresh,
      states: {
        capture: async () => ({ bytes: 0, dispose: () => undefined }),
        restore: () => Promise.reject(new Error("no room")),
      },
    };
    const lines: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((chunk: string) => lines.push(String(chunk)) > 0) as typeof process.stderr.write;
    const metrics = new EngineMetrics();
    const prompt = `${SYSTEM}A llama sings`;
    let reply: Generated;
    try {
      reply = await run(failing, prompt, 12, metrics);
    } finally {
      process.stderr.write = write;
      await fresh.dispose();
    }
    expect(metrics.prefixCopies).toBe(0);
    expect(reply.cachedTokens).toBe(0);
    expect(reply.text).toBe((await run(cold, prompt, 12)).text);
    const logged = lines.filter((line) => line.startsWith("prefix copy:"));
    expect(logged).toHaveLength(1);
    expect(logged[0]).toContain("could not be copied (no room)");
    expect(logged[0]).not.toContain("llama");
  });

  it("evaluates a short shared prefix instead of copying a sequence for it", async () => {
    const metrics = new EngineMetrics();
    const reply = await run(loaded, "Once upon a time there lived a big llama", 4, metrics);
    expect(metrics.prefixCopies).toBe(0);
    expect(reply.text).toBe((await run(cold, "Once upon a time there lived a big llama", 4)).text);
  });
});
