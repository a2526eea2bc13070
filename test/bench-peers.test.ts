// The benchmark's two llama-server builds (bench/peer-build.ts, bench/peer-paths.ts): their CMake
// option sets, where each lives, the flags that pick them, and the figures compared with them (the
// long prompt's decode row, the single stream's ratios, the many-sessions target). Pure functions
// only: nothing is built or started.
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readFlags, type BenchFlags } from "../bench/flags.js";
import { amxOffOptions, DEFAULT_CMAKE_OPTIONS, peerCmakeOptions } from "../bench/peer-build.js";
import { PEER_DIR, PEER_LABELS, parsePeerVariants, peerPaths, referencePeer } from "../bench/peer-paths.js";
import type { StreamSample } from "../bench/sample.js";
import { longContextSize, summarizeLong, type LongParty } from "../bench/sections/long.js";
import type { SessionsRow } from "../bench/sections/sessions.js";
import type { SingleResult } from "../bench/sections/single.js";
import { summarizeSingle } from "../bench/summary.js";
import { againstPeers } from "../bench/table.js";
import { evaluateTargets } from "../bench/targets.js";

/** A completed stream: first token at `ttft` ms, `tokens` tokens, the last at `last` ms. */
const sample = (ttft: number, tokens: number, last: number): StreamSample => ({
  outcome: "completed",
  status: 200,
  ttftMs: ttft,
  lastTokenMs: last,
  totalMs: last,
  tokens,
});

function flagsOf(argv: readonly string[]): BenchFlags {
  const flags = readFlags(argv);
  if (flags === "help") throw new Error("help");
  return flags;
}

describe("llama-server builds", () => {
  it("builds the default one with llama.cpp's own defaults, changing only the Web UI download", () => {
    expect(peerCmakeOptions("default", "/nowhere", () => "zen4", ["avx2", "avx512f"])).toEqual({
      LLAMA_USE_PREBUILT_UI: "OFF",
    });
    expect(DEFAULT_CMAKE_OPTIONS).not.toHaveProperty("GGML_NATIVE");
    expect(DEFAULT_CMAKE_OPTIONS).not.toHaveProperty("GGML_OPENMP");
    expect(DEFAULT_CMAKE_OPTIONS).not.toHaveProperty("GGML_BACKEND_DL");
  });

  it("builds the default one without AMX kernels on a CPU with AMX, and only there", () => {
    const off = "-mno-amx-tile -mno-amx-int8 -mno-amx-bf16";
    expect(peerCmakeOptions("default", "/nowhere", () => "native", ["avx512f", "amx_bf16", "amx_tile"])).toEqual({
      LLAMA_USE_PREBUILT_UI: "OFF",
      CMAKE_C_FLAGS: off,
      CMAKE_CXX_FLAGS: off,
    });
    expect(amxOffOptions(["avx512f", "avx512_vnni"])).toEqual({});
  });

  it("builds the prebuilt-like one as node-llama-cpp's CI does, with the ISA of the prebuilt variant", () => {
    const source = mkdtempSync(join(tmpdir(), "peer-source-"));
    mkdirSync(join(source, "ggml/src"), { recursive: true });
    writeFileSync(
      join(source, "ggml/src/CMakeLists.txt"),
      "ggml_add_cpu_backend_variant(haswell SSE42 AVX F16C AVX2 BMI2 FMA)\n",
    );
    const options = peerCmakeOptions("prebuilt", source, () => "haswell");
    expect(options).toMatchObject({
      CMAKE_BUILD_TYPE: "Release",
      GGML_NATIVE: "OFF",
      GGML_BACKEND_DL: "ON",
      GGML_OPENMP: "OFF",
      LLAMA_CURL: "OFF",
      GGML_AVX2: "ON",
      GGML_FMA: "ON",
      GGML_AVX512: "OFF",
      GGML_AVX_VNNI: "OFF",
    });
  });

  it("keeps each build in a folder and info file of its own, the prebuilt-like one where it always was", () => {
    expect(peerPaths("prebuilt")).toEqual({
      build: join(PEER_DIR, "build"),
      binary: join(PEER_DIR, "build/bin/llama-server"),
      info: join(PEER_DIR, "peer.json"),
    });
    expect(peerPaths("default")).toEqual({
      build: join(PEER_DIR, "build-default"),
      binary: join(PEER_DIR, "build-default/bin/llama-server"),
      info: join(PEER_DIR, "peer-default.json"),
    });
  });

  it("reads build lists in a fixed order, default first", () => {
    expect(parsePeerVariants("both", "--variant")).toEqual(["default", "prebuilt"]);
    expect(parsePeerVariants("prebuilt, default", "--peers")).toEqual(["default", "prebuilt"]);
    expect(parsePeerVariants("prebuilt", "--peers")).toEqual(["prebuilt"]);
    expect(() => parsePeerVariants("native", "--peers")).toThrow(
      '--peers: unknown build "native" (one of default, prebuilt, or both)',
    );
    expect(() => parsePeerVariants(",", "--peers")).toThrow("--peers: name at least one of default, prebuilt");
  });

  it("takes every build, the model and the decode row's length from the bench's flags", () => {
    expect(flagsOf([])).toMatchObject({ peers: ["default", "prebuilt"], model: "random-60m", longDecodeTokens: 1024 });
    expect(flagsOf(["--quick"]).longDecodeTokens).toBe(128);
    expect(flagsOf(["--peers", "default", "--model", "random-850m", "--long-decode-tokens", "256"])).toMatchObject({
      peers: ["default"],
      model: "random-850m",
      longDecodeTokens: 256,
    });
  });

  it("compares with the default build first, the prebuilt-like one when it is the only one", () => {
    const rows = [{ label: "sidecar" }, { label: PEER_LABELS.prebuilt }, { label: PEER_LABELS.default }];
    expect(referencePeer(rows, (r) => r.label)).toBe(rows[2]);
    expect(referencePeer(rows.slice(0, 2), (r) => r.label)).toBe(rows[1]);
    expect(referencePeer(rows.slice(0, 1), (r) => r.label)).toBeUndefined();
  });
});

