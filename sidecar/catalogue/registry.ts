// The registry of loaded models: load on demand (one load per model however many requests wait
// for it), leases held by every call that uses a model, keep-alive after the last one, room made
// by `--models-max` and the memory budget (the least recently used idle model goes first; a load
// that needs a busy model's room waits), and a drain that stops loads and frees every model
// (docs/decisions.md, "Many models on one sidecar").
import { failedPrecondition, modelLoadFailed, notFound, overloaded, unavailable } from "../engine/engine-errors.js";
import { BATCH_QUEUE_LIMIT } from "../engine/llama/idle-capacity.js";
import { type LoadedModel, setAdapterScale } from "../engine/llama/model.js";
import { replySummary } from "../engine/llama/model-reply-syntax.js";
import { decide, freeRoom, NO_BYTES, type Bytes, type Resident } from "./budget.js";
import type { Catalogue, CatalogueEntry } from "./model-catalogue.js";
import type { Estimate, ModelFile } from "./estimate.js";
import type { Loader } from "./loader.js";
import { Slot, type ModelView } from "./slot.js";
import { Changes, until } from "./waiting.js";

export type RegistryEvent =
  | { readonly type: "loading"; readonly model: string }
  | { readonly type: "loaded"; readonly model: string; readonly ms: number; readonly replies: string }
  | { readonly type: "unloaded"; readonly model: string; readonly why: "idle" | "room" | "asked" | "stop" }
  | { readonly type: "failed"; readonly model: string; readonly reason: string };

export interface RegistryOptions {
  readonly catalogue: Catalogue;
  readonly loader: Loader;
  /** `--keep-alive` in seconds (-1: never); unset: 300, or never with one model in the catalogue. */
  readonly keepAliveSeconds?: number | undefined;
  /** `--models-max`. */
  readonly maxModels: number;
  /** Memory held outside the catalogue that free memory does not show (the embedding model's weights). */
  readonly reserved?: Bytes;
  readonly onEvent?: (event: RegistryEvent) => void;
  /** A model's load progress, 0..1. */
  readonly onProgress?: (model: string, fraction: number) => void;
}

/** A model held by one call; `release` (once, idempotent) when the call is done with it. */
export interface Lease {
  readonly model: LoadedModel;
  /** The catalogued name the call reached. */
  readonly name: string;
  release(): void;
}

export interface AcquireOptions {
  /** The caller's signal: a caller that leaves stops waiting for a load (CANCELLED). */
  readonly signal?: AbortSignal | undefined;
  /** The request's keep_alive_seconds: the model's keep-alive from now on. */
  readonly keepAliveSeconds?: number | undefined;
  /** A PRIORITY_BATCH call: it waits for a load outside the interactive limit (at most BATCH_QUEUE_LIMIT). */
  readonly batch?: boolean | undefined;
}

/** Keep-alive when none is set and the catalogue holds several models (Ollama's default). */
export const DEFAULT_KEEP_ALIVE_SECONDS = 300;

/** Events `history` keeps (the latest). */
const HISTORY = 1000;

/** A load given up because every request that wanted it left while it waited for room. */
class Abandoned extends Error {}

export class ModelRegistry {
  readonly catalogue: Catalogue;
  /** Loads, unloads and failures in order (the tests read it). */
  readonly history: RegistryEvent[] = [];
  readonly #options: RegistryOptions;
  readonly #slots = new Map<string, Slot>();
  readonly #drain = new AbortController();
  readonly #changes = new Changes();
  #clock = 0;
  /** When the catalogue was opened (Unix seconds): every model's `created`. */
  readonly created = Math.floor(Date.now() / 1000);

  constructor(options: RegistryOptions) {
    this.#options = options;
    this.catalogue = options.catalogue;
    const entries = options.catalogue.entries;
    const keepAlive = options.keepAliveSeconds ?? (entries.length === 1 ? -1 : DEFAULT_KEEP_ALIVE_SECONDS);
    for (const entry of entries) this.#slots.set(entry.name, new Slot(entry, keepAlive, options.loader.limits(entry)));
  }

  get draining(): boolean {
    return this.#drain.signal.aborted;
  }

