// The machine a run came from, and what /proc says about the processes it started.
import { readdirSync, readFileSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { ROOT } from "./peer-paths.js";

export interface Machine {
  readonly cpu: string;
  readonly cores: number;
  readonly memoryGiB: number;
  readonly os: string;
  readonly node: string;
  readonly nodeLlamaCpp: string;
}

export function machine(): Machine {
  const pkg = JSON.parse(readFileSync(join(ROOT, "node_modules/node-llama-cpp/package.json"), "utf8")) as {
    version: string;
  };
  return {
    cpu: os.cpus()[0]?.model.trim() ?? "unknown",
    cores: os.availableParallelism(),
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    nodeLlamaCpp: pkg.version,
  };
}

function status(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/status`, "utf8");
  } catch {
    return undefined;
  }
}

/** Peak resident set size (VmHWM) of a live process, in MiB. */
export function peakRssMiB(pid: number): number | undefined {
  const match = /^VmHWM:\s+(\d+) kB/m.exec(status(pid) ?? "");
  return match?.[1] === undefined ? undefined : Math.round((Number(match[1]) / 1024) * 10) / 10;
}

/** The llama.cpp / ggml libraries a process has loaded (file names), e.g. libggml-cpu-zen4.so. */
export function loadedLlamaLibraries(pid: number): string[] {
  let maps = "";
  try {
    maps = readFileSync(`/proc/${pid}/maps`, "utf8");
  } catch {
    return [];
  }
  const names = new Set<string>();
  for (const line of maps.split("\n")) {
    const file = line.split(/\s+/)[5];
    if (file !== undefined && /lib(ggml|llama)[^/]*\.so/.test(file)) names.add(file.slice(file.lastIndexOf("/") + 1));
  }
  return [...names].sort();
}

/** The CPU backend library (`ggml-cpu-zen4`, `ggml-cpu`) a process runs, if any. */
export function cpuBackend(pid: number): string | undefined {
  const lib = loadedLlamaLibraries(pid).find((l) => l.startsWith("libggml-cpu"));
  return lib?.replace(/^lib/, "").replace(/\.so$/, "");
}

/** Descendants of `root` whose command name is `name` (e.g. workerd under wrangler dev). */
export function descendantsNamed(root: number, name: string): number[] {
  const parent = new Map<number, number>();
  const comm = new Map<number, string>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const close = stat.lastIndexOf(")");
      const fields = stat.slice(close + 2).split(" ");
      parent.set(Number(entry), Number(fields[1]));
      comm.set(Number(entry), stat.slice(stat.indexOf("(") + 1, close));
    } catch {
      // the process ended meanwhile
    }
  }
  const isDescendant = (pid: number): boolean => {
    for (let p = parent.get(pid); p !== undefined && p > 1; p = parent.get(p)) if (p === root) return true;
    return false;
  };
  return [...comm].filter(([pid, c]) => c === name && isDescendant(pid)).map(([pid]) => pid);
}
