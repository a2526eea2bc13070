// Where the peers live: llama-server built from node-llama-cpp's bundled llama.cpp source, once
// like the prebuilt library ("prebuilt") and once with llama.cpp's default CMake options ("default").
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("..", import.meta.url));
export const PEER_DIR = join(ROOT, ".cache/llama.cpp");
export const PEER_SOURCE = join(PEER_DIR, "src");

/** The two builds of llama-server, the one users compare with first. */
export const PEER_VARIANTS = ["default", "prebuilt"] as const;
export type PeerVariant = (typeof PEER_VARIANTS)[number];

/** How the tables name each build. */
export const PEER_LABELS: Readonly<Record<PeerVariant, string>> = {
  default: "llama-server (default build)",
  prebuilt: "llama-server (prebuilt-like)",
};

export interface PeerPaths {
  readonly build: string;
  readonly binary: string;
  /** What `bench/peer-build.ts` records next to the binary. */
  readonly info: string;
}

/** The prebuilt-like build keeps the folder and file it always had. */
export function peerPaths(variant: PeerVariant): PeerPaths {
  const build = join(PEER_DIR, variant === "prebuilt" ? "build" : "build-default");
  return {
    build,
    binary: join(build, "bin/llama-server"),
    info: join(PEER_DIR, variant === "prebuilt" ? "peer.json" : "peer-default.json"),
  };
}

/** What `bench/peer-build.ts` records next to the binary. */
export interface PeerInfo {
  readonly variant: PeerVariant;
  readonly commit: string;
  /** The ggml CPU variant the prebuilt-like build copies (e.g. zen4); "native" for the default build. */
  readonly cpuVariant: string;
  readonly cmakeOptions: Readonly<Record<string, string>>;
  readonly builtAt: string;
  readonly buildSeconds: number;
}

export function readPeerInfo(variant: PeerVariant): PeerInfo | undefined {
  const paths = peerPaths(variant);
  if (!existsSync(paths.binary) || !existsSync(paths.info)) return undefined;
  // peer.json files written before there were two builds have no `variant`.
  return { ...(JSON.parse(readFileSync(paths.info, "utf8")) as Omit<PeerInfo, "variant">), variant };
}

/** A comma-separated list of builds (`default,prebuilt`; `both` or `all` for every one), in PEER_VARIANTS' order. */
export function parsePeerVariants(raw: string, flag: string): PeerVariant[] {
  const names = raw
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  if (names.length === 0) throw new Error(`${flag}: name at least one of ${PEER_VARIANTS.join(", ")}`);
  for (const name of names) {
    if (name !== "both" && name !== "all" && !(PEER_VARIANTS as readonly string[]).includes(name)) {
      throw new Error(`${flag}: unknown build "${name}" (one of ${PEER_VARIANTS.join(", ")}, or both)`);
    }
  }
  const every = names.includes("both") || names.includes("all");
  return PEER_VARIANTS.filter((v) => every || names.includes(v));
}

/** The item of `items` that is build `variant`'s, by the name the tables give it (PEER_LABELS). */
export function findPeer<T>(items: readonly T[], variant: PeerVariant, name: (item: T) => string): T | undefined {
  return items.find((item) => name(item) === PEER_LABELS[variant]);
}

/** The llama-server ratios are against: the default build (what users build), else the prebuilt-like one. */
export function referencePeer<T>(items: readonly T[], name: (item: T) => string): T | undefined {
  for (const variant of PEER_VARIANTS) {
    const found = findPeer(items, variant, name);
    if (found) return found;
  }
  return undefined;
}
