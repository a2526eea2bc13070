// The benchmark's newcomer section (bench/sections/newcomer-report.ts): its table, its sessions part and the targets
// it reads from them. Pure functions only: nothing is started.
import { describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { machineSnapshot, treeCpu, treeCpuUsed } from "../bench/cpu.js";
import { readFlags } from "../bench/flags.js";
import type { StreamSample } from "../bench/sample.js";
import type { NewcomerResult, NewcomerSamples } from "../bench/sections/newcomer.js";
import { NEWCOMER_SESSION_PARTIES } from "../bench/sections/newcomer-sessions.js";
import {
  newcomerHeadline,
  newcomerTargets,
  renderNewcomer,
  summarizeNewcomer,
} from "../bench/sections/newcomer-report.js";
import type { SessionsParty } from "../bench/sections/sessions.js";

/** A completed stream: first token at `ttft` ms, 49 tokens over 2,000 ms (24 tok/s), sent at `at`. */
const sample = (ttft: number, at = 0): StreamSample => ({
  outcome: "completed",
  status: 200,
  ttftMs: ttft,
  lastTokenMs: ttft + 2000,
  totalMs: ttft + 2000,
  tokens: 49,
  sentAt: at,
  promptTokens: 6600,
  cachedTokens: 6500,
});

const samples = (ttft: number): NewcomerSamples => ({
  one: [sample(ttft)],
  four: [[0, 1, 2, 3].map(() => sample(ttft))],
});

/** A sessions party: cold turns (turn 0) at `cold` ms, returning turns at `back` ms. */
const party = (label: string, cold: number, back: number): SessionsParty => ({
  label,
  turns: [0, 1].flatMap((session) =>
    [0, 1, 2].map((turn) => ({ session, turn, sample: sample(turn === 0 ? cold : back) })),
  ),
});

const result = (sessions: boolean): NewcomerResult => ({
  model: "random-850m",
  flags: { runs: 1, rounds: 1, maxTokens: 48, timeoutMs: 1000 },
  runs: { ours: [samples(50)], "llama-server": [samples(48)] },
  sessions: sessions
    ? {
        model: "random-60m",
        result: {
          options: { sessions: 2, sequences: 1, tokens: 6600, turns: 3, timeoutMs: 1000 },
          contextSize: 7096,
          parties: [party(NEWCOMER_SESSION_PARTIES[0], 900, 90), party(NEWCOMER_SESSION_PARTIES[1], 1000, 60)],
        },
      }
    : undefined,
});

describe("the newcomer section", () => {
  it("reads the sessions' cold and returning turns against llama-server's", () => {
    const summary = summarizeNewcomer(result(true));
    const targets = newcomerTargets(summary);
    const byName = Object.fromEntries(targets.map((t) => [t.name, t]));
    expect(byName["newcomer sessions: cold turn TTFT p50 vs llama-server"]).toMatchObject({
      measured: "0.90×",
      pass: true,
    });
    expect(byName["newcomer sessions: returning turn TTFT p50 vs llama-server"]).toMatchObject({
      measured: "1.50×",
      pass: false,
    });
    expect(byName["newcomer, 1 stream: first token p50 vs llama-server"]).toMatchObject({
      measured: "+2.0 ms",
      pass: true,
    });
    const headline: Record<string, number> = {};
    newcomerHeadline(summary, headline);
    expect(headline.newcomerSessionsColdRatio).toBeCloseTo(0.9);
    expect(headline.newcomerSessionsReturningRatio).toBeCloseTo(1.5);
    const table = renderNewcomer(summary, result(true));
    expect(table).toContain("**Newcomer's sessions (random-60m;");
    expect(table).toContain("| this server (npm start) | 4 / 4 | 900 | 90 |");
  });

  it("reports each server's own time a token from its timings, one stream and four", () => {
    const timed = (ttft: number, decodeMs: number): NewcomerSamples => ({
      one: [{ ...sample(ttft), serverDecodeMs: decodeMs }],
      four: [[0, 1, 2, 3].map((i) => ({ ...sample(ttft), serverDecodeMs: 2 * decodeMs + i * 49 }))],
    });
    const base = result(false);
    const summary = summarizeNewcomer({ ...base, runs: { ours: [timed(50, 980)], "llama-server": [timed(48, 882)] } });
    // 980 / 49 = 20 ms against 18; four streams' medians (41.5 against 37.5 ms a token).
    expect(summary.oneServerMs).toEqual({ ours: 20, "llama-server": 18 });
    const table = renderNewcomer(summary, base);
    expect(table).toContain("| one stream, the server's own ms a token (timings) | 20.0 | 18.0 | +2.0 ms |");
    expect(table).toContain("| four streams, the server's own ms a token (timings) | 41.5 | 37.5 | +4.0 ms |");
    // Without timings (a server that sent none): no figure.
    expect(renderNewcomer(summarizeNewcomer(base), base)).toContain(
      "| one stream, the server's own ms a token (timings) | – | – |",
    );
  });

  it("reports CPU a token of every thread and of the main thread, pooled over the runs", () => {
    const withCpu = (all: number, main: number): NewcomerSamples => ({
      ...samples(50),
      cpu: {
        one: { tokens: 49, allMs: all * 49, mainMs: main * 49 },
        four: { tokens: 196, allMs: all * 196, mainMs: 0 },
      },
    });
    const base = result(false);
    const runs = {
      // Two runs of 49 tokens at 30 and 34 ms a token: pooled 32, not a median of runs.
      ours: [withCpu(30, 1.5), withCpu(34, 1.25)],
      "llama-server": [withCpu(29, 14), { ...samples(48) }],
    };
    const summary = summarizeNewcomer({ ...base, runs });
    expect(summary.cpuMs.one.allMs).toEqual({ ours: 32, "llama-server": 29 });
    const table = renderNewcomer(summary, base);
    expect(table).toContain("| one stream, CPU ms a token: every thread | 32.00 | 29.00 | +3.00 ms |");
    expect(table).toContain("| one stream, CPU ms a token: main thread | 1.38 | 14.00 | -12.63 ms |");
    expect(table).toContain("| four streams, CPU ms a token: main thread | 0.00 | 0.00 | +0.00 ms |");
    // Runs recorded before CPU was read: no figure.
    expect(renderNewcomer(summarizeNewcomer(base), base)).toContain(
      "| one stream, CPU ms a token: every thread | – | – | – |",
    );
  });

  it("reads a process tree's CPU: every thread, and the busiest main thread", () => {
    const before = treeCpu(process.pid);
    const start = process.cpuUsage().user;
    let spin = 0;
    while (process.cpuUsage().user - start < 120_000) spin++;
    const used = treeCpuUsed(before, treeCpu(process.pid));
    expect(spin).toBeGreaterThan(0);
    // 120 ms of this thread's CPU, read in clock ticks (10 ms).
    expect(used.mainMs).toBeGreaterThanOrEqual(100);
    expect(used.allMs).toBeGreaterThanOrEqual(100);
  });

  it("counts every thread at least as the main thread when a tick falls between the two reads", () => {
    const before = { allMs: 1000, mainMs: new Map([[7, 400]]) };
    const after = { allMs: 1580, mainMs: new Map([[7, 990]]) };
    expect(treeCpuUsed(before, after)).toEqual({ allMs: 590, mainMs: 590 });
    expect(treeCpuUsed(before, { ...after, allMs: 1700 })).toEqual({ allMs: 700, mainMs: 590 });
  });

  it("counts a child that ended between two machine snapshots as the bench's own CPU, not another process's", () => {
    const before = machineSnapshot();
    const child = spawnSync(process.execPath, [
      "-e",
      "const t = process.cpuUsage(); while (process.cpuUsage(t).user < 300000);",
    ]);
    expect(child.status).toBe(0);
    const after = machineSnapshot();
    // 300 ms of the child's CPU, read in clock ticks (10 ms), beside this process's own.
    expect(after.oursMs - before.oursMs).toBeGreaterThanOrEqual(290);
  });

  it("leaves the sessions' targets unmeasured when not run; --newcomer-sessions-model none skips it", () => {
    const targets = newcomerTargets(summarizeNewcomer(result(false)));
    const sessions = targets.filter((t) => t.name.startsWith("newcomer sessions"));
    expect(sessions.map((t) => [t.measured, t.pass])).toEqual([
      ["–", undefined],
      ["–", undefined],
    ]);
    const flags = readFlags(["--newcomer-sessions-model", "none"]);
    expect(flags !== "help" && flags.newcomerSessionsModel).toBe("none");
    const defaults = readFlags([]);
    expect(defaults !== "help" && defaults.newcomerSessionsModel).toBe("random-60m");
  });
});
