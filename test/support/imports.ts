// What the layering tests read: the .ts files under a folder and the module specifiers a source
// imports (static, dynamic and side-effect imports, and re-exports).
import { readdirSync } from "node:fs";
import { join } from "node:path";

/** Every .ts file under `dir`, recursively. */
export function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

const IMPORT =
  /(?:import|export)\s[^;]*?from\s+["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)|import\s+["']([^"']+)["']/g;

/** The module specifiers `source` imports, in order. */
export function imports(source: string): string[] {
  return [...source.matchAll(IMPORT)].map((match) => match[1] ?? match[2] ?? match[3] ?? "");
}
