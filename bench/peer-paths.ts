// Where the peer (llama-server built from node-llama-cpp's bundled llama.cpp source) lives.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("..", import.meta.url));
export const PEER_DIR = join(ROOT, ".cache/llama.cpp");
export const PEER_SOURCE = join(PEER_DIR, "src");
export const PEER_BUILD = join(PEER_DIR, "build");
export const PEER_BINARY = join(PEER_BUILD, "bin/llama-server");
export const PEER_INFO = join(PEER_DIR, "peer.json");

/** What `bench/peer-build.ts` records next to the binary. */
export interface PeerInfo {
  readonly commit: string;
  readonly cpuVariant: string;
  readonly cmakeOptions: Readonly<Record<string, string>>;
  readonly builtAt: string;
  readonly buildSeconds: number;
}

export function readPeerInfo(): PeerInfo | undefined {
  if (!existsSync(PEER_BINARY) || !existsSync(PEER_INFO)) return undefined;
  return JSON.parse(readFileSync(PEER_INFO, "utf8")) as PeerInfo;
}
