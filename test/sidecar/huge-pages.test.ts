// The engine build's CPU buffers of 2 MiB or more ask for transparent huge pages (sidecar/native/huge-pages.patch):
// a model's repacked weights and its KV cache are backed by them where the kernel offers them on request ("madvise",
// Debian's default, or "always"). Read from /proc/self/smaps_rollup around a load of the Q4_K test model. Linux only.
import { existsSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ensureModels } from "../../gguf/models.js";
import { generateText, loadRandom } from "../support/engine.js";

const THP = "/sys/kernel/mm/transparent_hugepage/enabled";
/** The kernel's transparent huge page mode: "always", "madvise" or "never" (none where it has none). */
const mode = existsSync(THP) ? (readFileSync(THP, "utf8").match(/\[(\w+)\]/)?.[1] ?? "never") : "never";
/** This process's anonymous memory in huge pages, KiB. */
const hugeKib = (): number =>
  Number(readFileSync("/proc/self/smaps_rollup", "utf8").match(/^AnonHugePages:\s+(\d+) kB/m)?.[1] ?? 0);

describe.skipIf(mode === "never")(`huge pages for the engine's buffers (THP ${mode})`, () => {
  it("backs a loaded model's repacked weights and KV cache with huge pages", async () => {
    await ensureModels("models", ["random-60m-q4k"]);
    const before = hugeKib();
    const loaded = await loadRandom("random-60m-q4k", 4096);
    try {
      expect(loaded.llama.buildType, "the local build carries the patch").toBe("localBuild");
      expect((await generateText(loaded, "The lighthouse keeper wrote", 8)).tokens).toBe(8);
      // The repacked Q4_K matrices and a KV cache of 2 × 4,096 cells: tens of MiB, most of it in 2 MiB pages.
      expect(hugeKib() - before).toBeGreaterThanOrEqual(32 * 1024);
    } finally {
      await loaded.dispose();
    }
  }, 120_000);
});
