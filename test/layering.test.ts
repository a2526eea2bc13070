// What outside test/ may import from it (test/README.md): bench/ may import test/support/, whose
// helpers start processes and servers for the benchmark as for the tests; nothing else outside
// test/ imports from test/, and what bench/ reaches in test/ stays in test/support/.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { imports } from "./support/imports.js";

const root = fileURLToPath(new URL("..", import.meta.url));
/** Not the project's sources: dependencies, generated and local state, and test/ itself. */
const SKIPPED = new Set(["node_modules", "test", "models", "results"]);

/** Every source file under `dir` (relative to the root), test/ and local state left out. */
function sourcesUnder(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = dir === "" ? entry.name : `${dir}/${entry.name}`;
    if (entry.isDirectory()) return entry.name.startsWith(".") || SKIPPED.has(entry.name) ? [] : sourcesUnder(path);
    return /\.(ts|js|mjs)$/.test(entry.name) ? [path] : [];
  });
}

/** The project files `file` imports by relative path, relative to the root. */
function reached(file: string): string[] {
  return imports(readFileSync(join(root, file), "utf8"))
    .filter((spec) => spec.startsWith("."))
    .map((spec) =>
      relative(root, join(root, file, "..", spec))
        .replace(/\\/g, "/")
        .replace(/\.js$/, ".ts"),
    );
}

describe("imports from test/", () => {
  const outside = sourcesUnder("");
  const fromTest = outside
    .flatMap((file) => reached(file).map((target) => [file, target] as const))
    .filter(([, target]) => target.startsWith("test/"));

  it("come from bench/ alone, into test/support/ alone", () => {
    expect(outside.length).toBeGreaterThan(100);
    const refused = fromTest.filter(
      ([file, target]) => !(file.startsWith("bench/") && target.startsWith("test/support/")),
    );
    expect(refused.map(([file, target]) => `${file} → ${target}`)).toEqual([]);
  });

  it("reach nothing in test/ beyond test/support/ through it", () => {
    const seen = new Set<string>();
    const queue = fromTest.map(([, target]) => target);
    for (let file = queue.pop(); file !== undefined; file = queue.pop()) {
      if (seen.has(file)) continue;
      seen.add(file);
      queue.push(...reached(file).filter((target) => target.startsWith("test/")));
    }
    expect([...seen].filter((file) => !file.startsWith("test/support/"))).toEqual([]);
    expect(seen.size).toBeGreaterThan(0);
  });
});

describe("one-process/", () => {
  it("is an entry: nothing imports it, and it reaches the edge and the sidecar only through their own files", () => {
    const all = sourcesUnder("");
    const importers = all.filter((file) => reached(file).some((target) => target.startsWith("one-process/")));
    expect(importers).toEqual([]);
    const own = all.filter((file) => file.startsWith("one-process/"));
    expect(own).toEqual(["one-process/main.ts"]);
    const targets = own.flatMap(reached);
    expect(targets.filter((t) => !/^(edge|sidecar|proto\/gen)\//.test(t))).toEqual([]);
    expect(targets.some((t) => t.startsWith("edge/")) && targets.some((t) => t.startsWith("sidecar/"))).toBe(true);
  });
});
