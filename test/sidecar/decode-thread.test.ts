// A context's decodes run on one thread of its own (sidecar/native/decode-thread.patch), not on libuv's pool: read
// from /proc, every token's decode CPU lands on one thread named "llama-decode", the same thread from one generation
// to the next, one such thread per context, gone when the context is unloaded; a process that never unloads ends
// by itself, and unloading under a running generation ends that generation cleanly. Linux and the local build only.
import { spawnSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Stat, threadStats } from "../../bench/cpu.js";
import { ensureModels } from "../../gguf/models.js";
import type { LoadedModel } from "../../sidecar/engine/llama/model.js";
import { generateText, loadRandom } from "../support/engine.js";

/** This process's threads by id. */
const threads = (): Map<number, Stat> => new Map(threadStats(process.pid).map((t) => [t.pid, t]));

const decodeThreads = (): number[] => [...threads()].filter(([, t]) => t.comm === "llama-decode").map(([id]) => id);

const linux = process.platform === "linux";

describe.skipIf(!linux)("the decode thread", () => {
  let loaded: LoadedModel;
  let before: number[] = [];
  beforeAll(async () => {
    await ensureModels("models", ["random-60m"]);
    before = decodeThreads();
    loaded = await loadRandom();
  }, 120_000);
  afterAll(() => loaded?.dispose());

  it("carries every decode of the context, the same thread generation after generation", async () => {
    expect(loaded.llama.buildType, "the local build carries the patch").toBe("localBuild");
    await generateText(loaded, "The lighthouse keeper wrote", 150);
    const [decoder, ...more] = decodeThreads().filter((id) => !before.includes(id));
    expect(decoder, "a new decode thread").toBeDefined();
    expect(more).toEqual([]);
    for (let round = 0; round < 2; round++) {
      const start = threads();
      const generated = await generateText(loaded, "Copper and maple, north of", 150);
      const end = threads();
      expect(generated.tokens).toBe(150);
      expect(decodeThreads().filter((id) => !before.includes(id))).toEqual([decoder]);
      const used = (id: number | undefined): number =>
        (end.get(id ?? 0)?.cpuMs ?? 0) - (start.get(id ?? 0)?.cpuMs ?? 0);
      // The decode thread is thread 0 of every graph; with two threads it computes about half of each step, and the
      // other half runs on ggml's worker. Every other thread but the main one (which streams) stays near idle.
      const others = [...end.keys()].filter((id) => id !== decoder && id !== process.pid);
      const busiest = others.sort((a, b) => used(b) - used(a));
      const [worker, ...rest] = busiest;
      expect(used(decoder)).toBeGreaterThan(100);
      expect(used(worker)).toBeGreaterThan(used(decoder) / 3);
      for (const id of rest) expect(used(id), `thread ${id} (${end.get(id)?.comm})`).toBeLessThan(used(decoder) / 5);
    }
  }, 120_000);

  it("has one per context, and ends with it", async () => {
    const existing = decodeThreads();
    const second = await loadRandom();
    await generateText(second, "Signals from orbit", 8);
    const added = decodeThreads().filter((id) => !existing.includes(id));
    expect(added).toHaveLength(1);
    await second.dispose();
    expect(decodeThreads()).toEqual(existing);
  }, 120_000);

  it("lets a process that never unloads end by itself, and an unload under a generation end it", () => {
    const run = (mode: string) =>
      spawnSync(process.execPath, ["--import", "tsx", "test/support/decode-thread-probe.ts", mode], {
        encoding: "utf8",
        timeout: 90_000,
      });
    const left = run("leave");
    expect(left.status, left.stderr).toBe(0);
    expect(JSON.parse(left.stdout.trim().split("\n").at(-1) ?? "{}")).toEqual({ generated: "200 tokens" });
    const unloaded = run("unload");
    expect(unloaded.status, unloaded.stderr).toBe(0);
    expect(JSON.parse(unloaded.stdout.trim().split("\n").at(-1) ?? "{}")).toEqual({
      generated: "8 tokens, then DisposedError",
    });
  }, 200_000);
});
