/**
 * `npm run bench:peer-build [-- --variant default|prebuilt|both]` (both by default): builds
 * `llama-server` from the llama.cpp source node-llama-cpp ships (its git bundle, offline) into
 * `.cache/llama.cpp/`, twice.
 *
 * "prebuilt" (`build/`, `peer.json`): the CMake options node-llama-cpp's own CI uses for the
 * prebuilt CPU library (read from node-llama-cpp's compileLLamaCpp.js, `ciMode`): GGML_NATIVE=OFF,
 * GGML_BACKEND_DL=ON, GGML_OPENMP=OFF, LLAMA_CURL=OFF, Release. The prebuilt library also sets
 * GGML_CPU_ALL_VARIANTS (one CPU backend per ISA level, the best one loaded at run time); building
 * all of them would triple the build time, so this build compiles the one CPU backend with exactly
 * the ISA features of the variant the prebuilt library loads on this host (found by loading it and
 * reading /proc/self/maps; the features are read from the variant's line in ggml/src/CMakeLists.txt).
 *
 * "default" (`build-default/`, `peer-default.json`): llama.cpp's own defaults, as a user who clones
 * it and runs `cmake -B build && cmake --build build --config Release -t llama-server` gets them
 * (Release, GGML_NATIVE=ON, GGML_OPENMP=ON, no backend DL), with only what must change offline;
 * it also builds `llama-quantize`, which makes the quantized models (`quantize.ts`).
 *
 * Each takes ~5-8 minutes on 2 cores; a second run with the same source and options does nothing.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import {
  PEER_DIR,
  PEER_SOURCE,
  ROOT,
  parsePeerVariants,
  peerPaths,
  readPeerInfo,
  type PeerInfo,
  type PeerVariant,
} from "./peer-paths.js";

const bundle = join(ROOT, "node_modules/node-llama-cpp/llama/gitRelease.bundle");

function log(message: string): void {
  console.error(`peer-build: ${message}`);
}

function run(command: string, args: readonly string[], cwd = ROOT): void {
  log(`${command} ${args.join(" ")}`);
  execFileSync(command, args, { cwd, stdio: "inherit" });
}

/** The CPU backend variant (e.g. "zen4") that node-llama-cpp's prebuilt library loads here. */
export function prebuiltCpuVariant(): string {
  const probe = `
    import { getLlama, LlamaLogLevel } from "node-llama-cpp";
    import { readFileSync } from "node:fs";
    const options = { gpu: false, build: "never", maxThreads: 1, logLevel: LlamaLogLevel.error };
    const llama = await getLlama({ ...options, cmakeOptions: {} });
    const m = /libggml-cpu-([\\w.]+)\\.so/.exec(readFileSync("/proc/self/maps", "utf8"));
    console.log(JSON.stringify({ buildType: llama.buildType, variant: m ? m[1] : null }));`;
  // A file, not `node -e`: node-llama-cpp tests its binding in a child that inherits execArgv.
  mkdirSync(PEER_DIR, { recursive: true });
  const file = join(PEER_DIR, "variant-probe.mjs");
  writeFileSync(file, probe);
  const out = spawnSync(process.execPath, [file], { cwd: ROOT, encoding: "utf8" });
  const line = out.stdout.trim().split("\n").pop() ?? "";
  const parsed = JSON.parse(line || "{}") as { buildType?: string; variant?: string | null };
  if (parsed.buildType !== "prebuilt" || !parsed.variant) {
    throw new Error(`could not find the prebuilt CPU variant (got ${line}; stderr: ${out.stderr})`);
  }
  return parsed.variant;
}

function bundleHead(): string {
  const heads = execFileSync("git", ["bundle", "list-heads", bundle], { encoding: "utf8" });
  const head = heads.split("\n").find((l) => l.endsWith(" HEAD")) ?? heads.split("\n")[0] ?? "";
  return head.split(" ")[0] ?? "";
}

