// The Worker as `npm run deploy` uploads it (`wrangler deploy --minify`, here with --dry-run:
// nothing leaves the machine): it bundles, keeps its bindings, and stays small (deploy/README.md,
// "A Worker in front of a GPU host"; 130 KiB gzip on 2026-12-06, docs/performance.md, "The Worker's weight"). zod is
// imported as a namespace
// everywhere so that the bundler can drop what the edge does not use (its locales alone were 300 KiB).
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";

// 128 until Ollama's API (4.7 KiB gzip measured: 131.0; docs/decisions.md, "Ollama's API in one protocol folder"),
// 134 until pulls by address and admin keys (134.5; "Admin keys and a catalogue that changes at run time"),
// 136 until images in (4.3 KiB gzip measured: 134.6 → 138.8; "Images at the edge: references resolved before the
// call") and llama-server's operator endpoints and fields (1.72 KiB: "llama-server's operator endpoints"),
// 141 with LoRA adapters (0.7 KiB: "LoRA adapters: a context each on the base model's weights"),
// 142 until the render API for llm-d's token producer (0.7 KiB: 142.1 measured; "Precise prefix-cache routing: the
// render API on the edge").
const LIMIT_GZIP_KIB = 143;

describe("npm run deploy (dry run)", () => {
  it("bundles the Worker, minified, within the size budget, with its rate-limit binding", () => {
    const outdir = mkdtempSync(join(tmpdir(), "llm-edge-bundle-"));
    try {
      const run = spawnSync("node_modules/.bin/wrangler", ["deploy", "--dry-run", "--minify", "--outdir", outdir], {
        encoding: "utf8",
        env: { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false", NO_COLOR: "1" },
        timeout: 120_000,
      });
      expect(run.status, run.stderr).toBe(0);
      expect(run.stdout).toContain("env.RATE_LIMITER");
      expect(run.stdout).toMatch(/files from the assets directory .*public/); // the playground page
      const bundle = readFileSync(join(outdir, "main.js"));
      const gzipKiB = gzipSync(bundle).byteLength / 1024;
      expect(gzipKiB).toBeLessThanOrEqual(LIMIT_GZIP_KIB);
      // zod's Catalan and Spanish messages stand for its other locales: none is bundled.
      expect(bundle.toString("utf8")).not.toContain("Entrada inv");
      // The field tables' and the routes' documentation is left out (edge/fields/docs-text.ts); their checks are in.
      expect(bundle.toString("utf8")).not.toContain("picks the model when several are served");
      expect(bundle.toString("utf8")).not.toContain("the caller's batches");
      expect(bundle.toString("utf8")).toContain("at least one message is required");
    } finally {
      rmSync(outdir, { recursive: true, force: true });
    }
  });
});
