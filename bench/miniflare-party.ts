// The Worker under Miniflare as a benchmark party: the same workerd runtime as `wrangler dev`
// without wrangler's local proxy in front of it (bench/miniflare-edge.ts), so the single-stream
// table can tell the Worker's own cost from the proxy's.
import { spawn } from "node:child_process";

export interface RunningMiniflare {
  readonly url: string;
  readonly pid: number;
  stop(): Promise<void>;
}

export async function startMiniflare(sidecarUrl: string): Promise<RunningMiniflare> {
  const child = spawn(process.execPath, ["--import", "tsx", "bench/miniflare-edge.ts"], {
    env: { ...process.env, SIDECAR_URL: sidecarUrl, LOG_REQUESTS: "false" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`Miniflare did not start within 120 s: ${output}`)), 120_000);
    child.stdout?.on("data", (d: Buffer) => {
      output += d.toString();
      const match = /Ready on (http:\/\/\S+)/.exec(output);
      if (match?.[1] !== undefined) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.stderr?.on("data", (d: Buffer) => (output += d.toString()));
    void exited.then(() => reject(new Error(`Miniflare exited: ${output}`)));
  });
  return {
    url,
    pid: child.pid ?? 0,
    async stop() {
      if (child.exitCode !== null) return;
      child.kill("SIGTERM");
      const killer = setTimeout(() => child.kill("SIGKILL"), 5000);
      await exited;
      clearTimeout(killer);
    },
  };
}
