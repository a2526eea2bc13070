// The KV cache tier in host memory (sidecar/engine/llama/kv-tier.ts): a sequence taken over keeps
// its state, a returning prompt is restored and generates what a cold one does, states are saved
// once, the least recently used go first, a state that does not load is dropped, a state never
// crosses models, --cache-dir outlives a restart, and --cache-ram 0 means no tier. Cache marks
// (kv-marks.ts) keep a state ahead of unmarked ones until they expire (an injected clock). On the
// local build the states stay in memory and restore into any sequence (llama-internals.ts,
// `sequenceStates`); with --cache-dir, and on the prebuilt library, they are files.
import { create } from "@bufbuild/protobuf";
import { mkdtemp, readdir, rm, stat, truncate, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { LlamaContextSequence, Token } from "node-llama-cpp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GenerateRequestSchema } from "../../proto/gen/inference/v1/inference_pb.js";
import { modelPath } from "../../gguf/models.js";
import { generate } from "../../sidecar/engine/decode/generate.js";
import { EngineMetrics } from "../../sidecar/engine/engine-metrics.js";
import { modelFolder } from "../../sidecar/engine/llama/kv-folder.js";
import { KvTier, MIN_STATE_TOKENS } from "../../sidecar/engine/llama/kv-tier.js";
import { evictionOrder, readMarks } from "../../sidecar/engine/llama/kv-marks.js";
import type { HeldState, SequenceStates } from "../../sidecar/engine/llama/llama-internals.js";
import { loadModel, type LoadedModel, type ModelOptions } from "../../sidecar/engine/llama/model.js";
import type { RunningSidecar } from "../../sidecar/start-sidecar.js";
import { clientsFor, collect, readMetrics, startTestSidecar, promptOf } from "../support/sidecar.js";

const load = (options: Partial<ModelOptions> = {}): Promise<LoadedModel> =>
  loadModel({
    modelPath: modelPath("random-60m"),
    threads: 1,
    engine: "auto",
    sequences: 1,
    contextSize: 1024,
    maxQueue: 4,
    queueTimeoutMs: 60_000,
    ...options,
  });

interface Run {
  readonly cached: number;
  readonly promptTokens: number;
  readonly tokens: number[];
}

async function run(loaded: LoadedModel, prompt: string, ttlSeconds?: number): Promise<Run> {
  const cacheMarks = ttlSeconds === undefined ? [] : [{ messages: 0, ttlSeconds }];
  const request = create(GenerateRequestSchema, {
    input: { case: "prompt", value: prompt },
    maxTokens: 12,
    sampling: { temperature: 0 },
    cacheMarks,
  });
  let cached = -1;
  let promptTokens = 0;
  const tokens: number[] = [];
  for await (const { event } of generate(loaded, request, new AbortController().signal, new EngineMetrics())) {
    if (event?.case === "start")
      [cached, promptTokens] = [event.value.cachedTokens ?? 0, event.value.promptTokens ?? 0];
    if (event?.case === "token") tokens.push(event.value.id ?? -1);
  }
  return { cached, promptTokens, tokens };
}

const [A, B] = [promptOf(0), promptOf(1)];
const EXTENDED_A = `${A} ${promptOf(3, 40)}`;

describe("KV cache tier with a model", () => {
  const reference = new Map<string, number[]>();
  const folders: string[] = [];
  beforeAll(async () => {
    // References: each prompt cold (--cache-ram 0: no tier; each prompt differs from the last from its first word on).
    const cold = await load({ cacheRam: 0 });
    try {
      expect(cold.kvTier).toBeUndefined();
      for (const prompt of [A, B, EXTENDED_A]) {
        const result = await run(cold, prompt);
        expect(result.cached).toBeLessThanOrEqual(1);
        expect(result.promptTokens).toBeGreaterThanOrEqual(2 * MIN_STATE_TOKENS);
        reference.set(prompt, result.tokens);
      }
    } finally {
      await cold.dispose();
    }
  }, 120_000);
  afterAll(async () => {
    for (const folder of folders) await rm(folder, { recursive: true, force: true });
  });

  it.each(["in memory", "in --cache-dir files"])(
    "restores a returning prompt over one sequence, with the tokens of a cold run, saving each state once (%s)",
    async (store) => {
      const cacheDir = store === "in memory" ? undefined : await mkdtemp(path.join(os.tmpdir(), "kv-tier-test-"));
      if (cacheDir !== undefined) folders.push(cacheDir);
      const loaded = await load({ cacheRam: 64, cacheDir });
      try {
        // Where the states are: memory on the local build (no folder), else files.
        expect(loaded.kvTier?.dir === "").toBe(cacheDir === undefined && loaded.states !== undefined);
        const first = await run(loaded, A);
        expect(first.tokens).toEqual(reference.get(A));
        expect((await run(loaded, B)).tokens).toEqual(reference.get(B));
        for (let turn = 0; turn < 2; turn++) {
          const a = await run(loaded, A);
          expect(a.cached).toBe(a.promptTokens - 1);
          expect(a.tokens).toEqual(reference.get(A));
          const b = await run(loaded, B);
          expect(b.cached).toBe(b.promptTokens - 1);
          expect(b.tokens).toEqual(reference.get(B));
        }
        // A grown prompt: the saved prefix restored, only the rest evaluated.
        const grown = await run(loaded, EXTENDED_A);
        expect(grown.cached).toBeGreaterThanOrEqual(first.promptTokens - 1);
        expect(grown.cached).toBeLessThan(grown.promptTokens - 1);
        expect(grown.tokens).toEqual(reference.get(EXTENDED_A));
        const stats = loaded.kvTier?.stats;
        expect(stats?.hits).toBe(5);
        expect(stats?.saves).toBe(2);
        expect(stats?.states).toBe(2);
        expect(stats?.dropped).toBe(0);
        await loaded.kvTier?.settled();
        const files =
          cacheDir === undefined
            ? []
            : (await readdir(loaded.kvTier?.dir ?? "")).filter((name) => name.endsWith(".kv"));
        // The grown prompt, saved ahead, supersedes A's state: A's prompt and all but A's last few
        // (generated) tokens are in it. One file a state with --cache-dir, none in memory.
        expect(files).toHaveLength(cacheDir === undefined ? 0 : 2);
        expect(loaded.kvTier?.stats).toMatchObject({ states: 2, saves: 3 });
      } finally {
        await loaded.dispose();
      }
    },
    120_000,
  );

  it("saves a sequence left idle at once while sequences are being taken over, and not before", async () => {
    const loaded = await load({ cacheRam: 64 });
    try {
      await run(loaded, A);
      await loaded.kvTier?.settled();
      // No takeover yet: A stays unsaved in its sequence.
      expect(loaded.kvTier?.stats.saves).toBe(0);
      await run(loaded, B);
      await loaded.kvTier?.settled();
      // B took A's sequence over (A saved on its path); B is saved as soon as it is left idle.
      expect(loaded.kvTier?.stats).toMatchObject({ saves: 2, states: 2 });
      const [sequence] = loaded.pool.all();
      expect(sequence !== undefined && loaded.kvTier?.keeps(sequence)).toBe(true);
      const a = await run(loaded, A);
      expect(a.cached).toBe(a.promptTokens - 1);
      expect(a.tokens).toEqual(reference.get(A));
      await loaded.kvTier?.settled();
      // A's state was saved already: nothing new to save.
      expect(loaded.kvTier?.stats).toMatchObject({ saves: 2, hits: 1 });
    } finally {
      await loaded.dispose();
    }
  }, 120_000);

  it("saves a marked prompt's state as marked, and restores it as any other", async () => {
    const loaded = await load({ cacheRam: 64 });
    try {
      const first = await run(loaded, A, 300);
      await run(loaded, B);
      expect(loaded.kvTier?.stats).toMatchObject({ states: 1, marked: 1 });
      const a = await run(loaded, A);
      expect(a.cached).toBe(first.promptTokens - 1);
      expect(a.tokens).toEqual(reference.get(A));
      // B (unmarked) was saved when A came back; A's state still holds its mark.
      expect(loaded.kvTier?.stats).toMatchObject({ states: 2, marked: 1 });
    } finally {
      await loaded.dispose();
    }
  }, 120_000);

  it("drops a state file that does not load, with a log line, and evaluates the prompt cold", async () => {
    const cacheDir = await mkdtemp(path.join(os.tmpdir(), "kv-tier-test-"));
    folders.push(cacheDir);
    const loaded = await load({ cacheRam: 64, cacheDir });
    const tier = loaded.kvTier as KvTier;
    try {
      const files = async (): Promise<string[]> => {
        // The saves queued so far (a sequence left idle is saved ahead) are done first.
        await tier.settled();
        return (await readdir(tier.dir))
          .filter((name) => name.endsWith(".kv"))
          .map((name) => path.join(tier.dir, name));
      };
      await run(loaded, A);
      await run(loaded, B);
      // A's and B's states: garbage of the same size reaches llama.cpp when A comes back.
      const saved = await files();
      expect(saved).toHaveLength(2);
      for (const file of saved) await writeFile(file, Buffer.alloc((await stat(file)).size, 7));
      const a = await run(loaded, A);
      expect(a.cached).toBeLessThanOrEqual(1);
      expect(a.tokens).toEqual(reference.get(A));
      // Then every file is cut short: B's is refused before llama.cpp reads it.
      for (const file of await files()) await truncate(file, 100);
      const b = await run(loaded, B);
      expect(b.cached).toBeLessThanOrEqual(1);
      expect(b.tokens).toEqual(reference.get(B));
      expect(tier.stats.dropped).toBe(2);
      expect(tier.stats.hits).toBe(0);
    } finally {
      await loaded.dispose();
    }
  }, 120_000);

  it.skipIf(process.env["ENGINE"] === "prebuilt")(
    "copies a state in memory into another sequence on the local build, which then serves the prompt",
    async () => {
      const loaded = await load({ cacheRam: 0, sequences: 2 });
      try {
        expect(loaded.llama.buildType).toBe("localBuild");
        const states = loaded.states;
        if (states === undefined) throw new Error("the local build has no sequence states in memory");
        await run(loaded, A);
        const [from, to] = [...loaded.pool.all()].sort((x, y) => y.nextTokenIndex - x.nextTokenIndex);
        if (from === undefined || to === undefined) throw new Error("two sequences expected");
        const tokens = from.contextTokens.slice();
        expect(to.nextTokenIndex).toBe(0);
        const state = await states.capture(from);
        try {
          await states.restore(to, state, tokens);
        } finally {
          state.dispose();
        }
        expect(to.contextTokens).toEqual(tokens);
        await from.eraseContextTokenRanges([{ start: 0, end: from.nextTokenIndex }]);
        // Only the copy holds A now: the prompt is served from it, as a cold run.
        const a = await run(loaded, A);
        expect(a.cached).toBe(a.promptTokens - 1);
        expect(a.tokens).toEqual(reference.get(A));
        expect(to.contextTokens.slice(0, tokens.length)).toEqual(tokens);
      } finally {
        await loaded.dispose();
      }
    },
    120_000,
  );

  it("keeps its states in --cache-dir across a restart, and loads none of another model", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "kv-tier-test-"));
    folders.push(dir);
    const first = await load({ cacheRam: 64, cacheDir: dir });
    await run(first, A);
    await run(first, B);
    await first.dispose();
    const again = await load({ cacheRam: 64, cacheDir: dir });
    try {
      expect(again.kvTier?.stats.states).toBe(2);
      const b = await run(again, B);
      expect(b.cached).toBe(b.promptTokens - 1);
      expect(b.tokens).toEqual(reference.get(B));
    } finally {
      await again.dispose();
    }
    // Another context size is another identity: its states are not loaded.
    const other = await load({ cacheRam: 64, cacheDir: dir, contextSize: 512 });
    try {
      expect(other.kvTier?.stats.states).toBe(0);
      const a = await run(other, A);
      expect(a.cached).toBeLessThanOrEqual(1);
      expect(a.tokens).toEqual(reference.get(A));
    } finally {
      await other.dispose();
    }
  }, 120_000);
});

