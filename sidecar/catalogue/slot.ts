// One catalogued model's place in the registry: where it is (available, loading with progress,
// loaded, unloading, failed with the reason), the requests holding it or waiting for it, when it
// was last used, and its keep-alive timer.
import type { LoadedModel } from "../engine/llama/model.js";
import type { Bytes, Resident } from "./budget.js";
import { NO_BYTES } from "./budget.js";
import type { CatalogueEntry } from "./model-catalogue.js";
import type { Estimate } from "./estimate.js";

/** The settings a model loads with (its preset over the flags): what ListModels shows before the load. */
export interface ModelLimits {
  readonly contextSize: number | "auto";
  readonly sequences: number;
  readonly maxQueue: number;
  readonly queueTimeoutMs: number;
}

export type SlotStatus = "available" | "loading" | "loaded" | "unloading" | "failed";

/** What ListModels, the metrics and the start line read of one model. */
export interface ModelView {
  readonly entry: CatalogueEntry;
  readonly limits: ModelLimits;
  /** An unloading model is still "loaded" until its memory is freed (without `loaded`). */
  readonly status: "available" | "loading" | "loaded" | "failed";
  /** While loading: 0..1. */
  readonly progress: number;
  /** When failed: why. */
  readonly failure: string;
  readonly loaded: LoadedModel | undefined;
  /** Its estimate (the last one made), or undefined before its file was read. */
  readonly estimate: Estimate | undefined;
  readonly fileBytes: number;
  /** Seconds it stays loaded once idle; -1: for ever. */
  readonly keepAliveSeconds: number;
  /** When loaded and idle with a keep-alive: the time (ms since the epoch) it will be unloaded; else 0. */
  readonly expiresAt: number;
  /** Requests using it or waiting for it. */
  readonly requests: number;
}

export class Slot {
  readonly entry: CatalogueEntry;
  readonly limits: ModelLimits;
  status: SlotStatus = "available";
  loaded: LoadedModel | undefined;
  /** The load in progress (one per model: every request for it waits on this one). */
  loading: Promise<LoadedModel> | undefined;
  unloading: Promise<void> | undefined;
  /** Aborts the load in progress (the sidecar stops). */
  controller: AbortController | undefined;
  /** Whether a LoadModel call or --preload asked for the load in progress (it is not abandoned without waiters). */
  explicit = false;
  /** Whether the load in progress has its room (its need counts against the budget). */
  reserved = false;
  progress = 0;
  failure = "";
  /** Dropped from the catalogue (DeleteModel): no load starts again. */
  removed = false;
  estimate: Estimate | undefined;
  fileBytes = 0;
  /** Requests holding the model. */
  leases = 0;
  /** Requests waiting for it to load. */
  waiters = 0;
  /** Of those, PRIORITY_BATCH calls (not counted against `limits`: GenerateRequest.priority). */
  batchWaiters = 0;
  lastUsed = 0;
  keepAliveSeconds: number;
  expiresAt = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(entry: CatalogueEntry, keepAliveSeconds: number, limits: ModelLimits) {
    this.entry = entry;
    this.limits = limits;
    this.keepAliveSeconds = keepAliveSeconds;
  }

  /** Starts the keep-alive timer of a loaded model nobody uses: `unload` runs when it expires (at once for 0). */
  startKeepAlive(unload: () => void): void {
    this.stopKeepAlive();
    if (this.status !== "loaded" || this.leases > 0 || this.keepAliveSeconds < 0) return;
    const ms = this.keepAliveSeconds * 1000;
    this.expiresAt = Date.now() + ms;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.expiresAt = 0;
      if (this.status === "loaded" && this.leases === 0) unload();
    }, ms);
    this.#timer.unref();
  }

  stopKeepAlive(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.expiresAt = 0;
  }

  /** The model as the budget sees it, or undefined when it holds no memory. */
  resident(): Resident | undefined {
    const need = this.estimate?.need ?? NO_BYTES;
    const name = this.entry.name;
    if (this.status === "loading" && this.reserved)
      return { name, need, hidden: need, state: "loading", lastUsed: this.lastUsed };
    if (this.status !== "loaded" && this.status !== "unloading") return undefined;
    // Memory-mapped weights stay in the page cache, which free memory counts as free.
    const hidden: Bytes = { ram: this.estimate?.weights.ram ?? 0, vram: 0 };
    const state = this.status === "loaded" && this.leases === 0 ? "idle" : "busy";
    return { name, need, hidden, state, lastUsed: this.lastUsed };
  }

  view(): ModelView {
    return {
      entry: this.entry,
      limits: this.limits,
      status: this.status === "unloading" ? "loaded" : this.status,
      progress:
        this.status === "loading" ? this.progress : this.status === "available" || this.status === "failed" ? 0 : 1,
      failure: this.status === "failed" ? this.failure : "",
      // An unloading model's objects are being freed: nothing may read them.
      loaded: this.status === "unloading" ? undefined : this.loaded,
      estimate: this.estimate,
      fileBytes: this.fileBytes,
      keepAliveSeconds: this.keepAliveSeconds,
      expiresAt: this.expiresAt,
      requests: this.leases + this.waiters,
    };
  }
}
