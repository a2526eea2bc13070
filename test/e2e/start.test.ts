// `npm start` as a user runs it: two instances at once on their own ports (each wrangler dev
// gets its own inspector port, one of them the port derived from its EDGE_PORT), one of them
// locked down exactly as a deployment is (API_KEYS, SIDECAR_TOKEN, RATE_LIMIT from the
// environment reach both sides).
import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { InferenceService } from "../../proto/gen/inference/v1/inference_pb.js";
import { inspectorPortFor } from "../../scripts/wrangler-dev.js";
import { freePort } from "../support/wrangler.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

interface Started {
  readonly edge: string;
  readonly sidecar: string;
  /** Where its wrangler dev serves the DevTools inspector. */
  readonly inspector: string;
  output(): string;
  stop(): Promise<void>;
}

/** Whether `port` on 127.0.0.1 can be bound right now. */
function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/** A free edge port whose derived inspector port (EDGE_PORT + 1149) is free too. */
async function edgePortWithFreeInspector(): Promise<number> {
  for (;;) {
    const port = await freePort();
    if (port + 1149 <= 65535 && (await isFree(port + 1149))) return port;
  }
}

/**
 * `derived`: the inspector port is left to start.ts (from EDGE_PORT); otherwise it is chosen here
 * too, since the derived one could be a port another test file picked at random a moment ago.
 */
async function npmStart(env: Record<string, string>, derived = false): Promise<Started> {
  const [edgePort, sidecarPort] = [derived ? await edgePortWithFreeInspector() : await freePort(), await freePort()];
  const inspectorPort = derived ? inspectorPortFor(edgePort) : await freePort();
  const childEnv: NodeJS.ProcessEnv = {
    ...process.env,
    ...env,
    EDGE_PORT: String(edgePort),
    SIDECAR_PORT: String(sidecarPort),
    INSPECTOR_PORT: String(inspectorPort),
    CLOUDFLARE_CF_FETCH_ENABLED: "false",
    WRANGLER_SEND_METRICS: "false",
    NO_COLOR: "1",
  };
  if (derived) delete childEnv["INSPECTOR_PORT"];
  const child: ChildProcess = spawn("node_modules/.bin/tsx", ["scripts/start.ts", "--sequences", "2"], {
    cwd: ROOT,
    env: childEnv,
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
    const ok = await fetch(`${edge}/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (Date.now() > deadline) throw new Error(`npm start did not answer: ${output}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  return {
    edge,
    sidecar: `http://127.0.0.1:${sidecarPort}`,
    inspector: `http://127.0.0.1:${inspectorPort}`,
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
  fetch(`${base}/v1/chat/completions`, {
    method: "POST",
    headers,
    body: JSON.stringify({ messages: [{ role: "user", content: "Hello!" }] }),
  });

describe("npm start", () => {
  let open: Started;
  let locked: Started;
  let node: Started;
  beforeAll(async () => {
    [open, locked, node] = await Promise.all([
      npmStart({}, true),
      npmStart({ API_KEYS: "sk-start-1", SIDECAR_TOKEN: "start-token", RATE_LIMIT: "100" }),
      npmStart({ EDGE_RUNTIME: "node", API_KEYS: "sk-start-2", SIDECAR_TOKEN: "node-token" }),
    ]);
  }, 120_000);
  afterAll(async () => {
    await Promise.all([open?.stop(), locked?.stop(), node?.stop()]);
  });

  it("runs two instances side by side, each with its own inspector port", async () => {
    for (const started of [open, locked]) {
      const body = (await (await chat(started.edge, { authorization: "Bearer sk-start-1" })).json()) as {
        choices: { message: { content: string } }[];
      };
      expect(body.choices[0]?.message.content).toBe("Hi there");
    }
    expect(open.output()).not.toContain("Address already in use");
    // Each wrangler dev serves its inspector where start.ts told it: `open` on the port derived
    // from its EDGE_PORT (no INSPECTOR_PORT set), `locked` on its INSPECTOR_PORT.
    for (const started of [open, locked]) {
      const version = await fetch(`${started.inspector}/json/version`);
      expect(version.status).toBe(200);
      await version.arrayBuffer();
    }
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

  it("on Node runs the edge and the sidecar in one process, its port still open to direct callers", async () => {
    expect(node.output()).toContain("(the sidecar in this process)");
    expect((await chat(node.edge)).status).toBe(401);
    const body = (await (await chat(node.edge, { authorization: "Bearer sk-start-2" })).json()) as {
      choices: { message: { content: string } }[];
    };
    expect(body.choices[0]?.message.content).toBe("Hi there");
    // The edge calls the sidecar in memory; callers of the sidecar's port still need its token.
    expect((await fetch(`${node.sidecar}/metrics`)).status).toBe(401);
    const metrics = await fetch(`${node.sidecar}/metrics`, { headers: { authorization: "Bearer node-token" } });
    expect(await metrics.text()).toMatch(/^sidecar_tokens_generated_total [1-9]/m);
    const direct = createClient(
      InferenceService,
      createGrpcTransport({
        baseUrl: node.sidecar,
        interceptors: [
          (next) => (request) => {
            request.header.set("authorization", "Bearer node-token");
            return next(request);
          },
        ],
      }),
    );
    const events = [];
    for await (const e of direct.generate({ input: { case: "prompt", value: "Hello" }, maxTokens: 4 })) events.push(e);
    expect(events.at(-1)?.event.case).toBe("finish");
    expect(node.output()).not.toContain("sk-start-2");
    expect(node.output()).not.toContain("node-token");
  });
});
