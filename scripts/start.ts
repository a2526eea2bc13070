/**
 * `npm start`: the sidecar (MODEL or the embedded demo model) and the edge on 127.0.0.1:8080,
 * under `wrangler dev` by default or on Node with EDGE_RUNTIME=node. Ctrl-C stops both.
 * Several instances run side by side when each has its own EDGE_PORT and SIDECAR_PORT: wrangler's
 * inspector port follows EDGE_PORT (8080 → 9229, 8081 → 9230, …) unless INSPECTOR_PORT sets it.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";
import { createAccessPolicy } from "../edge/access/policy.js";
import { ACCESS_VARS, inspectorPortFor, prepareWranglerDev } from "./wrangler-dev.js";

const sidecarHost = process.env.SIDECAR_HOST ?? "127.0.0.1";
const sidecarPort = process.env.SIDECAR_PORT ?? "50051";
const sidecarUrl = process.env.SIDECAR_URL ?? `http://${sidecarHost}:${sidecarPort}`;
const edgePort = process.env.EDGE_PORT ?? "8080";
const edgeHost = process.env.EDGE_HOST ?? "127.0.0.1";
const runtime = process.env.EDGE_RUNTIME ?? "wrangler";
const inspectorPort = process.env.INSPECTOR_PORT ?? String(inspectorPortFor(Number(edgePort)));

const children: ChildProcess[] = [];
let stopping = false;

function run(name: string, command: string, args: string[], env: NodeJS.ProcessEnv = {}): ChildProcess {
  const child = spawn(command, args, { stdio: "inherit", env: { ...process.env, ...env } });
  children.push(child);
  child.on("exit", (code, signal) => {
    if (stopping) return;
    console.error(`start: ${name} exited (${signal ?? code}); stopping`);
    stop(code ?? 1);
  });
  return child;
}

function stop(code: number): void {
  stopping = true;
  for (const child of children) if (child.exitCode === null) child.kill("SIGTERM");
  setTimeout(() => process.exit(code), 2000).unref();
  Promise.all(children.map((c) => (c.exitCode === null ? new Promise((r) => c.on("exit", r)) : null))).then(() =>
    process.exit(code),
  );
}

process.on("SIGINT", () => stop(0));
process.on("SIGTERM", () => stop(0));

const tsx = "node_modules/.bin/tsx";
if (runtime === "node") {
  // The sidecar and the edge in one process, the edge calling the sidecar in memory (one-process/).
  run("server", tsx, ["one-process/main.ts", ...process.argv.slice(2)], {
    EDGE_PORT: edgePort,
    EDGE_HOST: edgeHost,
  });
  console.error(`start: the API answers at http://${edgeHost}:${edgePort}/v1 once the edge is up`);
} else {
  await startWithWrangler();
}

/** The sidecar, then `wrangler dev` once the sidecar answers (so the first request does not meet a 503). */
async function startWithWrangler(): Promise<void> {
  run("sidecar", tsx, ["sidecar/main.ts", ...process.argv.slice(2)]);
  for (;;) {
    if (stopping) return;
    try {
      if ((await fetch(`${sidecarUrl}/healthz`)).ok) break;
    } catch {
      // not listening yet
    }
    await sleep(200);
  }
  // The access settings reach the Worker as they will when deployed: variables, and secrets
  // through a private .dev.vars (scripts/wrangler-dev.ts).
  const vars: Record<string, string> = { SIDECAR_URL: sidecarUrl };
  for (const name of ACCESS_VARS) {
    const value = process.env[name];
    if (value !== undefined && value !== "") vars[name] = value;
  }
  const setup = prepareWranglerDev(`start-${edgePort}`, vars);
  process.on("exit", () => setup.cleanup());
  // The store's tables (migrations/) on this instance's local D1, before the Worker serves /c1.
  const offline = { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false" };
  const migrated = spawnSync("node_modules/.bin/wrangler", setup.migrateArgs, {
    stdio: ["ignore", "ignore", "inherit"],
    env: offline,
  });
  const access = createAccessPolicy({ apiKeys: vars["API_KEYS"] ?? "", allowOpen: vars["ALLOW_OPEN"] === "true" });
  console.error(`start: ${access.describe()}`);
  if (migrated.status !== 0) {
    console.error("start: applying migrations/ to the local D1 database failed");
    stop(1);
    return;
  }
  run(
    "edge (wrangler dev)",
    "node_modules/.bin/wrangler",
    [...setup.args, "--ip", edgeHost, "--port", edgePort, "--inspector-port", inspectorPort],
    offline,
  );
  console.error(`start: the API answers at http://${edgeHost}:${edgePort}/v1 once the edge is up`);
}
