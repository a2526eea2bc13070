// The peers of a run: every llama-server build asked for (`--peers`) that is built, started side by
// side on the same settings. The default build comes first: ratios are against it, since that is
// the llama-server users build and compare with; the prebuilt-like build stands beside it.
import type { BenchFlags } from "./flags.js";
import { cpuBackend, peakRssMiB } from "./machine.js";
import { buildPeer } from "./peer-build.js";
import { PEER_LABELS, readPeerInfo, type PeerInfo, type PeerVariant } from "./peer-paths.js";
import { startPeer, type PeerSettings, type RunningPeer } from "./peer.js";
import type { ProcessInfo } from "./table.js";

/** A running peer and how the tables name it. */
export interface NamedPeer {
  readonly variant: PeerVariant;
  readonly label: string;
  readonly peer: RunningPeer;
}

/** The running peers of a section, stopped together. */
export interface PeerGroup {
  readonly peers: readonly NamedPeer[];
  stop(): Promise<void>;
}

/** The builds asked for that are built (or built now with `--peer`); a missing one is noted and skipped. */
export function peersFor(flags: BenchFlags, notes: string[], log: (m: string) => void): PeerInfo[] {
  if (flags.noPeer) {
    notes.push("llama-server: left out (--no-peer).");
    return [];
  }
  const found: PeerInfo[] = [];
  for (const variant of flags.peers) {
    const built = readPeerInfo(variant);
    if (built) found.push(built);
    else if (flags.peer) {
      log(
        `${PEER_LABELS[variant]} is not built yet: building it now (npm run bench:peer-build -- --variant ` +
          `${variant}, ~5-8 minutes)`,
      );
      found.push(buildPeer(variant));
    } else {
      const build = `npm run bench:peer-build -- --variant ${variant}`;
      const skip = `${PEER_LABELS[variant]}: SKIPPED — not built. Run \`${build}\` once (~5-8 minutes) or pass --peer.`;
      log(skip);
      notes.push(skip);
    }
  }
  return found;
}

/** Starts every peer in `infos` on `settings`, one after the other (each on a port of its own). */
export async function startPeers(
  infos: readonly PeerInfo[],
  settings: PeerSettings,
  log: (m: string) => void,
): Promise<PeerGroup> {
  const peers: NamedPeer[] = [];
  const stop = async (): Promise<void> => {
    await Promise.all(peers.map((p) => p.peer.stop()));
  };
  try {
    for (const info of infos) {
      const peer = await startPeer(info, settings);
      log(`${PEER_LABELS[info.variant]}: ${peer.args.join(" ")}`);
      peers.push({ variant: info.variant, label: PEER_LABELS[info.variant], peer });
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { peers, stop };
}

/** The peak resident set and the CPU backend each peer loaded, for the report's process table. */
export function peerProcesses(group: PeerGroup): ProcessInfo[] {
  return group.peers.map((p) => ({
    name: p.label,
    build: `${p.variant} build (${p.peer.info.cpuVariant}), ${cpuBackend(p.peer.pid) ?? "ggml CPU backend linked in"}`,
    peakRssMiB: peakRssMiB(p.peer.pid),
  }));
}
