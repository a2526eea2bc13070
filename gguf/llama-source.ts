// llama.cpp's own files, read from the source bundle node-llama-cpp ships
// (`node_modules/node-llama-cpp/llama/gitRelease.bundle`): the real chat templates of
// `models/templates/`, the real tokenizers of `models/ggml-vocab-*.gguf` and the converter's Qwen
// code (`conversion/qwen.py`, which writes Qwen3-Reranker's rerank template), extracted once into a
// cache folder keyed by the bundle's commit and the list of paths. Nothing is downloaded.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const BUNDLE = join(root, "node_modules", "node-llama-cpp", "llama", "gitRelease.bundle");
const CACHE = join(root, ".cache", "llama-source");
const PATHS = ["models/templates", "models/ggml-vocab-*.gguf", "conversion/qwen.py"];
/** Changes with PATHS, so that a cache made with fewer paths is not taken. */
const LAYOUT = 2;

const git = (args: string[], cwd?: string): string =>
  execFileSync("git", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], maxBuffer: 1 << 28 });

/** The bundle's commit. */
export function llamaSourceCommit(): string {
  const [line] = git(["bundle", "list-heads", BUNDLE]).trim().split("\n");
  return (line ?? "").split(" ")[0] ?? "";
}

/** The folder holding llama.cpp's `models/templates/` and `models/ggml-vocab-*.gguf`, extracted on first use. */
export function llamaSource(): string {
  if (!existsSync(BUNDLE)) throw new Error(`llama.cpp's source bundle is missing (${BUNDLE}): run npm ci`);
  const commit = llamaSourceCommit();
  const dest = join(CACHE, `${commit}-${LAYOUT}`);
  if (existsSync(join(dest, "models", "templates"))) return dest;
  mkdirSync(CACHE, { recursive: true });
  const work = mkdtempSync(join(tmpdir(), "llama-source-"));
  try {
    git(["init", "--bare", "-q", work]);
    git(["fetch", "-q", BUNDLE, commit], work);
    const out = join(work, "out");
    mkdirSync(out);
    const tar = join(work, "files.tar");
    git(["archive", "-o", tar, commit, "--", ...PATHS], work);
    execFileSync("tar", ["-xf", tar, "-C", out]);
    // Another process may have finished first (test files extract at once): its copy is the same.
    try {
      renameSync(out, dest);
    } catch (error) {
      if (!existsSync(join(dest, "models", "templates"))) throw error;
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return dest;
}

/** The chat templates of llama.cpp's `models/templates/`, by file name. */
export function llamaTemplates(): Map<string, string> {
  const dir = join(llamaSource(), "models", "templates");
  const names = readdirSync(dir)
    .filter((name) => name.endsWith(".jinja"))
    .sort();
  return new Map(names.map((name) => [name, readFileSync(join(dir, name), "utf8")]));
}

/** One of llama.cpp's source files among PATHS, by its path in the source (`conversion/qwen.py`). */
export function llamaSourceFile(path: string): string {
  return readFileSync(join(llamaSource(), path), "utf8");
}

/** The path of one of llama.cpp's tokenizer files (`ggml-vocab-qwen2.gguf`). */
export function llamaVocab(name: string): string {
  return join(llamaSource(), "models", `ggml-vocab-${name}.gguf`);
}
