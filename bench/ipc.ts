// The message shapes between the bench and its child processes (Node IPC channel), and the
// commands every child answers: `profile-start` / `profile-stop` (a V8 CPU profile of exactly
// the measured part, written where the parent says) and `memory` (its footprint, after a full
// garbage collection when asked).
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

/** A process's memory, as a child reports it. */
export interface Footprint {
  /** Resident set (VmRSS): JS heap, native allocations (llama.cpp's KV cache) and mapped model pages. */
  readonly rssMiB: number;
  /** Live objects on the V8 heap. */
  readonly heapUsedMiB: number;
  /** Memory held by JS objects outside the V8 heap (Buffers, ArrayBuffers). */
  readonly externalMiB: number;
}

export interface IpcRequest {
  readonly id: number;
  readonly command: string;
  readonly args?: unknown;
}

export type IpcReply =
  | { readonly id: number; readonly result: unknown }
  | { readonly id: number; readonly error: string }
  | { readonly ready: unknown }
  | { readonly failed: string };

/** In a child: answers the parent's requests with `handlers`, then reports `ready`. */
let session: Session | undefined;

async function profileStart(): Promise<void> {
  session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  // 100 µs: a token's work in these processes is well under a millisecond.
  await session.post("Profiler.setSamplingInterval", { interval: 100 });
  await session.post("Profiler.start");
}

async function profileStop(file: unknown): Promise<string> {
  if (session === undefined || typeof file !== "string") throw new Error("profile-stop without profile-start");
  const { profile } = await session.post("Profiler.stop");
  session.disconnect();
  session = undefined;
  writeFileSync(file, JSON.stringify(profile));
  return file;
}

const MIB = 1024 * 1024;

/** A full garbage collection, without starting the process with --expose-gc. */
function collectGarbage(): void {
  setFlagsFromString("--expose-gc");
  (runInNewContext("gc") as () => void)();
}

async function memory(args: unknown): Promise<Footprint> {
  if ((args as { gc?: boolean } | undefined)?.gc === true) {
    collectGarbage();
    // Objects freed by finalizers (streams, sockets) go in a second pass.
    await new Promise((resolve) => setTimeout(resolve, 50));
    collectGarbage();
  }
  const usage = process.memoryUsage();
  return { rssMiB: usage.rss / MIB, heapUsedMiB: usage.heapUsed / MIB, externalMiB: usage.external / MIB };
}

export function serveParent(custom: Record<string, (args: unknown) => Promise<unknown>>, ready: unknown): void {
  const handlers: Record<string, (args: unknown) => Promise<unknown>> = {
    "profile-start": profileStart,
    "profile-stop": profileStop,
    memory,
    ...custom,
  };
  const send = (message: IpcReply): void => {
    process.send?.(message);
  };
  process.on("message", (message: IpcRequest) => {
    const handler = handlers[message.command];
    if (handler === undefined) {
      send({ id: message.id, error: `unknown command ${message.command}` });
      return;
    }
    handler(message.args).then(
      (result) => send({ id: message.id, result }),
      (error: unknown) =>
        send({ id: message.id, error: error instanceof Error ? (error.stack ?? error.message) : String(error) }),
    );
  });
  // The parent going away ends the child.
  process.on("disconnect", () => process.exit(0));
  send({ ready });
}

/** In a child: reports a start-up failure and exits. */
export function failToParent(error: unknown): void {
  const failed = error instanceof Error ? (error.stack ?? error.message) : String(error);
  if (process.send === undefined) {
    console.error(failed);
    process.exit(1);
  }
  process.send({ failed } satisfies IpcReply, () => process.exit(1));
}