describe("figures against the two builds", () => {
  it("reports decode tok/s after the long prompt, first token excluded, against each build", () => {
    const run = { evaluated: 8000, promptMs: 4000, ttftMs: 4100 };
    const party = (name: string, decode: StreamSample): LongParty => ({ name, cold: run, cached: run, decode });
    // 101 tokens, 100 after the first, in 1,000 ms / 1,250 ms / 800 ms.
    const rows = summarizeLong({
      promptTokens: 8000,
      contextSize: longContextSize(8000, 128),
      decodeTokens: 128,
      parties: [
        party("sidecar (native gRPC)", sample(50, 101, 1050)),
        party(PEER_LABELS.default, sample(40, 101, 1290)),
        party(PEER_LABELS.prebuilt, sample(40, 101, 840)),
      ],
    });
    expect(longContextSize(8000, 128)).toBe(9152);
    expect(rows.map((r) => [r.name, r.decodeTps, r.decodeVsPeer.default, r.decodeVsPeer.prebuilt])).toEqual([
      ["sidecar (native gRPC)", 100, 1.25, 0.8],
      [PEER_LABELS.default, 80, 1, 0.64],
      [PEER_LABELS.prebuilt, 125, 1.5625, 1],
    ]);
  });

  it("gives every single-stream party its decode ratio and TTFT difference to each build", () => {
    const single: SingleResult = {
      runs: 1,
      parties: [
        { key: "a", label: "(a)", samples: [sample(10, 11, 110)], cpuMs: {} },
        { key: "c", label: "(c)", samples: [sample(14, 11, 114)], cpuMs: {} },
        { key: "peer-default", label: PEER_LABELS.default, samples: [sample(12, 11, 137)], cpuMs: {} },
      ],
    };
    const edge = summarizeSingle(single).find((p) => p.key === "c");
    // (c) 100 tok/s against the default build's 80; no prebuilt-like build ran.
    expect(edge?.decodeVsPeer).toEqual({ default: 1.25, prebuilt: Number.NaN });
    expect(edge?.ttftVsPeerMs).toEqual({ default: 2, prebuilt: Number.NaN });
    expect(againstPeers(edge?.decodeVsPeer ?? { default: Number.NaN, prebuilt: Number.NaN }, (v) => `${v}×`)).toBe(
      "1.25× / –",
    );
    expect(againstPeers({ default: Number.NaN, prebuilt: Number.NaN }, String)).toBe("–");
  });

  it("checks the many-sessions returning turn against the default build", () => {
    const row = (label: string, returningTtftP50: number): SessionsRow => ({
      label,
      returning: "8 / 8",
      coldTtftP50: 1000,
      returningTtftP50,
      returningTtftP99: returningTtftP50,
      returningPromptTokens: 6700,
      cachedShare: 0.99,
      vsPeer: Number.NaN,
    });
    const sessions = [
      row("edge on Node, sidecar --cache-ram auto", 300),
      row(PEER_LABELS.default, 250),
      row(PEER_LABELS.prebuilt, 400),
    ];
    const [target] = evaluateTargets({ sessions, concurrent: 8 }).filter((t) => t.name.startsWith("many sessions"));
    expect(target).toEqual({
      name: `many sessions: returning-turn TTFT p50 vs ${PEER_LABELS.default}`,
      measured: "1.20× (300 vs 250 ms)",
      needed: "≤ 1.0×",
      pass: false,
    });
  });
});
