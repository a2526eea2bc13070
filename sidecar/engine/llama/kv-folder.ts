// Where the KV cache tier keeps its state files: a private RAM-backed folder, or a model's own
// subfolder of `--cache-dir` owned by one running sidecar (kv-tier.ts).
import { createHash } from "node:crypto";
import { accessSync, constants, statfsSync } from "node:fs";
import { mkdir, open, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";

/** The process id of the sidecar using a `--cache-dir` model folder. */
export const OWNER_FILE = "owner.pid";

/**
 * /dev/shm when it is there, writable and has room for the budget (memory), else the OS temp
 * folder: containers often give /dev/shm only 64 MiB.
 */
export function ramFolder(budgetBytes: number): string {
  try {
    accessSync("/dev/shm", constants.W_OK);
    const free = statfsSync("/dev/shm");
    if (free.bavail * free.bsize >= budgetBytes) return "/dev/shm";
  } catch {
    // no /dev/shm: the temp folder
  }
  return os.tmpdir();
}

/**
 * A model's own subfolder of `--cache-dir` (its file name and a hash of its identity): sidecars
 * of different models share one `--cache-dir` without reading each other's index.
 */
export function modelFolder(dir: string, identity: string): string {
  let model = "model";
  try {
    model = String((JSON.parse(identity) as { model?: unknown }).model ?? model);
  } catch {
    // not modelIdentity's JSON (a test's name): the hash alone tells models apart
  }
  const name = path
    .basename(model)
    .replace(/\.gguf$/i, "")
    .replace(/[^\w.-]/g, "_");
  return path.join(dir, `${name}-${createHash("sha256").update(identity).digest("hex").slice(0, 12)}`);
}

/**
 * Makes this process the owner of `folder` (its pid in `owner.pid`), unless a running process
 * other than this one already is: then that process's id. A stale owner (a sidecar that stopped or
 * crashed) is replaced.
 */
export async function claim(folder: string): Promise<number | undefined> {
  await mkdir(folder, { recursive: true });
  const file = path.join(folder, OWNER_FILE);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const handle = await open(file, "wx");
      await handle.writeFile(String(process.pid));
      await handle.close();
      return undefined;
    } catch {
      const owner = Number.parseInt(await readFile(file, "utf8").catch(() => ""), 10);
      if (owner === process.pid) return undefined;
      if (Number.isInteger(owner) && owner > 0 && running(owner)) return owner;
      await rm(file, { force: true });
    }
  }
  return undefined;
}

function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