  /**
   * The model a call names, held until `release`: loaded first when it is not (requests for a
   * loading model wait for that one load). NOT_FOUND for a name the catalogue does not reach,
   * INTERNAL with ModelLoadFailed when the load fails, UNAVAILABLE while draining,
   * RESOURCE_EXHAUSTED when too many wait for the load, CANCELLED when the caller leaves.
   */
  async acquire(name: string, options: AcquireOptions = {}): Promise<Lease> {
    if (this.draining) throw unavailable("the sidecar is shutting down");
    const slot = this.#slotFor(name);
    // Any negative value keeps the model loaded; ModelInfo says -1.
    if (options.keepAliveSeconds !== undefined) slot.keepAliveSeconds = Math.max(-1, options.keepAliveSeconds);
    while (slot.status !== "loaded") {
      if (slot.removed) throw notFound(`model "${slot.entry.name}" was deleted`);
      // Those that would get a sequence and those that would queue for one.
      const limits = slot.limits;
      const batch = options.batch === true ? 1 : 0;
      const [waiting, limit] =
        batch === 1
          ? [slot.batchWaiters, BATCH_QUEUE_LIMIT]
          : [slot.waiters - slot.batchWaiters, limits.sequences + limits.maxQueue];
      if (waiting >= limit) throw overloaded(`too many requests are waiting for model "${slot.entry.name}" to load`);
      slot.waiters++;
      slot.batchWaiters += batch;
      try {
        const pending: Promise<unknown> =
          slot.status === "unloading" && slot.unloading !== undefined ? slot.unloading : this.#startLoad(slot, false);
        await until(pending, this.#drain.signal, options.signal);
      } catch (error) {
        // Given up by the requests before this one: this one starts it again.
        if (!(error instanceof Abandoned)) throw error;
      } finally {
        slot.waiters--;
        slot.batchWaiters -= batch;
        this.#changed();
      }
      if (this.draining) throw unavailable("the sidecar is shutting down");
    }
    return this.#lease(slot, name);
  }

  /**
   * Sets the scale of the LoRA adapter `name` (SetLoraScale): at once when it is loaded, and at its loads after.
   * NOT_FOUND when no model has an adapter of that name.
   */
  async setLoraScale(name: string, scale: number): Promise<ModelView> {
    const found = this.catalogue.adapter(name);
    if (found === undefined) throw notFound(`no model has a LoRA adapter named "${name}"`);
    found.adapter.scale = scale;
    const slot = this.#slots.get(found.base.name) as Slot;
    const adapter = slot.loaded?.adapters.get(name);
    if (adapter !== undefined) await setAdapterScale(adapter, scale);
    return slot.view();
  }

  /** LoadModel: loads the model now (no-op when loaded) and answers once it is; the keep-alive counts from the load. */
  async load(name: string, options: AcquireOptions = {}): Promise<ModelView> {
    const slot = this.#slotNamed(name);
    // Not abandoned when the callers waiting for it leave (an unloading model is loaded again by acquire).
    if (slot.status !== "loaded" && slot.status !== "unloading" && !this.draining)
      void this.#startLoad(slot, true).catch(() => undefined);
    const lease = await this.acquire(slot.entry.name, options);
    lease.release();
    return slot.view();
  }

  /** UnloadModel: unloads the model once the requests using it are done (new ones wait for a load again). */
  async unload(name: string): Promise<ModelView> {
    if (this.draining) throw unavailable("the sidecar is shutting down");
    const slot = this.#slotNamed(name);
    await slot.loading?.catch(() => undefined);
    await this.#unload(slot, "asked");
    return slot.view();
  }

  /** Catalogues a local file while the sidecar runs (PullModel): a slot of its own, measured, not loaded. */
  async add(entry: CatalogueEntry): Promise<ModelView> {
    if (this.draining) throw unavailable("the sidecar is shutting down");
    this.catalogue.add(entry);
    const slot = new Slot(entry, DEFAULT_KEEP_ALIVE_SECONDS, this.#options.loader.limits(entry));
    this.#slots.set(entry.name, slot);
    this.#changed();
    await this.#measure(slot);
    return slot.view();
  }

  /**
   * Drops a model from the catalogue (DeleteModel): new requests for it are NOT_FOUND at once, and it is unloaded once
   * the requests using it are done. Resolves when its memory is freed; the --default-model is not removed.
   */
  async remove(name: string): Promise<ModelView> {
    if (this.draining) throw unavailable("the sidecar is shutting down");
    const slot = this.#slotNamed(name);
    if (slot.entry === this.catalogue.defaultEntry)
      throw failedPrecondition(`model "${slot.entry.name}" is the default model (--default-model)`);
    slot.removed = true;
    this.catalogue.remove(slot.entry.name);
    this.#slots.delete(slot.entry.name);
    slot.controller?.abort();
    await slot.loading?.catch(() => undefined);
    await this.#unload(slot, "asked");
    this.#changed();
    return slot.view();
  }

  /** Loads `names` in turn at start (--preload); a failure is the model's status, not the start's. */
  async preload(names: readonly string[]): Promise<void> {
    for (const name of names) await this.load(name).catch(() => undefined);
  }

  /** Every catalogued model, in catalogue order. */
  list(): ModelView[] {
    return [...this.#slots.values()].map((slot) => slot.view());
  }

  /** The model named `name` (or an alias of it); NOT_FOUND when the catalogue has none. */
  view(name: string): ModelView {
    return this.#slotNamed(name).view();
  }

  /** The models loaded now. */
  loaded(): LoadedModel[] {
    return [...this.#slots.values()].flatMap((slot) =>
      slot.status === "loaded" && slot.loaded !== undefined ? [slot.loaded] : [],
    );
  }

  /**
   * Reads every local file's header and estimate, so ListModels shows sizes before any load; errors wait for the load.
   */
  async survey(isLocal: (entry: CatalogueEntry) => boolean): Promise<void> {
    for (const slot of this.#slots.values()) {
      if (this.draining || slot.estimate !== undefined || !isLocal(slot.entry)) continue;
      await this.#measure(slot);
    }
  }

  /** A slot's header and estimate, before any load; errors wait for the load. */
  async #measure(slot: Slot): Promise<void> {
    try {
      const file = await this.#options.loader.read(await this.#options.loader.resolve(slot.entry, this.#drain.signal));
      const estimate = await this.#options.loader.estimate(slot.entry, file, await this.#room(slot));
      slot.estimate ??= estimate;
      slot.fileBytes = file.fileBytes;
    } catch {
      // The load says why, in the model's status.
    }
  }

  /** Refuses new calls (UNAVAILABLE), turns away the ones waiting for a load, and stops loads in progress. */
  beginDrain(): void {
    if (this.draining) return;
    this.#drain.abort(unavailable("the sidecar is shutting down"));
    for (const slot of this.#slots.values()) slot.controller?.abort();
    this.#changed();
  }

  /** Drains, waits for loads and unloads in progress, then frees every model. */
  async close(): Promise<void> {
    this.beginDrain();
    const slots = [...this.#slots.values()];
    await Promise.all(slots.map((slot) => slot.loading?.catch(() => undefined)));
    await Promise.all(slots.map((slot) => slot.unloading));
    for (const slot of slots) {
      slot.stopKeepAlive();
      const model = slot.loaded;
      if (model === undefined) continue;
      slot.loaded = undefined;
      slot.status = "available";
      await model.dispose();
      this.#record({ type: "unloaded", model: slot.entry.name, why: "stop" });
    }
  }

  #slotFor(name: string): Slot {
    const entry = this.catalogue.resolve(name);
    return this.#slots.get(entry.name) as Slot;
  }

  #slotNamed(name: string): Slot {
    const entry = this.catalogue.find(name);
    if (entry === undefined) throw notFound(`model "${name}" is not in the catalogue (${this.catalogue.names()})`);
    return this.#slots.get(entry.name) as Slot;
  }

  /** A lease of the slot's model, or of its adapter when `name` names one (a model of its own on the same weights). */
  #lease(slot: Slot, name: string): Lease {
    const base = slot.loaded as LoadedModel;
    const model = base.adapters.get(name) ?? base;
    slot.leases++;
    slot.lastUsed = ++this.#clock;
    slot.stopKeepAlive();
    let released = false;
    return {
      model,
      name: slot.entry.name,
      release: () => {
        if (released) return;
        released = true;
        slot.leases--;
        slot.lastUsed = ++this.#clock;
        if (slot.leases > 0) return;
        slot.startKeepAlive(() => void this.#unload(slot, "idle"));
        this.#changed();
      },
    };
  }

  /** The one load of a model: every caller gets the same promise. */
  #startLoad(slot: Slot, explicit: boolean): Promise<LoadedModel> {
    if (slot.loading !== undefined) {
      slot.explicit ||= explicit;
      return slot.loading;
    }
    Object.assign(slot, {
      status: "loading",
      progress: 0,
      failure: "",
      explicit,
      reserved: false,
      controller: new AbortController(),
    });
    const started = performance.now();
    slot.loading = this.#load(slot).then(
      (model) => this.#loaded(slot, model, started),
      (error: unknown) => this.#failed(slot, error),
    );
    // Nobody may be waiting for it any more (callers that left): no unhandled rejection.
    slot.loading.catch(() => undefined);
    return slot.loading;
  }