/** A sequence that only holds tokens; its state file is `bytes` long. */
function fakeSequence(tokens: number[], bytes: number): LlamaContextSequence {
  const sequence = {
    contextTokens: tokens as Token[],
    get nextTokenIndex() {
      return sequence.contextTokens.length;
    },
    async saveStateToFile(file: string) {
      await writeFile(file, Buffer.alloc(bytes));
      return { fileSize: bytes };
    },
    async eraseContextTokenRanges() {
      sequence.contextTokens = [];
    },
    async loadStateFromFile() {
      sequence.contextTokens = restoring;
    },
  };
  let restoring: Token[] = [];
  return Object.assign(sequence, {
    willRestore(next: number[]) {
      restoring = next as Token[];
    },
  }) as unknown as LlamaContextSequence;
}

const range = (first: number, count = MIN_STATE_TOKENS) => Array.from({ length: count }, (_, i) => first + i);
const between = <T>(_sequence: LlamaContextSequence, work: () => Promise<T>): Promise<T> => work();

/** Whether the state of `range(first)` is still there: a prompt of it is restored from the tier. */
async function restores(tier: KvTier, first: number): Promise<boolean> {
  const hits = tier.stats.hits;
  const sequence = fakeSequence([], 100);
  (sequence as unknown as { willRestore(t: number[]): void }).willRestore(range(first));
  await tier.prepare(sequence, range(first) as Token[], true);
  return tier.stats.hits > hits;
}

