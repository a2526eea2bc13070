// `npm start` as a user runs it: two instances at once on their own ports (each wrangler dev
// gets its own inspector port), one of them locked down exactly as a deployment is
// (API_KEYS, SIDECAR_TOKEN, RATE_LIMIT from the environment reach both sides).
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inspectorPortFor } from "../../scripts/wrangler-dev.js";
import { freePort } from "../support/wrangler.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

interface Started {
  readonly edge: string;
  readonly sidecar: string;
  output(): string;
  stop(): Promise<void>;
}

async function npmStart(env: Record<string, string>): Promise<Started> {
  // The inspector port is chosen here too: the one derived from EDGE_PORT could be a port another
  // test file picked at random a moment ago.
  const [edgePort, sidecarPort, inspectorPort] = [await freePort(), await freePort(), await freePort()];
  const child: ChildProcess = spawn("node_modules/.bin/tsx", ["scripts/start.ts", "--sequences", "2"], {
    cwd: ROOT,
    env: { ...process.env, ...env, EDGE_PORT: String(edgePort), SIDECAR_PORT: String(sidecarPort), INSPECTOR_PORT: String(inspectorPort), CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false", NO_COLOR: "1" },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let output = "";
  child.stdout?.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (output += d.toString()));
  const edge = `http://127.0.0.1:${edgePort}`;
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`npm start exited: ${output}`);
    const ok = await fetch(`${edge}/health`).then((r) => r.ok, () => false);
    if (ok) break;
    if (Date.now() > deadline) throw new Error(`npm start did not answer: ${output}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  return {
    edge,
    sidecar: `http://127.0.0.1:${sidecarPort}`,
    output: () => output,
    stop: async () => {
      if (child.exitCode !== null || child.pid === undefined) return;
      const exited = new Promise((r) => child.once("exit", r));
      process.kill(-child.pid, "SIGTERM");
      await exited;
    },
  };
}

const chat = (base: string, headers: Record<string, string> = {}) =>
  fetch(`${base}/v1/chat/completions`, { method: "POST", headers, body: JSON.stringify({ messages: [{ role: "user", content: "Hello!" }] }) });

describe("npm start", () => {
  let open: Started;
  let locked: Started;
  beforeAll(async () => {
    [open, locked] = await Promise.all([npmStart({}), npmStart({ API_KEYS: "sk-start-1", SIDECAR_TOKEN: "start-token", RATE_LIMIT: "100" })]);
  }, 120_000);
  afterAll(async () => {
    await Promise.all([open?.stop(), locked?.stop()]);
  });

  it("runs two instances side by side, each with its own inspector port", async () => {
    for (const started of [open, locked]) {
      const body = (await (await chat(started.edge, { authorization: "Bearer sk-start-1" })).json()) as { choices: { message: { content: string } }[] };
      expect(body.choices[0]?.message.content).toBe("Hi there");
    }
    expect(open.output()).not.toContain("Address already in use");
    expect(inspectorPortFor(8080)).toBe(9229);
    expect(inspectorPortFor(8081)).toBe(9230);
  });

  it("configures both sides from the environment, and says which access mode is in force", async () => {
    expect((await chat(locked.edge)).status).toBe(401);
    expect((await fetch(`${locked.sidecar}/metrics`)).status).toBe(401);
    expect(locked.output()).toContain("access: API keys required");
    expect(open.output()).toContain("access: no API keys: serving loopback hosts and pages only");
    expect(locked.output()).not.toContain("sk-start-1");
    expect(locked.output()).not.toContain("start-token");
  });
});
