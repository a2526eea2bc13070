import { execFile, spawn, type ChildProcess } from "node:child_process";
import { promisify } from "node:util";
import { createServer } from "node:net";
import { prepareWranglerDev, ROOT as root } from "../../scripts/wrangler-dev.js";

/** A port that was free a moment ago (wrangler needs numbers up front). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0));
    });
  });
}

export interface Wrangler {
  /** e.g. http://127.0.0.1:PORT: wrangler's local proxy, in front of the Worker (what `npm start` serves). */
  readonly url: string;
  /**
   * The Worker's own socket behind that proxy (asked for with `workerSocket`): what a deployed
   * Worker's client talks to, without the proxy's handling of clients that leave
   * (docs/decisions.md, "Cancellation under wrangler dev").
   */
  readonly workerUrl?: string | undefined;
  /** What wrangler and the Worker printed so far (stdout and stderr). */
  output(): string;
  stop(): Promise<void>;
}

/**
 * The edge under workerd through `wrangler dev`, offline, with the given variables (secrets such
 * as API_KEYS go through a private `.dev.vars`, as `npm start` passes them).
 */
export async function startWrangler(
  vars: Readonly<Record<string, string>>,
  options: WranglerOptions = {},
): Promise<Wrangler> {
  // Test files start wranglers in parallel: a port that was free a moment ago may be taken by
  // the time workerd binds it, so a start that meets "Address already in use" is tried again.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startWranglerOnce(vars, options);
    } catch (error) {
      const busy = /Address already in use|database is locked/.test(String(error));
      if (attempt >= 3 || !busy) throw error;
    }
  }
}

export interface WranglerOptions {
  /** Also find the Worker's own socket (`workerUrl`), from wrangler's debug log (which then holds every log line). */
  readonly workerSocket?: boolean;
  /**
   * Keep the local state (D1, R2, queues) under `.wrangler/state/<name>` between starts of the same
   * name, instead of a temporary folder removed on stop (the caller removes it).
   */
  readonly stateName?: string;
}

/** The Worker's own address in wrangler's debug log: the proxy's `userWorkerUrl`, the last one given. */
function workerUrlIn(output: string): string | undefined {
  const found = [
    ...output.matchAll(/"userWorkerUrl":\{"protocol":"(https?:)","hostname":"([^"]+)","port":"(\d+)"\}/g),
  ].at(-1);
  return found === undefined ? undefined : `${found[1]}//${found[2]}:${found[3]}`;
}

async function startWranglerOnce(vars: Readonly<Record<string, string>>, options: WranglerOptions): Promise<Wrangler> {
  const [port, inspector] = [await freePort(), await freePort()];
  const setup =
    options.stateName === undefined
      ? prepareWranglerDev(`test-${port}-${Math.random().toString(36).slice(2, 8)}`, vars, true)
      : prepareWranglerDev(options.stateName, vars, false);
  const env = {
    ...process.env,
    CLOUDFLARE_CF_FETCH_ENABLED: "false",
    WRANGLER_SEND_METRICS: "false",
    NO_COLOR: "1",
    ...(options.workerSocket === true ? { WRANGLER_LOG: "debug" } : {}),
  };
  // The store's tables first, as `npm start` creates them (migrations/ on the local D1).
  await promisify(execFile)("node_modules/.bin/wrangler", setup.migrateArgs, { cwd: root, env, timeout: 60_000 });
  const args = [...setup.args, "--ip", "127.0.0.1", "--port", String(port), "--inspector-port", String(inspector)];
  const child: ChildProcess = spawn("node_modules/.bin/wrangler", args, {
    cwd: root,
    env,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let output = "";
  child.stdout?.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (output += d.toString()));
  const url = `http://127.0.0.1:${port}`;
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.pid === undefined) return setup.cleanup();
    const exited = new Promise((r) => child.once("exit", r));
    process.kill(-child.pid, "SIGTERM");
    const timer = setTimeout(() => child.pid !== undefined && process.kill(-child.pid, "SIGKILL"), 5000);
    await exited;
    clearTimeout(timer);
    setup.cleanup();
  };
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`wrangler dev exited: ${output}`);
    try {
      await (await fetch(`${url}/health`)).arrayBuffer();
      const workerUrl = options.workerSocket === true ? workerUrlIn(output) : undefined;
      if (options.workerSocket === true && workerUrl === undefined)
        throw new Error(`wrangler dev did not name the Worker's socket: ${output}`);
      return { url, stop, output: () => output, workerUrl };
    } catch {
      if (Date.now() > deadline) {
        await stop();
        throw new Error(`wrangler dev did not answer within 60 s: ${output}`);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}
