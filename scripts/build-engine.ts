/**
 * `npm run build:engine`: builds llama.cpp for this host from the source node-llama-cpp ships
 * (offline), with the project's engine patches (a persistent CPU thread pool per context, sequence
 * states restored into any sequence from memory, one summation order for every batch size,
 * llama.cpp's multimodal library bound into the addon for images and audio in, attention without flash attention
 * over a sequence's cells rounded up to 32, not 256, a step's tokens sampled on the thread that decoded it, one
 * rounding for repacked quantized weights whatever shares the batch, decodes on a thread of their own, no AMX
 * kernels, buffers in huge pages, and flash attention that computes a row alike in every batch;
 * sidecar/native/README.md).
 * The sidecar then loads this build (`--engine auto` or `local`); without it, the prebuilt library
 * stays the default. A CPU build by default; `-- --gpu cuda|vulkan|metal` builds for that backend
 * (the host needs its toolkit), which the sidecar loads when started with the same `--gpu`.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { LOCAL_BUILD_CMAKE_OPTIONS } from "../sidecar/engine/llama/model.js";

const root = fileURLToPath(new URL("..", import.meta.url));
const require = createRequire(import.meta.url);
/** node-llama-cpp's folder: its `exports` hide package.json, so up from its entry point. */
function packageFolder(): string {
  for (let dir = path.dirname(require.resolve("node-llama-cpp")); dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const file = path.join(dir, "package.json");
    if (existsSync(file) && (JSON.parse(readFileSync(file, "utf8")) as { name?: string }).name === "node-llama-cpp")
      return dir;
  }
  throw new Error("build:engine: node-llama-cpp is not installed");
}
const packageDir = packageFolder();
const { version } = JSON.parse(readFileSync(path.join(packageDir, "package.json"), "utf8")) as { version: string };
const PATCHED_FOR = "3.21.1";
/** The patches, in order, each found applied by a line it adds to `target` (in node-llama-cpp's folder). */
const PATCHES = [
  { file: "threadpool.patch", target: "llama/addon/AddonContext.h", marker: "llm-edge engine patch" },
  { file: "state-into.patch", target: "llama/addon/AddonContext.h", marker: "state-into.patch" },
  {
    file: "batch-invariant.patch",
    target: "llama/llama.cpp/ggml/src/ggml-cpu/llamafile/sgemm.cpp",
    marker: "batch-invariant.patch",
  },
  { file: "mtmd.patch", target: "llama/addon/addon.cpp", marker: "mtmd.patch" },
  { file: "kv-pad.patch", target: "llama/llama.cpp/src/llama-kv-cache.cpp", marker: "kv-pad.patch" },
  { file: "presample.patch", target: "llama/addon/AddonContext.cpp", marker: "presample.patch" },
  {
    file: "repack-invariant.patch",
    target: "llama/llama.cpp/ggml/src/ggml-cpu/arch/x86/repack.cpp",
    marker: "repack-invariant.patch",
  },
  { file: "decode-thread.patch", target: "llama/addon/AddonContext.h", marker: "decode-thread.patch" },
  { file: "amx-off.patch", target: "llama/llama.cpp/ggml/src/ggml-cpu/CMakeLists.txt", marker: "amx-off.patch" },
  { file: "huge-pages.patch", target: "llama/llama.cpp/ggml/src/ggml.c", marker: "huge-pages.patch" },
  { file: "fa-invariant.patch", target: "llama/llama.cpp/ggml/src/ggml-cpu/ops.cpp", marker: "fa-invariant.patch" },
];

if (version !== PATCHED_FOR) {
  console.error(
    `build:engine: the patch targets node-llama-cpp ${PATCHED_FOR}, found ${version}; update the patches in ` +
      `sidecar/native/ first`,
  );
  process.exit(1);
}

/** `--gpu <backend>`: the backend to build for; a CPU build without it. */
const gpuAt = process.argv.indexOf("--gpu");
const gpu = gpuAt < 0 ? "false" : (process.argv[gpuAt + 1] ?? "");
if (!["false", "cuda", "vulkan", "metal"].includes(gpu)) {
  console.error(`build:engine: --gpu must be false, cuda, vulkan or metal, got "${gpu}"`);
  process.exit(1);
}

const cli = path.join(root, "node_modules/.bin/node-llama-cpp");
const run = (command: string, args: string[], env: NodeJS.ProcessEnv = {}): void => {
  console.error(`build:engine: ${path.basename(command)} ${args.join(" ")}`);
  execFileSync(command, args, { cwd: root, stdio: "inherit", env: { ...process.env, ...env } });
};

// 1. The llama.cpp source of this exact release, from the git bundle inside the package (no network).
run(cli, ["source", "download", "--skipBuild", "--gpu", "false", "--noUsageExample"]);

// 2. Each patch, once.
for (const patch of PATCHES) {
  const target = readFileSync(path.join(packageDir, patch.target), "utf8");
  if (target.includes(patch.marker)) console.error(`build:engine: ${patch.file} already applied`);
  else run("patch", ["-p1", "--forward", "-d", packageDir, "-i", path.join(root, "sidecar/native", patch.file)]);
}

// 3. The build (9.4 CPU-minutes: about 5 minutes on an idle 2-core machine), found again at run time by these CMake
// options.
const cmakeEnv = Object.fromEntries(
  Object.entries(LOCAL_BUILD_CMAKE_OPTIONS).map(([k, v]) => [`NODE_LLAMA_CPP_CMAKE_OPTION_${k}`, v]),
);
run(cli, ["source", "build", "--gpu", gpu, "--noUsageExample"], cmakeEnv);
console.error('build:engine: done; the sidecar now loads this build (it logs "localBuild llama.cpp" at start)');