/** The x86 ISA switches ggml's CPU variants turn off before turning on their own. */
const X86_FEATURES = [
  "SSE42",
  "AVX",
  "AVX2",
  "BMI2",
  "AVX_VNNI",
  "FMA",
  "F16C",
  "AVX512",
  "AVX512_VBMI",
  "AVX512_VNNI",
  "AVX512_BF16",
  "AMX_TILE",
  "AMX_INT8",
  "AMX_BF16",
];

/** `GGML_<feature>` options equal to those of ggml's CPU variant `variant` (e.g. zen4). */
export function variantFeatureOptions(source: string, variant: string): Record<string, string> {
  const cmake = readFileSync(join(source, "ggml/src/CMakeLists.txt"), "utf8");
  const line = new RegExp(`ggml_add_cpu_backend_variant\\(\\s*${variant.replace(/\./g, "\\.")}\\b([^)]*)\\)`).exec(
    cmake,
  );
  if (!line) throw new Error(`CPU variant ${variant} is not defined in ggml/src/CMakeLists.txt`);
  const on = new Set((line[1] ?? "").trim().split(/\s+/).filter(Boolean));
  return Object.fromEntries(X86_FEATURES.map((f) => [`GGML_${f}`, on.has(f) ? "ON" : "OFF"]));
}

/** The prebuilt-like build's options but the ISA switches (variantFeatureOptions adds those). */
export const PREBUILT_CMAKE_OPTIONS: Readonly<Record<string, string>> = {
  CMAKE_BUILD_TYPE: "Release",
  GGML_NATIVE: "OFF",
  GGML_BACKEND_DL: "ON",
  GGML_CPU_ALL_VARIANTS: "OFF",
  BUILD_SHARED_LIBS: "ON",
  GGML_OPENMP: "OFF",
  GGML_METAL: "OFF",
  GGML_CCACHE: "OFF",
  GGML_BUILD_NUMBER: "1",
  LLAMA_CURL: "OFF",
  LLAMA_OPENSSL: "OFF",
  LLAMA_BUILD_TESTS: "OFF",
  LLAMA_BUILD_EXAMPLES: "OFF",
  LLAMA_BUILD_SERVER: "ON",
};

/**
 * The default build: llama.cpp's defaults (its CMakeLists.txt makes an unset build type Release;
 * GGML_NATIVE, GGML_OPENMP, BUILD_SHARED_LIBS and LLAMA_OPENSSL default to ON, GGML_BACKEND_DL to
 * OFF), changed only where a build must stay offline: the server's Web UI assets would be
 * downloaded from a Hugging Face bucket (the bench runs llama-server with --no-webui anyway).
 * LLAMA_CURL is a deprecated no-op in this source, and this host has no curl headers either way.
 */
export const DEFAULT_CMAKE_OPTIONS: Readonly<Record<string, string>> = {
  LLAMA_USE_PREBUILT_UI: "OFF",
};

/**
 * On a CPU with AMX, the default build compiles ggml's AMX kernels, whose matrix product crashes llama-server at its
 * first batch on hosts like this project's (SIGSEGV at `ldtilecfg` in an OpenMP worker; llama.cpp issue 20824, open)
 * with Q4_K_M and Q8_0 models. The peer is then built without them, as this project's engine build is
 * (sidecar/native/amx-off.patch): the same kernels on both sides. Nothing on other CPUs.
 */
export function amxOffOptions(cpuFlags: readonly string[]): Record<string, string> {
  if (!cpuFlags.includes("amx_tile")) return {};
  const flags = "-mno-amx-tile -mno-amx-int8 -mno-amx-bf16";
  return { CMAKE_C_FLAGS: flags, CMAKE_CXX_FLAGS: flags };
}

/** This host's CPU flags (/proc/cpuinfo's first "flags" line; none elsewhere). */
function cpuFlags(): string[] {
  try {
    const line = readFileSync("/proc/cpuinfo", "utf8").match(/^flags\s*:(.*)$/m)?.[1] ?? "";
    return line.trim().split(/\s+/);
  } catch {
    return [];
  }
}

