// CPU time per process from /proc/<pid>/stat, to show where a stream's time goes across the
// processes of a party (client, edge, sidecar, workerd, …).
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

let ticksPerSecond: number | undefined;
function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

export interface Stat {
  readonly pid: number;
  readonly ppid: number;
  readonly comm: string;
  /** user + system CPU time, ms */
  readonly cpuMs: number;
  /** user + system CPU time of its children that have ended and been waited for, ms */
  readonly reapedMs: number;
}

function tasks(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).map(Number);
  } catch {
    return [];
  }
}

function readStat(pid: number, file = `/proc/${pid}/stat`): Stat | undefined {
  try {
    const stat = readFileSync(file, "utf8");
    const close = stat.lastIndexOf(")");
    const fields = stat.slice(close + 2).split(" ");
    // fields[0] is field 3 (state): utime and stime are fields 14 and 15.
    const ticks = Number(fields[11]) + Number(fields[12]);
    // cutime and cstime, fields 16 and 17.
    const reaped = Number(fields[13]) + Number(fields[14]);
    return {
      pid,
      ppid: Number(fields[1]),
      comm: stat.slice(stat.indexOf("(") + 1, close),
      cpuMs: (ticks * 1000) / clockTicks(),
      reapedMs: (reaped * 1000) / clockTicks(),
    };
  } catch {
    return undefined;
  }
}

/** The threads of process `pid`, each with its name (its `comm`) and CPU time. */
export function threadStats(pid: number): Stat[] {
  return tasks(pid).flatMap((tid) => readStat(tid, `/proc/${pid}/task/${tid}/stat`) ?? []);
}

/** `root` and all its descendants. */
function tree(root: number): Stat[] {
  const all: Stat[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const s = readStat(Number(entry));
    if (s) all.push(s);
  }
  const byParent = new Map<number, Stat[]>();
  for (const s of all) byParent.set(s.ppid, [...(byParent.get(s.ppid) ?? []), s]);
  const out: Stat[] = [];
  const rootStat = all.find((s) => s.pid === root);
  if (rootStat) out.push(rootStat);
  for (let i = 0; i < out.length; i++) out.push(...(byParent.get(out[i]?.pid ?? -1) ?? []));
  return out;
}

/** CPU ms so far of a process tree: every thread together, and each process's main thread. */
export interface TreeCpu {
  readonly allMs: number;
  /** Per process of the tree: its main thread's CPU ms, by pid. */
  readonly mainMs: ReadonlyMap<number, number>;
}

export function treeCpu(root: number): TreeCpu {
  const mainMs = new Map<number, number>();
  let allMs = 0;
  for (const s of tree(root)) {
    allMs += s.cpuMs;
    const main = readStat(s.pid, `/proc/${s.pid}/task/${s.pid}/stat`);
    if (main) mainMs.set(s.pid, main.cpuMs);
  }
  return { allMs, mainMs };
}

/**
 * CPU ms a tree used between two readings: every thread, and the main thread of the process whose main thread
 * used the most (a server's event loop, under the wrappers that started it). A process's total and its main thread
 * are read from two files a moment apart, so a clock tick can fall between them: every thread is at least the main.
 */
export function treeCpuUsed(before: TreeCpu, after: TreeCpu): { allMs: number; mainMs: number } {
  let mainMs = 0;
  for (const [pid, ms] of after.mainMs) mainMs = Math.max(mainMs, ms - (before.mainMs.get(pid) ?? 0));
  return { allMs: Math.max(after.allMs - before.allMs, mainMs), mainMs };
}

/** Roles of processes the bench does not start itself (wrangler dev's own processes). */
const UNNAMED: Readonly<Record<string, string>> = {
  node: "wrangler dev (node)",
  workerd: "workerd (wrangler dev or Miniflare)",
  esbuild: "tsx (esbuild)",
};

/**
 * CPU milliseconds used by each process under this one, keyed by role: the names given for known
 * pids, "bench client" for this process, and the command name for the rest (workerd, node, …).
 */
export class CpuMeter {
  readonly #names: Map<number, string>;

  constructor(names: ReadonlyMap<number, string>) {
    this.#names = new Map(names);
  }

  name(pid: number, name: string): void {
    this.#names.set(pid, name);
  }

  /**
   * CPU ms so far of every process under this one, by pid. Named processes are split into their
   * main thread (JavaScript, I/O) and their other threads (llama.cpp's compute in node-llama-cpp's
   * worker threads, V8's GC and compiler threads), keyed by negative thread ids.
   */
  snapshot(): Map<number, { role: string; cpuMs: number }> {
    const out = new Map<number, { role: string; cpuMs: number }>();
    for (const s of tree(process.pid)) {
      const name = s.pid === process.pid ? "bench client" : this.#names.get(s.pid);
      if (name === undefined) {
        out.set(s.pid, { role: UNNAMED[s.comm] ?? s.comm, cpuMs: s.cpuMs });
        continue;
      }
      for (const t of threadStats(s.pid)) {
        out.set(-t.pid, { role: t.pid === s.pid ? `${name}: main thread` : `${name}: other threads`, cpuMs: t.cpuMs });
      }
    }
    return out;
  }

  /** CPU ms per role used between two snapshots. */
  static diff(
    before: ReadonlyMap<number, { role: string; cpuMs: number }>,
    after: ReadonlyMap<number, { role: string; cpuMs: number }>,
  ): Record<string, number> {
    const used: Record<string, number> = {};
    for (const [pid, a] of after) {
      const delta = a.cpuMs - (before.get(pid)?.cpuMs ?? 0);
      if (delta > 0) used[a.role] = (used[a.role] ?? 0) + delta;
    }
    return used;
  }
}

/** CPU time of the whole machine (busy, and stolen by the hypervisor) and of this process tree, in ms. */
export interface MachineSnapshot {
  readonly at: number;
  readonly busyMs: number;
  readonly stealMs: number;
  readonly oursMs: number;
}

export function machineSnapshot(): MachineSnapshot {
  // cpu  user nice system idle iowait irq softirq steal guest guest_nice
  const fields = (readFileSync("/proc/stat", "utf8").split("\n")[0] ?? "").trim().split(/\s+/).slice(1).map(Number);
  const tick = 1000 / clockTicks();
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = fields;
  return {
    at: performance.now(),
    busyMs: (user + nice + system + irq + softirq) * tick,
    stealMs: steal * tick,
    // The tree's processes, and those of it that have ended (a server stopped within the section): each counted in
    // the process that waited for it.
    oursMs: tree(process.pid).reduce((sum, s) => sum + s.cpuMs + s.reapedMs, 0),
  };
}

/**
 * Cores used on average, between two snapshots, by processes this bench did not start (other
 * work on a shared machine) and stolen by the hypervisor: the noise a section ran under.
 */
export function otherLoad(before: MachineSnapshot, after: MachineSnapshot): { otherCores: number; stealCores: number } {
  const wall = after.at - before.at;
  const others = after.busyMs - before.busyMs - (after.oursMs - before.oursMs);
  return { otherCores: Math.max(0, others) / wall, stealCores: (after.stealMs - before.stealMs) / wall };
}
