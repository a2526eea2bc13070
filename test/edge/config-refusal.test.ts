// A bad setting stops the edge's start on both hosts, naming the variable and what it accepts:
// `npm run edge` exits non-zero, and `wrangler dev` fails to start the Worker (it checks its
// settings at module scope; docs/decisions.md, "Settings checked before the edge starts").
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { freePort, startWrangler } from "../support/wrangler.js";

const REFUSAL = 'RATE_LIMIT: "6O" is not a non-negative integer';

describe("a bad setting stops the start", () => {
  it("on Node: exits non-zero with one line naming the variable", async () => {
    const root = fileURLToPath(new URL("../..", import.meta.url));
    const env = {
      ...process.env,
      EDGE_PORT: String(await freePort()),
      SIDECAR_URL: "http://127.0.0.1:1",
      RATE_LIMIT: "6O",
      LOG_REQUESTS: "false",
    };
    const child = spawn("node_modules/.bin/tsx", ["edge/hosts/node/main.ts"], {
      cwd: root,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
    expect(code).not.toBe(0);
    expect(stderr).toContain(`edge: ${REFUSAL}`);
    expect(stderr).not.toContain("edge listening");
  }, 30_000);

  it("under wrangler dev: the Worker does not start, and the error names the variable", async () => {
    const started = startWrangler({ SIDECAR_URL: "http://127.0.0.1:1", RATE_LIMIT: "6O" });
    let stop: (() => Promise<void>) | undefined;
    await expect(
      started.then((wrangler) => {
        stop = wrangler.stop;
        return "started";
      }),
    ).rejects.toThrow(REFUSAL);
    await stop?.();
  }, 90_000);
});
