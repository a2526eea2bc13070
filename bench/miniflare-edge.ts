/**
 * The edge's Worker under Miniflare: the same workerd runtime as `wrangler dev`, without wrangler's
 * dev tooling (its proxy Worker and the DevTools relay, which keeps every inspector event of the
 * Worker while no DevTools window is open). `npm run soak` uses it to tell the Worker's own memory
 * from wrangler's. Bundles `edge/hosts/worker/main.ts` as a deployment would (`wrangler deploy --dry-run`),
 * then prints "Ready on <url>". Environment: SIDECAR_URL, LOG_REQUESTS, INSPECTOR_PORT (the Worker's
 * inspector, for a garbage collection before each memory reading).
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Miniflare } from "miniflare";

const outdir = mkdtempSync(join(tmpdir(), "llm-edge-worker-"));
execFileSync("node_modules/.bin/wrangler", ["deploy", "--dry-run", "--outdir", outdir], {
  stdio: "ignore",
  env: { ...process.env, WRANGLER_SEND_METRICS: "false" },
});
const miniflare = new Miniflare({
  modules: true,
  scriptPath: join(outdir, "main.js"),
  modulesRoot: outdir,
  compatibilityDate: "2025-09-01",
  compatibilityFlags: ["enable_request_signal"],
  bindings: {
    SIDECAR_URL: process.env["SIDECAR_URL"] ?? "http://127.0.0.1:50051",
    LOG_REQUESTS: process.env["LOG_REQUESTS"] ?? "true",
  },
  host: "127.0.0.1",
  port: 0,
  ...(process.env["INSPECTOR_PORT"] !== undefined ? { inspectorPort: Number(process.env["INSPECTOR_PORT"]) } : {}),
});
const url = await miniflare.ready;
console.log(`Ready on ${url.origin}`);
process.on("SIGTERM", () => void miniflare.dispose().then(() => process.exit(0)));
