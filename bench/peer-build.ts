/**
 * `npm run bench:peer-build`: builds `llama-server` from the llama.cpp source node-llama-cpp ships
 * (its git bundle, offline) into `.cache/llama.cpp/`, with the CMake options node-llama-cpp's own
 * CI uses for the prebuilt CPU library (read from node-llama-cpp's compileLLamaCpp.js, `ciMode`):
 * GGML_NATIVE=OFF, GGML_BACKEND_DL=ON, GGML_OPENMP=OFF, LLAMA_CURL=OFF, Release. The prebuilt
 * library also sets GGML_CPU_ALL_VARIANTS (one CPU backend per ISA level, the best one loaded at
 * run time); building all of them would triple the build time, so this build compiles the one CPU
 * backend with exactly the ISA features of the variant the prebuilt library loads on this host
 * (found by loading it and reading /proc/self/maps; the features are read from the variant's line
 * in ggml/src/CMakeLists.txt). Takes ~5 minutes on 2 cores; a second run with the same source and
 * options does nothing.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PEER_BINARY, PEER_BUILD, PEER_DIR, PEER_INFO, PEER_SOURCE, ROOT, readPeerInfo, type PeerInfo } from "./peer-paths.js";

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
    const llama = await getLlama({ gpu: false, build: "never", maxThreads: 1, logLevel: LlamaLogLevel.error, cmakeOptions: {} });
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
  const line = new RegExp(`ggml_add_cpu_backend_variant\\(\\s*${variant.replace(/\./g, "\\.")}\\b([^)]*)\\)`).exec(cmake);
  if (!line) throw new Error(`CPU variant ${variant} is not defined in ggml/src/CMakeLists.txt`);
  const on = new Set((line[1] ?? "").trim().split(/\s+/).filter(Boolean));
  return Object.fromEntries(X86_FEATURES.map((f) => [`GGML_${f}`, on.has(f) ? "ON" : "OFF"]));
}

const BASE_CMAKE_OPTIONS: Readonly<Record<string, string>> = {
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

/** Builds the peer unless a build of the same source and options is already there. */
export function buildPeer(): PeerInfo {
  const commit = bundleHead();
  const variant = prebuiltCpuVariant();
  const existing = readPeerInfo();
  const started = Date.now();
  mkdirSync(PEER_DIR, { recursive: true });
  const cloned = existsSync(join(PEER_SOURCE, ".git")) && execFileSync("git", ["-C", PEER_SOURCE, "rev-parse", "HEAD"], { encoding: "utf8" }).trim() === commit;
  if (!cloned) {
    rmSync(PEER_SOURCE, { recursive: true, force: true });
    run("git", ["clone", "--quiet", bundle, PEER_SOURCE]);
    run("git", ["-C", PEER_SOURCE, "checkout", "--quiet", commit]);
  }
  const options = { ...BASE_CMAKE_OPTIONS, ...variantFeatureOptions(PEER_SOURCE, variant) };
  if (existing && existing.commit === commit && existing.cpuVariant === variant && JSON.stringify(existing.cmakeOptions) === JSON.stringify(options)) {
    log(`up to date: ${PEER_BINARY} (llama.cpp ${commit.slice(0, 10)}, CPU variant ${variant})`);
    return existing;
  }
  rmSync(PEER_BUILD, { recursive: true, force: true });
  const generator = spawnSync("ninja", ["--version"]).status === 0 ? ["-G", "Ninja"] : [];
  const defines = Object.entries(options).map(([k, v]) => `-D${k}=${v}`);
  run("cmake", ["-S", PEER_SOURCE, "-B", PEER_BUILD, ...generator, ...defines]);
  run("cmake", ["--build", PEER_BUILD, "--config", "Release", "-j", "2", "--target", "llama-server"]);
  if (!existsSync(PEER_BINARY)) throw new Error(`the build finished but ${PEER_BINARY} is missing`);
  const info: PeerInfo = {
    commit,
    cpuVariant: variant,
    cmakeOptions: options,
    builtAt: new Date().toISOString(),
    buildSeconds: Math.round((Date.now() - started) / 1000),
  };
  writeFileSync(PEER_INFO, `${JSON.stringify(info, null, 2)}\n`);
  log(`built ${PEER_BINARY} in ${info.buildSeconds} s (llama.cpp ${commit.slice(0, 10)}, CPU variant ${variant})`);
  return info;
}

if (process.argv[1] !== undefined && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  buildPeer();
}
