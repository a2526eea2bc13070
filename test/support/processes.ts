// A child process started for a test or a bench run, ready once its output matches `ready`
// (the first group of the match is its URL): the sidecar (`sidecar/main.ts`), the edge on Node
// (`edge/hosts/node/main.ts`), `wrangler dev`.
import { spawn, type ChildProcess } from "node:child_process";

export interface Started {
  readonly child: ChildProcess;
  /** What `ready`'s first group matched, e.g. the URL the process listens on. */
  readonly url: string;
  /** Everything it printed so far (stdout and stderr). */
  output(): string;
}

export async function startProcess(
  command: string,
  args: readonly string[],
  env: Readonly<Record<string, string>>,
  ready: RegExp,
  timeoutMs = 60_000,
): Promise<Started> {
  const child = spawn(command, args, {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let output = "";
  child.stdout?.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (output += d.toString()));
  const deadline = Date.now() + timeoutMs;
  while (!ready.test(output)) {
    if (Date.now() > deadline || child.exitCode !== null) {
      child.kill("SIGKILL");
      throw new Error(`${command} ${args.join(" ")} did not start: ${output.slice(-500)}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return { child, url: ready.exec(output)?.[1] ?? "", output: () => output };
}

/** The sidecar as its own process (node itself, so signals reach it), with the given flags. */
export function startSidecarProcess(model: string, flags: readonly string[]): Promise<Started> {
  return startProcess(
    process.execPath,
    ["--import", "tsx", "sidecar/main.ts", "--port", "0", ...flags],
    { MODEL: model },
    /on (http:\/\/127\.0\.0\.1:\d+)/,
  );
}
