// The rooms of sidecar/engine/ and what each may import (their READMEs): syntax/ → llama/ → grammar/ →
// chat/ → decode/ → streams/, each room importing only rooms before it and the shared files
// directly under engine/ (engine-errors.ts, engine-metrics.ts), which import no room; nothing in engine/
// imports the sidecar's process, service or transports. sidecar/catalogue/ (the models and their
// registry) imports only engine/llama/ and the shared files, and neither engine/ nor transport/
// imports it. sidecar/metrics/ (what /metrics says) is imported by neither engine/ nor transport/.
import { readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { imports, sources } from "../support/imports.js";

const root = fileURLToPath(new URL("../..", import.meta.url));
const engineDir = join(root, "sidecar", "engine");

/** The rooms in order: a room may import the rooms before it, never those after it. */
const ROOMS = ["syntax", "llama", "grammar", "chat", "decode", "streams"] as const;
/** Files directly under engine/, shared by every room. */
const SHARED = "(shared)";

/** The files a source imports by relative path, as paths from the repository root. */
function relativeImports(file: string): string[] {
  const specs = imports(readFileSync(file, "utf8"));
  return specs
    .filter((spec) => spec.startsWith("."))
    .map((spec) =>
      relative(root, join(file, "..", spec))
        .split(/[\\/]/)
        .join("/"),
    );
}

/** The room of a path under sidecar/engine/ (SHARED for a file directly in it); undefined outside engine/. */
function roomOf(path: string): string | undefined {
  const parts = path.split("/");
  if (parts[0] !== "sidecar" || parts[1] !== "engine") return undefined;
  return parts.length === 3 ? SHARED : parts[2];
}

/** What a room may import: itself, the shared files and the rooms before it (the shared files: themselves). */
function allowed(room: string): readonly string[] {
  if (room === SHARED) return [SHARED];
  const rank = ROOMS.indexOf(room as (typeof ROOMS)[number]);
  return [SHARED, ...ROOMS.slice(0, rank + 1)];
}

describe("sidecar/engine/ rooms", () => {
  const files = sources(engineDir).map((file) => [relative(root, file).split(/[\\/]/).join("/"), file] as const);

  it("has every file in a known room and at most 8 files directly under engine/", () => {
    const rooms = files.map(([name]) => roomOf(name));
    expect(rooms.filter((room) => room !== SHARED && !ROOMS.includes(room as (typeof ROOMS)[number]))).toEqual([]);
    expect(rooms.filter((room) => room === SHARED).length).toBeLessThanOrEqual(8);
    for (const room of ROOMS) expect(rooms).toContain(room);
  });

  it.each(files)("%s imports only what its room may", (name, file) => {
    const room = roomOf(name) ?? "";
    const bad = relativeImports(file).filter((target) => {
      if (target.startsWith("proto/gen/")) return false;
      const targetRoom = roomOf(target);
      return targetRoom === undefined || !allowed(room).includes(targetRoom);
    });
    expect(bad).toEqual([]);
  });
});

describe("sidecar/catalogue/", () => {
  const catalogueDir = join(root, "sidecar", "catalogue");
  const named = (dir: string) =>
    sources(dir).map((file) => [relative(root, file).split(/[\\/]/).join("/"), file] as const);

  it.each(named(catalogueDir))("%s imports only itself, engine/llama/ and the engine's shared files", (_name, file) => {
    const bad = relativeImports(file).filter((target) => {
      if (
        target.startsWith("proto/gen/") ||
        target.startsWith("sidecar/catalogue/") ||
        target.startsWith("sidecar/engine/llama/")
      )
        return false;
      return roomOf(target) !== SHARED;
    });
    expect(bad).toEqual([]);
  });

  it.each([...named(engineDir), ...named(join(root, "sidecar", "transport"))])(
    "%s does not import the catalogue",
    (_name, file) => {
      expect(relativeImports(file).filter((target) => target.startsWith("sidecar/catalogue/"))).toEqual([]);
    },
  );
});

describe("sidecar/metrics/", () => {
  const named = (dir: string) =>
    sources(dir).map((file) => [relative(root, file).split(/[\\/]/).join("/"), file] as const);

  it.each([...named(engineDir), ...named(join(root, "sidecar", "transport"))])(
    "%s does not import metrics/",
    (_name, file) => {
      expect(relativeImports(file).filter((target) => target.startsWith("sidecar/metrics/"))).toEqual([]);
    },
  );
});