  async #load(slot: Slot): Promise<LoadedModel> {
    const signal = (slot.controller as AbortController).signal;
    const loader = this.#options.loader;
    const path = await loader.resolve(slot.entry, signal);
    const file = await loader.read(path);
    slot.fileBytes = file.fileBytes;
    const estimate = await this.#makeRoom(slot, file);
    this.#record({ type: "loading", model: slot.entry.name });
    const onProgress = (fraction: number): void => {
      slot.progress = fraction;
      this.#options.onProgress?.(slot.entry.name, fraction);
    };
    return loader.load(slot.entry, path, estimate, onProgress, signal);
  }

  /** Waits until the budget lets the model load, unloading the idle models it names; throws when it never will. */
  async #makeRoom(slot: Slot, file: ModelFile): Promise<Estimate> {
    for (;;) {
      if (this.draining) throw unavailable("the sidecar is shutting down");
      if (!slot.explicit && slot.waiters === 0) throw new Abandoned();
      const { free, total } = await this.#options.loader.memory();
      const reserved = this.#options.reserved ?? NO_BYTES;
      const estimate = await this.#options.loader.estimate(
        slot.entry,
        file,
        freeRoom(free, total, this.#residents(slot), reserved),
      );
      slot.estimate = estimate;
      // The residents again: others may have loaded or unloaded while this one estimated.
      const residents = this.#residents(slot);
      const decision = decide({
        candidate: { name: slot.entry.name, need: estimate.need },
        residents,
        free,
        total,
        maxModels: this.#options.maxModels,
        reserved,
      });
      if (decision.action === "refuse") throw new Error(decision.reason);
      if (decision.action === "load") {
        slot.reserved = true;
        await Promise.all(decision.unload.map((name) => this.#unload(this.#slots.get(name) as Slot, "room")));
        return estimate;
      }
      await until(this.#changes.next(), this.#drain.signal, undefined);
    }
  }

  /** Room for `slot` now (what an "auto" context is sized to). */
  async #room(slot: Slot): Promise<Bytes> {
    const { free, total } = await this.#options.loader.memory();
    return freeRoom(free, total, this.#residents(slot), this.#options.reserved ?? NO_BYTES);
  }

  #residents(except: Slot): Resident[] {
    return [...this.#slots.values()].flatMap((slot) => (slot === except ? [] : (slot.resident() ?? [])));
  }

  #loaded(slot: Slot, model: LoadedModel, started: number): LoadedModel {
    Object.assign(slot, {
      loading: undefined,
      controller: undefined,
      reserved: false,
      loaded: model,
      status: "loaded",
      progress: 1,
    });
    if (this.draining) {
      // Stopped while it loaded: close() frees it.
      return model;
    }
    this.#record({
      type: "loaded",
      model: slot.entry.name,
      ms: Math.round(performance.now() - started),
      replies: replySummary(model.replySyntax),
    });
    slot.lastUsed = ++this.#clock;
    // A timer, not at once: the requests that waited for the load take their leases first.
    slot.startKeepAlive(() => void this.#unload(slot, "idle"));
    this.#changed();
    return model;
  }

  #failed(slot: Slot, error: unknown): never {
    const reason = error instanceof Error ? error.message : String(error);
    const quiet = error instanceof Abandoned || this.draining;
    Object.assign(slot, {
      loading: undefined,
      controller: undefined,
      reserved: false,
      status: quiet ? "available" : "failed",
      failure: quiet ? "" : reason,
    });
    this.#changed();
    if (this.draining) throw unavailable("the sidecar is shutting down");
    if (quiet) throw error;
    this.#record({ type: "failed", model: slot.entry.name, reason });
    throw modelLoadFailed(slot.entry.name, reason);
  }

  /** Unloads a loaded model once nobody holds it; resolves when its memory is freed. */
  #unload(slot: Slot, why: "idle" | "room" | "asked"): Promise<void> {
    if (slot.status !== "loaded") return slot.unloading ?? Promise.resolve();
    slot.status = "unloading";
    slot.stopKeepAlive();
    slot.unloading = (async () => {
      while (slot.leases > 0) await this.#changes.next();
      try {
        await slot.loaded?.dispose();
      } finally {
        this.#record({ type: "unloaded", model: slot.entry.name, why });
      }
    })()
      .catch(() => {
        // A model that fails to free itself is gone from the catalogue's view all the same.
      })
      .finally(() => {
        Object.assign(slot, { loaded: undefined, unloading: undefined, status: "available" });
        this.#changed();
      });
    return slot.unloading;
  }

  #changed(): void {
    this.#changes.notify();
  }

  #record(event: RegistryEvent): void {
    this.history.push(event);
    if (this.history.length > HISTORY) this.history.shift();
    this.#options.onEvent?.(event);
  }
}
