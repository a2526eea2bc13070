// edge/ runs in workerd: Web APIs only. Only edge/node.ts and edge/node/ (the Node host) may
// import Node modules.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const edgeDir = fileURLToPath(new URL("../../edge", import.meta.url));
const FORBIDDEN = [/^node:/, /^@grpc\//, /^node-llama-cpp/, /^@hono\/node-server/, /^better-sqlite3/, /^(fs|path|http|https|net|stream|os|crypto|buffer|process|url|child_process|events|util)$/];

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

function imports(source: string): string[] {
  const found: string[] = [];
  for (const match of source.matchAll(/(?:import|export)\s[^;]*?from\s+["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)|import\s+["']([^"']+)["']/g)) {
    found.push(match[1] ?? match[2] ?? match[3] ?? "");
  }
  return found;
}

describe("edge/ imports", () => {
  const files = sources(edgeDir);

  it("finds the edge sources", () => {
    expect(files.length).toBeGreaterThan(10);
  });

  it.each(files.map((f) => [relative(edgeDir, f), f]))("%s imports no Node-only module", (name, file) => {
    const found = imports(readFileSync(file, "utf8"));
    const bad = found.filter((spec) => FORBIDDEN.some((pattern) => pattern.test(spec)));
    const nodeHost = name === "node.ts" || name.startsWith("node/");
    if (name === "node.ts") expect(bad.length).toBeGreaterThan(0);
    else if (!nodeHost) expect(bad).toEqual([]);
    // workerd's own modules: only the Worker's entry (Node cannot load them)
    if (name !== "worker.ts") expect(found.filter((spec) => spec.startsWith("cloudflare:"))).toEqual([]);
    // no Buffer or process globals either
    if (!nodeHost) expect(readFileSync(file, "utf8")).not.toMatch(/\b(Buffer|process)\./);
  });
});

// Lower layers never import higher ones: production code (edge/, sidecar/, gguf/, proto/gen/)
// never reaches into scripts/, bench/ or test/; gguf/ imports nothing of the project but itself;
// edge/ and sidecar/ never import each other.
describe("layering", () => {
  const root = fileURLToPath(new URL("../..", import.meta.url));
  const rules: ReadonlyArray<readonly [string, readonly string[]]> = [
    ["edge", ["scripts", "bench", "test", "sidecar", "gguf"]],
    ["sidecar", ["scripts", "bench", "test", "edge"]],
    ["gguf", ["scripts", "bench", "test", "edge", "sidecar", "proto"]],
  ];
  const cases = rules.flatMap(([folder, forbidden]) =>
    sources(join(root, folder)).map((file) => [relative(root, file), file, forbidden] as const),
  );

  it.each(cases)("%s imports no higher layer", (_name, file, forbidden) => {
    const reached = imports(readFileSync(file, "utf8"))
      .filter((spec) => spec.startsWith("."))
      .map((spec) => relative(root, join(file, "..", spec)).split(/[\\/]/)[0] ?? "");
    expect(reached.filter((top) => forbidden.includes(top))).toEqual([]);
  });
});
