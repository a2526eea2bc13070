// Starts a bench child process (a TypeScript file run through tsx) and talks to it over IPC.
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import type { IpcReply, IpcRequest } from "./ipc.js";
import { ROOT } from "./peer-paths.js";

export interface Child<Ready> {
  readonly name: string;
  readonly pid: number;
  readonly ready: Ready;
  call<T>(command: string, args?: unknown): Promise<T>;
  /** Asks the child to stop (`stop` command if it has one), then ends it. */
  stop(): Promise<void>;
}

export interface ChildOptions {
  readonly env?: Readonly<Record<string, string>>;
  readonly startTimeoutMs?: number;
}

type Pending = Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>;

/** A started child: IPC calls answered through `pending`, and a stop that waits for `exited`. */
function childHandle<Ready>(
  name: string,
  child: ChildProcess,
  ready: Ready,
  pending: Pending,
  exited: Promise<void>,
): Child<Ready> {
  let nextId = 1;
  return {
    name,
    pid: child.pid ?? -1,
    ready,
    call<T>(command: string, callArgs?: unknown): Promise<T> {
      const id = nextId++;
      return new Promise<T>((res, rej) => {
        pending.set(id, { resolve: res as (v: unknown) => void, reject: rej });
        child.send({ id, command, args: callArgs } satisfies IpcRequest);
      });
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const killer = setTimeout(() => child.kill("SIGKILL"), 15_000);
      // Each child cleans up (stops its server, frees the model) and exits on SIGTERM.
      child.kill("SIGTERM");
      await exited;
      clearTimeout(killer);
    },
  };
}

/** Runs `bench/children/<file>` with `args` (JSON in argv[2]) and waits for its `ready`. */
export function startChild<Ready>(
  name: string,
  file: string,
  args: unknown,
  options: ChildOptions = {},
): Promise<Child<Ready>> {
  const nodeArgs = ["--import", "tsx"];
  const child: ChildProcess = spawn(
    process.execPath,
    [...nodeArgs, join(ROOT, "bench/children", file), JSON.stringify(args)],
    {
      cwd: ROOT,
      env: { ...process.env, ...options.env },
      stdio: ["ignore", "pipe", "pipe", "ipc"],
    },
  );
  // Children never write to the bench's stdout (the table goes there).
  child.stdout?.on("data", (d: Buffer) => process.stderr.write(`[${name}] ${d.toString()}`));
  child.stderr?.on("data", (d: Buffer) => process.stderr.write(`[${name}] ${d.toString()}`));
  const pending: Pending = new Map();
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.once("exit", (code, signal) => {
    for (const p of pending.values()) p.reject(new Error(`${name} exited (${code ?? signal})`));
    pending.clear();
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${name} did not start within ${options.startTimeoutMs ?? 120_000} ms`));
    }, options.startTimeoutMs ?? 120_000);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited during start-up (code ${code})`));
    });
    child.on("message", (message: IpcReply) => {
      if ("failed" in message) {
        clearTimeout(timer);
        reject(new Error(`${name} failed to start: ${message.failed}`));
      } else if ("ready" in message) {
        clearTimeout(timer);
        resolve(childHandle<Ready>(name, child, message.ready as Ready, pending, exited));
      } else {
        const waiting = pending.get(message.id);
        if (waiting === undefined) return;
        pending.delete(message.id);
        if ("error" in message) waiting.reject(new Error(`${name}: ${message.error}`));
        else waiting.resolve(message.result);
      }
    });
  });
}
