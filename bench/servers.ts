// The servers a newcomer starts, as separate processes on 127.0.0.1, each with no settings but its
// port: this project by `npm start` (EDGE_RUNTIME=node, MODEL=the model) and llama-server of
// llama.cpp's default build (`npm run bench:peer-build -- --variant default`). Used by the
// newcomer section of `npm run bench` and by `npm run bench:tools`.
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { freePort } from "../test/support/wrangler.js";
import { peerPaths, readPeerInfo, ROOT } from "./peer-paths.js";

export interface Server {
  readonly name: string;
  readonly url: string;
  /** The process (the npm start tree's leader for this server), for CPU and memory readings. */
  readonly pid: number;
  /** This project's sidecar port (native gRPC), for a caller that counts tokens; llama-server has none. */
  readonly sidecarUrl?: string;
  stop(): Promise<void>;
}

/**
 * Spawns a server in a process group of its own and waits until `ready` answers 200; its output is kept for the error
 * if it exits.
 */
export async function spawnServer(
  name: string,
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  url: string,
  ready: string,
): Promise<Server> {
  const child: ChildProcess = spawn(command, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let log = "";
  const keep = (d: Buffer): void => {
    log = (log + d.toString()).slice(-3000);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    process.kill(-(child.pid as number), "SIGTERM");
    const killer = setTimeout(() => process.kill(-(child.pid as number), "SIGKILL"), 5000);
    await exited;
    clearTimeout(killer);
  };
  for (const deadline = Date.now() + 300_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 250))) {
    if (child.exitCode !== null) throw new Error(`${name} exited: ${log}`);
    try {
      if ((await fetch(`${url}${ready}`)).ok) return { name, url, pid: child.pid as number, stop };
    } catch {
      // not listening yet
    }
  }
  await stop();
  throw new Error(`${name} did not start: ${log}`);
}

/** This project as `npm start` runs it on Node, with `modelPath` as MODEL and `env` besides (none for a newcomer). */
export async function startOurs(modelPath: string, env: NodeJS.ProcessEnv = {}): Promise<Server> {
  const [edgePort, sidecarPort] = [await freePort(), await freePort()];
  const settings = {
    ...env,
    EDGE_RUNTIME: "node",
    MODEL: modelPath,
    EDGE_PORT: String(edgePort),
    SIDECAR_PORT: String(sidecarPort),
  };
  const server = await spawnServer(
    "this server (npm start)",
    "npm",
    ["start"],
    settings,
    `http://127.0.0.1:${edgePort}`,
    "/v1/models",
  );
  return { ...server, sidecarUrl: `http://127.0.0.1:${sidecarPort}` };
}

/** llama-server of llama.cpp's default build: `-m modelPath`, `args`, the port; its defaults otherwise. */
export async function startLlamaServer(modelPath: string, args: readonly string[] = []): Promise<Server> {
  if (readPeerInfo("default") === undefined)
    throw new Error("no default llama-server build: run npm run bench:peer-build -- --variant default");
  const port = await freePort();
  const binary = peerPaths("default").binary;
  const env = { LD_LIBRARY_PATH: [path.dirname(binary), process.env.LD_LIBRARY_PATH].filter(Boolean).join(":") };
  const all = ["-m", modelPath, ...args, "--host", "127.0.0.1", "--port", String(port), "--no-webui"];
  return spawnServer("llama-server (default build)", binary, all, env, `http://127.0.0.1:${port}`, "/health");
}