describe("KvTier", () => {
  it("evicts the least recently used state first under a tiny budget", async () => {
    const tier = await KvTier.open({ budgetBytes: 250, identity: "m", between, log: () => undefined });
    try {
      for (const first of [1000, 2000, 3000]) await tier.prepare(fakeSequence(range(first), 100), [1] as Token[], true);
      expect(tier.stats).toMatchObject({ states: 2, bytes: 200, saves: 3, evictions: 1 });
      // 2000 is used: 3000 is now the least recent, and goes when 4000 comes.
      const sequence = fakeSequence([], 100);
      (sequence as unknown as { willRestore(t: number[]): void }).willRestore(range(2000));
      await tier.prepare(sequence, range(2000) as Token[], true);
      expect(tier.stats.hits).toBe(1);
      await tier.prepare(fakeSequence(range(4000), 100), [1] as Token[], true);
      const restored = fakeSequence([], 100);
      (restored as unknown as { willRestore(t: number[]): void }).willRestore(range(3000));
      await tier.prepare(restored, range(3000) as Token[], true);
      expect(tier.stats).toMatchObject({ states: 2, hits: 1, evictions: 2 });
    } finally {
      await tier.dispose();
    }
  });

  it("saves no state larger than the whole budget once one such has been seen", async () => {
    const tier = await KvTier.open({ budgetBytes: 50, identity: "m", between, log: () => undefined });
    try {
      await tier.prepare(fakeSequence(range(1000), 100), [1] as Token[], false);
      await tier.prepare(fakeSequence(range(2000), 100), [1] as Token[], false);
      expect(tier.stats).toMatchObject({ states: 0, bytes: 0, saves: 1, evictions: 1 });
    } finally {
      await tier.dispose();
    }
  });

  it("saves a state once, and replaces the states it extends", async () => {
    const tier = await KvTier.open({ budgetBytes: 10_000, identity: "m", between, log: () => undefined });
    try {
      await tier.prepare(fakeSequence(range(1000), 100), [1] as Token[], false);
      await tier.prepare(fakeSequence(range(1000), 100), [1] as Token[], false);
      await tier.prepare(fakeSequence(range(1000, 40), 100), [1] as Token[], false);
      expect(tier.stats).toMatchObject({ states: 1, saves: 1 });
      await tier.prepare(fakeSequence(range(1000, 2 * MIN_STATE_TOKENS), 100), [1] as Token[], false);
      expect(tier.stats).toMatchObject({ states: 1, saves: 2, bytes: 100 });
    } finally {
      await tier.dispose();
    }
  });

  it("with --cache-dir, finds its states again, and not another model's", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "kv-tier-unit-"));
    try {
      const first = await KvTier.open({ budgetBytes: 10_000, dir, identity: "model-1", between, log: () => undefined });
      await first.prepare(fakeSequence(range(1000), 100), [1] as Token[], false);
      await first.dispose();
      const again = await KvTier.open({ budgetBytes: 10_000, dir, identity: "model-1", between, log: () => undefined });
      expect(again.stats.states).toBe(1);
      await again.dispose();
      const other = await KvTier.open({ budgetBytes: 10_000, dir, identity: "model-2", between, log: () => undefined });
      expect(other.stats.states).toBe(0);
      await other.dispose();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it(
    "keeps a marked state while it evicts unmarked ones, and lets it go by recency once its mark " + "expires",
    async () => {
      const clock = { now: 1_000_000 };
      const tier = await KvTier.open({
        budgetBytes: 250,
        identity: "m",
        between,
        log: () => undefined,
        now: () => clock.now,
      });
      try {
        // 1000's prompt is marked for 60 s; the sequence is then taken over (saved, marked).
        const marked = fakeSequence([], 100);
        await tier.prepare(marked, range(1000) as Token[], false, [{ tokens: MIN_STATE_TOKENS, ttlMs: 60_000 }]);
        (marked as unknown as { contextTokens: number[] }).contextTokens = range(1000);
        await tier.prepare(marked, [1] as Token[], false);
        for (const first of [2000, 3000, 4000])
          await tier.prepare(fakeSequence(range(first), 100), [1] as Token[], false);
        // The least recently used is 1000, yet 2000 and 3000 went: 1000 is marked.
        expect(tier.stats).toMatchObject({ states: 2, marked: 1, saves: 4, evictions: 2 });
        expect(await restores(tier, 1000)).toBe(true);
        // A minute later the mark has expired: states go by recency alone (4000, then 1000).
        clock.now += 60_000;
        expect(tier.stats.marked).toBe(0);
        for (const first of [5000, 6000]) await tier.prepare(fakeSequence(range(first), 100), [1] as Token[], false);
        expect(tier.stats).toMatchObject({ states: 2, marked: 0, evictions: 4 });
        expect(await restores(tier, 1000)).toBe(false);
      } finally {
        await tier.dispose();
      }
    },
  );

  it("takes the marks of the states it supersedes, until they expire", async () => {
    const clock = { now: 1_000_000 };
    const tier = await KvTier.open({
      budgetBytes: 10_000,
      identity: "m",
      between,
      log: () => undefined,
      now: () => clock.now,
    });
    try {
      const session = fakeSequence([], 100);
      await tier.prepare(session, range(1000) as Token[], false, [{ tokens: 10, ttlMs: 1000 }]);
      (session as unknown as { contextTokens: number[] }).contextTokens = range(1000);
      await tier.prepare(session, [1] as Token[], false);
      // The same session a turn later, unmarked this time: its state supersedes the marked one and keeps the mark.
      await tier.prepare(fakeSequence(range(1000, 2 * MIN_STATE_TOKENS), 100), [1] as Token[], false);
      expect(tier.stats).toMatchObject({ states: 1, marked: 1 });
      clock.now += 1000;
      expect(tier.stats.marked).toBe(0);
    } finally {
      await tier.dispose();
    }
  });

  it("with --cache-dir, keeps the marks across a restart (expiry as wall-clock time)", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "kv-tier-marks-"));
    const clock = { now: 1_000_000 };
    const open = () =>
      KvTier.open({ budgetBytes: 10_000, dir, identity: "m", between, log: () => undefined, now: () => clock.now });
    try {
      const first = await open();
      const marked = fakeSequence([], 100);
      await first.prepare(marked, range(1000) as Token[], false, [{ tokens: MIN_STATE_TOKENS, ttlMs: 5000 }]);
      (marked as unknown as { contextTokens: number[] }).contextTokens = range(1000);
      await first.prepare(marked, [1] as Token[], false);
      await first.dispose();
      const again = await open();
      expect(again.stats).toMatchObject({ states: 1, marked: 1 });
      clock.now += 5000;
      expect(again.stats).toMatchObject({ states: 1, marked: 0 });
      await again.dispose();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("evicts unmarked (and expired) states by recency, then marked ones by expiry, the earliest first", () => {
    const mark = (expiresAt: number) => ({ marks: [{ tokens: 5, expiresAt }] });
    expect(
      evictionOrder(
        [
          ["a", mark(300)],
          ["b", {}],
          ["c", mark(200)],
          ["d", mark(50)],
        ],
        100,
      ),
    ).toEqual(["b", "d", "c", "a"]);
  });

  it("reads only well-formed marks from an index", () => {
    expect(readMarks("x")).toBeUndefined();
    expect(readMarks([{ tokens: "5", expiresAt: 1 }, null])).toBeUndefined();
    expect(
      readMarks([
        { tokens: 5, expiresAt: 9 },
        { tokens: 1.5, expiresAt: 9 },
      ]),
    ).toEqual([{ tokens: 5, expiresAt: 9 }]);
  });

  it("shares one --cache-dir between models: each in its own folder, none deleting the other's states", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "kv-tier-unit-"));
    const open = (identity: string) =>
      KvTier.open({ budgetBytes: 10_000, dir, identity, between, log: () => undefined });
    try {
      const [one, two] = [await open("model-1"), await open("model-2")];
      expect(one.dir).not.toBe(two.dir);
      expect(path.dirname(one.dir)).toBe(dir);
      await one.prepare(fakeSequence(range(1000), 100), [1] as Token[], false);
      await two.prepare(fakeSequence(range(2000), 100), [1] as Token[], false);
      await Promise.all([one.dispose(), two.dispose()]);
      // Opened again in the other order: each still has its own state.
      const twoAgain = await open("model-2");
      const oneAgain = await open("model-1");
      expect([oneAgain.stats.states, twoAgain.stats.states]).toEqual([1, 1]);
      await Promise.all([oneAgain.dispose(), twoAgain.dispose()]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("leaves a model's --cache-dir folder to the running sidecar that holds it, with a log line", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "kv-tier-unit-"));
    const lines: string[] = [];
    const open = (log: (line: string) => void = () => undefined) =>
      KvTier.open({ budgetBytes: 10_000, dir, identity: "model-1", between, log });
    try {
      const first = await open();
      await first.prepare(fakeSequence(range(1000), 100), [1] as Token[], false);
      await first.dispose();
      // Another running process (this one's parent) holds the folder now.
      await writeFile(path.join(modelFolder(dir, "model-1"), "owner.pid"), String(process.ppid));
      const second = await open((line) => lines.push(line));
      expect(path.dirname(second.dir)).not.toBe(dir);
      expect(second.stats.states).toBe(0);
      expect(lines).toEqual([
        `kv tier: ${modelFolder(dir, "model-1")} is in use by process ${process.ppid}; this sidecar keeps its states ` +
          `in a private folder until it stops`,
      ]);
      await second.dispose();
      // A stale owner (no such process) is replaced: the states are found again.
      await writeFile(path.join(modelFolder(dir, "model-1"), "owner.pid"), "999999999");
      const third = await open();
      expect(third.stats.states).toBe(1);
      await third.dispose();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("removes state files no index names when it opens a --cache-dir folder", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "kv-tier-unit-"));
    const open = () => KvTier.open({ budgetBytes: 10_000, dir, identity: "model-1", between, log: () => undefined });
    try {
      const first = await open();
      await first.prepare(fakeSequence(range(1000), 100), [1] as Token[], false);
      await first.dispose();
      // A run that stopped between letting a state go and removing its file left it behind.
      await writeFile(path.join(first.dir, "left-behind.kv"), Buffer.alloc(100));
      const again = await open();
      expect(again.stats.states).toBe(1);
      expect((await readdir(again.dir)).filter((name) => name.endsWith(".kv"))).toHaveLength(1);
      await again.dispose();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("says which sequences a saved state keeps whole (the pool takes those over first)", async () => {
    const tier = await KvTier.open({ budgetBytes: 10_000, identity: "m", between, log: () => undefined });
    try {
      const held = fakeSequence(range(1000), 100);
      expect(tier.keeps(held)).toBe(false);
      await tier.prepare(held, [1] as Token[], false);
      expect(tier.keeps(fakeSequence(range(1000), 100))).toBe(true);
      expect(tier.keeps(fakeSequence(range(1000, MIN_STATE_TOKENS - 1), 100))).toBe(true);
      expect(tier.keeps(fakeSequence(range(1000, MIN_STATE_TOKENS + 1), 100))).toBe(false);
      expect(tier.keeps(fakeSequence(range(5000, 3), 100))).toBe(true);
    } finally {
      await tier.dispose();
    }
  });

  it(
    "keeps states in memory when given them (no folder), frees what it lets go of, and drops one that does not " +
      "restore",
    async () => {
      const freed: number[] = [];
      const lines: string[] = [];
      let captured = 0;
      const states: SequenceStates = {
        async capture() {
          const id = ++captured;
          return { bytes: 100, dispose: () => void freed.push(id) };
        },
        async restore(sequence, _state, tokens) {
          if (tokens[0] === 2000) throw new Error("refused");
          (sequence as unknown as { contextTokens: readonly Token[] }).contextTokens = tokens;
        },
      };
      const tier = await KvTier.open({
        budgetBytes: 250,
        identity: "m",
        between,
        log: (line) => lines.push(line),
        states,
      });
      try {
        expect(tier.dir).toBe("");
        for (const first of [1000, 2000, 3000])
          await tier.prepare(fakeSequence(range(first), 100), [1] as Token[], true);
        await tier.settled();
        // The budget holds two: the first state went, and its memory with it.
        expect(tier.stats).toMatchObject({ states: 2, evictions: 1 });
        expect(freed).toEqual([1]);
        expect(await restores(tier, 3000)).toBe(true);
        expect(await restores(tier, 2000)).toBe(false);
        await tier.settled();
        expect(tier.stats).toMatchObject({ states: 1, dropped: 1, hits: 1 });
        expect(freed).toEqual([1, 2]);
        expect(lines.join("\n")).toMatch(/dropped a 64-token state that did not load \(refused\)/);
      } finally {
        await tier.dispose();
      }
      expect(freed).toEqual([1, 2, 3]);
    },
  );

  it(
    "supersedes a state the new one holds all but its last few tokens of, unless a mark in force lies in " + "them",
    async () => {
      const clock = { now: 1_000_000 };
      const tier = await KvTier.open({
        budgetBytes: 10_000,
        identity: "m",
        between,
        log: () => undefined,
        now: () => clock.now,
      });
      try {
        const session = range(1000, 3 * MIN_STATE_TOKENS);
        // The next turn: the reply's last tokens differ (sent back re-rendered), then more.
        const next = [...session.slice(0, -10), ...range(9000, MIN_STATE_TOKENS)];
        await tier.prepare(fakeSequence(session, 100), [1] as Token[], false);
        await tier.prepare(fakeSequence(next, 100), [1] as Token[], false);
        expect(tier.stats).toMatchObject({ states: 1, saves: 2 });
        expect(tier.keeps(fakeSequence(next, 100))).toBe(true);
        expect(tier.keeps(fakeSequence(session, 100))).toBe(false);
        // A tail of MIN_STATE_TOKENS or more is worth keeping.
        const other = [...next.slice(0, -MIN_STATE_TOKENS), ...range(7000, MIN_STATE_TOKENS)];
        await tier.prepare(fakeSequence(other, 100), [1] as Token[], false);
        expect(tier.stats).toMatchObject({ states: 2, saves: 3 });
        // A marked end is kept for its mark's time.
        const marked = fakeSequence(range(20_000, 2 * MIN_STATE_TOKENS), 100);
        await tier.prepare(marked, range(20_000, 2 * MIN_STATE_TOKENS) as Token[], false, [
          { tokens: 2 * MIN_STATE_TOKENS, ttlMs: 300_000 },
        ]);
        await tier.prepare(marked, [1] as Token[], false);
        await tier.prepare(
          fakeSequence([...range(20_000, 2 * MIN_STATE_TOKENS - 5), ...range(30_000, 20)], 100),
          [1] as Token[],
          false,
        );
        expect(tier.stats).toMatchObject({ states: 4, marked: 1 });
      } finally {
        await tier.dispose();
      }
    },
  );

  it("captures a state that extends a held one into that one's buffer, which it never frees", async () => {
    const freed: number[] = [];
    const reused: (number | undefined)[] = [];
    let captured = 0;
    const states: SequenceStates = {
      async capture(_sequence, reuse) {
        const previous = (reuse as { id?: number } | undefined)?.id;
        reused.push(previous);
        const id = previous ?? ++captured;
        const state: HeldState & { id: number } = { id, bytes: 100, dispose: () => void freed.push(id) };
        return state;
      },
      async restore() {},
    };
    const tier = await KvTier.open({ budgetBytes: 10_000, identity: "m", between, log: () => undefined, states });
    try {
      await tier.prepare(fakeSequence(range(1000), 100), [1] as Token[], false);
      await tier.prepare(fakeSequence(range(1000, 2 * MIN_STATE_TOKENS), 100), [1] as Token[], false);
      await tier.prepare(fakeSequence(range(5000), 100), [1] as Token[], false);
      await tier.settled();
      expect(reused).toEqual([undefined, 1, undefined]);
      expect(tier.stats).toMatchObject({ states: 2, saves: 3, bytes: 200 });
      expect(freed).toEqual([]);
    } finally {
      await tier.dispose();
    }
    expect(freed.sort()).toEqual([1, 2]);
  });

  it("removes its private folder at stop", async () => {
    const tier = await KvTier.open({ budgetBytes: 10_000, identity: "m", between, log: () => undefined });
    await tier.prepare(fakeSequence(range(1000), 100), [1] as Token[], false);
    await tier.dispose();
    await expect(stat(tier.dir)).rejects.toThrow();
  });
});

describe("KV cache tier in the sidecar", () => {
  let sidecar: RunningSidecar;
  beforeAll(async () => {
    sidecar = await startTestSidecar({ model: modelPath("random-60m"), sequences: 1, contextSize: 1024, cacheRam: 64 });
  }, 60_000);
  afterAll(() => sidecar?.stop());

  it("reports states, bytes, saves, hits and misses in /metrics", async () => {
    const client = clientsFor(sidecar.url).grpc;
    const cachedOf = async (prompt: string): Promise<number> => {
      const events = await collect(
        client.generate({ input: { case: "prompt", value: prompt }, maxTokens: 4, sampling: { temperature: 0 } }),
      );
      const start = events[0];
      return start?.case === "start" ? start.value.cachedTokens : -1;
    };
    await cachedOf(A);
    await cachedOf(B);
    expect(await cachedOf(A)).toBeGreaterThan(2 * MIN_STATE_TOKENS);
    const metrics = await readMetrics(sidecar.url);
    expect(metrics.sidecar_kv_tier_states).toBe(2);
    expect(metrics.sidecar_kv_tier_saves_total).toBe(2);
    expect(metrics.sidecar_kv_tier_hits_total).toBe(1);
    expect(metrics.sidecar_kv_tier_misses_total).toBe(2);
    expect(metrics.sidecar_kv_tier_bytes).toBeGreaterThan(0);
    expect(metrics.sidecar_kv_tier_restore_seconds_total).toBeGreaterThan(0);
  }, 60_000);
});
