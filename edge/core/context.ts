// What every route handler receives: the sidecar and the app's settings.
import type { SidecarPool } from "../upstream/pool.js";
import type { Arriving } from "./arriving.js";
import type { Sidecar } from "../upstream/connection.js";
import type { MediaSettings } from "./media/settings.js";

export interface AppContext {
  /** The sidecars as one: Tokenize and Detokenize routed by model, ListModels their union. */
  readonly sidecar: Sidecar;
  /** Every sidecar, their reports and the routing of generations (edge/upstream/). */
  readonly sidecars: SidecarPool;
  /** Generation requests between their arrival and their sidecar call (arriving.ts). */
  readonly arriving: Arriving;
  /** Largest accepted request body, in bytes. */
  readonly maxBodyBytes: number;
  /** Images in requests: their limits, fetching by URL, the Files API's files (core/media/). */
  readonly media: MediaSettings;
  /** A fresh random suffix for response ids (`chatcmpl-<id>`). */
  readonly newId: () => string;
  /** The current time in milliseconds since the Unix epoch. */
  readonly now: () => number;
  /** Silence after which a started stream gets a `: ping` comment; 0 disables. */
  readonly keepAliveMs: number;
  /**
   * Non-streaming answers not ready after this long commit to 200 and write a space this often,
   * so a client that left is noticed where only a write shows it (workerd); 0: off.
   */
  readonly abandonProbeMs: number;
  /** A sidecar that sends nothing (not even a heartbeat) for this long is taken as stalled; 0: never. */
  readonly sidecarStallMs: number;
  /** How long /health waits for the sidecar's ListModels. */
  readonly healthTimeoutMs: number;
  /** Reports a failure that is a bug in the edge (not a client or sidecar error). */
  readonly reportUnexpected: (error: unknown) => void;
}