/** The options of build `variant` from `source`; `cpuVariant` is the prebuilt library's (read only for "prebuilt"). */
export function peerCmakeOptions(
  variant: PeerVariant,
  source: string,
  cpuVariant: () => string,
  flags: readonly string[] = cpuFlags(),
): Record<string, string> {
  if (variant === "default") return { ...DEFAULT_CMAKE_OPTIONS, ...amxOffOptions(flags) };
  return { ...PREBUILT_CMAKE_OPTIONS, ...variantFeatureOptions(source, cpuVariant()) };
}

/** Clones the bundle's commit into PEER_SOURCE unless it is already there. */
function checkOut(commit: string): void {
  mkdirSync(PEER_DIR, { recursive: true });
  const cloned =
    existsSync(join(PEER_SOURCE, ".git")) &&
    execFileSync("git", ["-C", PEER_SOURCE, "rev-parse", "HEAD"], { encoding: "utf8" }).trim() === commit;
  if (cloned) return;
  rmSync(PEER_SOURCE, { recursive: true, force: true });
  run("git", ["clone", "--quiet", bundle, PEER_SOURCE]);
  run("git", ["-C", PEER_SOURCE, "checkout", "--quiet", commit]);
}

/** llama-server, and for the default build llama-quantize (the quantized models of bench/quantize.ts). */
function build(dir: string, variant: PeerVariant): void {
  const targets = variant === "default" ? ["llama-server", "llama-quantize"] : ["llama-server"];
  run("cmake", ["--build", dir, "--config", "Release", "-j", "2", "--target", ...targets]);
}

/** Builds llama-server `variant` unless a build of the same source and options is already there. */
export function buildPeer(variant: PeerVariant): PeerInfo {
  const commit = bundleHead();
  const paths = peerPaths(variant);
  const existing = readPeerInfo(variant);
  const started = Date.now();
  checkOut(commit);
  const cpuVariant = variant === "prebuilt" ? prebuiltCpuVariant() : "native";
  const options = peerCmakeOptions(variant, PEER_SOURCE, () => cpuVariant);
  const what = `${variant} build, llama.cpp ${commit.slice(0, 10)}, CPU ${cpuVariant}`;
  if (
    existing &&
    existing.commit === commit &&
    existing.cpuVariant === cpuVariant &&
    JSON.stringify(existing.cmakeOptions) === JSON.stringify(options)
  ) {
    // A build from before the default build made llama-quantize too makes just that.
    if (variant === "default" && !existsSync(join(paths.build, "bin/llama-quantize"))) build(paths.build, variant);
    log(`up to date: ${paths.binary} (${what})`);
    return existing;
  }
  rmSync(paths.build, { recursive: true, force: true });
  // Ninja when there is one (the generator changes no compiler flag, only how the build is driven).
  const generator = spawnSync("ninja", ["--version"]).status === 0 ? ["-G", "Ninja"] : [];
  const defines = Object.entries(options).map(([k, v]) => `-D${k}=${v}`);
  run("cmake", ["-S", PEER_SOURCE, "-B", paths.build, ...generator, ...defines]);
  build(paths.build, variant);
  if (!existsSync(paths.binary)) throw new Error(`the build finished but ${paths.binary} is missing`);
  const info: PeerInfo = {
    variant,
    commit,
    cpuVariant,
    cmakeOptions: options,
    builtAt: new Date().toISOString(),
    buildSeconds: Math.round((Date.now() - started) / 1000),
  };
  writeFileSync(paths.info, `${JSON.stringify(info, null, 2)}\n`);
  log(`built ${paths.binary} in ${info.buildSeconds} s (${what})`);
  return info;
}

if (process.argv[1] !== undefined && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  const { values } = parseArgs({ args: process.argv.slice(2), options: { variant: { type: "string" } } });
  for (const variant of parsePeerVariants(values.variant ?? "both", "--variant")) buildPeer(variant);
}
