// The sidecars behind this edge (SIDECAR_URLS) and how one is picked for a request
// (docs/decisions.md, "Several sidecars behind one edge", "Routing by catalogue"): those whose
// catalogue holds the model, those that have it loaded first, then loading, available, failed;
// within each, the rendezvous order of the request's affinity key, else the least loaded first.
// What each serves and its load come from its own ListModels report, asked again when older than
// `reportTtlMs`. A sidecar that fails is down for a backoff that doubles with each failure in a
// row; after it, its next report is the health check that brings it back. With one sidecar
// nothing is asked or excluded: every call goes to it, as before.
import { Code, ConnectError } from "@connectrpc/connect";
import { HealthCheckResponse_ServingStatus } from "../../proto/gen/grpc/health/v1/health_pb.js";
import { InferenceService, ModelLoadFailedSchema, type ModelInfo } from "../../proto/gen/inference/v1/inference_pb.js";
import type { SidecarHealth } from "./connection.js";
import { NotFoundError, ServiceUnavailableError } from "../base/errors.js";
import { sequencesOf } from "./catalogue.js";
import { rendezvousOrder, sha256Hex } from "./rendezvous.js";
import { SidecarState, type RouteOutcome, type SidecarTarget } from "./sidecar-state.js";

export interface PoolOptions {
  /** How long a report is trusted; default 1000 ms. */
  readonly reportTtlMs?: number;
  /** The first backoff after a failure; default 500 ms, doubled per failure in a row. */
  readonly backoffMs?: number;
  /** The longest backoff; default 30000 ms. */
  readonly maxBackoffMs?: number;
  /** How long a report (the health check) may take; default 2000 ms. */
  readonly checkTimeoutMs?: number;
  /** The current time in ms; default Date.now. */
  readonly now?: () => number;
  /** Told of every routed call's outcome (the Node edge's metrics count them). */
  readonly onOutcome?: (sidecarId: string, outcome: RouteOutcome) => void;
}

/** One sidecar as /health and /v1/info show it: no address, no credentials. */
export interface SidecarStatus {
  readonly id: string;
  readonly status: "ok" | "down";
  readonly models: readonly ModelInfo[];
  readonly message?: string;
  readonly requests: Readonly<Record<RouteOutcome, number>>;
}

export class SidecarPool {
  readonly states: readonly SidecarState[];
  readonly #options: Required<Omit<PoolOptions, "onOutcome">> & Pick<PoolOptions, "onOutcome">;
  readonly #ids: Promise<void>;

  constructor(targets: readonly SidecarTarget[], options: PoolOptions = {}) {
    if (targets.length === 0) throw new Error("at least one sidecar is needed");
    this.states = targets.map((t, i) => new SidecarState(i, t.url, t.client, t.health));
    this.#options = {
      reportTtlMs: 1000,
      backoffMs: 500,
      maxBackoffMs: 30_000,
      checkTimeoutMs: 2000,
      now: Date.now,
      ...options,
    };
    this.#ids = Promise.all(this.states.map(async (s) => (s.id = (await sha256Hex(s.url)).slice(0, 12)))).then(
      () => undefined,
    );
  }

  get several(): boolean {
    return this.states.length > 1;
  }

  /**
   * Refreshes the reports that are stale, and checks down sidecars whose backoff is over. `wait`
   * "all" waits for every report on its way; "cold" only for sidecars that never reported (a
   * call then routes on the reports it has while newer ones come, so a sidecar slow to answer
   * its check delays no call).
   */
  async refresh(wait: "all" | "cold" = "all"): Promise<void> {
    await this.#ids;
    const now = this.#options.now();
    const asked = this.states.map((s) => {
      // Up: a report older than the TTL is asked again; down: the check is due when its backoff ends.
      const due = s.down ? now >= s.downUntil : now - s.reportedAt >= this.#options.reportTtlMs;
      const report = due ? this.#report(s) : s.refreshing;
      return wait === "all" || (s.reportedAt === 0 && !s.down) ? report : undefined;
    });
    await Promise.all(asked);
  }

  #report(state: SidecarState): Promise<void> {
    if (state.refreshing !== undefined) return state.refreshing;
    const timeoutMs = this.#options.checkTimeoutMs;
    // A down sidecar's check: the standard health service first (SERVING), then its report.
    const checked = state.down && state.health !== undefined ? serving(state.health, timeoutMs) : Promise.resolve();
    state.refreshing = checked
      .then(() => state.client.listModels({}, { timeoutMs }))
      .then(
        ({ models }) => {
          [state.models, state.reportedAt, state.sentSinceReport, state.failures, state.lastError] = [
            models,
            this.#options.now(),
            0,
            0,
            undefined,
          ];
        },
        (error: unknown) => this.markDown(state, error),
      )
      .finally(() => (state.refreshing = undefined));
    return state.refreshing;
  }

  /**
   * Marks `state` down for its backoff (only when there are several: one sidecar is always tried).
   * Calls that were already on their way when it went down fail too: they do not lengthen it.
   */
  markDown(state: SidecarState, error: unknown): void {
    if (!this.several) return;
    const now = this.#options.now();
    state.lastError = ConnectError.from(error).rawMessage;
    if (state.down && now < state.downUntil) return;
    state.failures += 1;
    state.downUntil = now + Math.min(this.#options.maxBackoffMs, this.#options.backoffMs * 2 ** (state.failures - 1));
  }

  /** Counts a routed call's outcome. */
  note(state: SidecarState, outcome: RouteOutcome): void {
    state.outcomes[outcome] += 1;
    this.#options.onOutcome?.(state.id, outcome);
  }

  /**
   * Adds a call about to be sent to `state`'s load, so that requests that arrive together spread
   * before any report can show them. The returned function takes it back when the call fails or
   * ends; a report that came in between already counts the call (or its end), so then it does nothing.
   */
  reserve(state: SidecarState): () => void {
    state.sentSinceReport += 1;
    const at = state.reportedAt;
    let released = false;
    return () => {
      if (released || state.reportedAt !== at) return;
      released = true;
      state.sentSinceReport = Math.max(0, state.sentSinceReport - 1);
    };
  }

  /**
   * The sidecars to try for `model`, best first: the rendezvous order for `key`, else by load.
   * NotFoundError when no sidecar serves the model; ServiceUnavailableError when the ones that
   * did are all down (or none has reported).
   */
  async candidates(model: string, key?: string): Promise<SidecarState[]> {
    await this.#reported();
    return this.#ordered(model, key);
  }

  /**
   * The candidates, the first one reserved (its load counts the call at once, in the same
   * synchronous step as the choice, so choices made together see each other — calls a burst makes
   * in one turn too); `release` takes the reservation back.
   */
  async pick(model: string, key?: string): Promise<{ ordered: SidecarState[]; release: () => void }> {
    await this.#reported();
    // Ordered by load: chosen and reserved with no turn between (by key, the order ignores load).
    const found = this.#ordered(model, key);
    const ordered = Array.isArray(found) ? found : await found;
    const [first] = ordered;
    return { ordered, release: first === undefined || !this.several ? () => undefined : this.reserve(first) };
  }

  /** Waits for the sidecars' ids and, with several, for reports not too old to choose by. */
  async #reported(): Promise<void> {
    await this.#ids;
    if (this.several) await this.refresh("cold");
  }

  #ordered(model: string, key: string | undefined): SidecarState[] | Promise<SidecarState[]> {
    if (!this.several) return [...this.states];
    const up = this.states.filter((s) => !s.down);
    // A LoRA adapter is a model of its own name, but not one that makes "one model everywhere" several.
    const ids = new Set(this.states.flatMap((s) => s.models.filter((m) => m.kind !== "lora").map((m) => m.id)));
    const known = this.states.some((s) => s.serves(model));
    // As with one sidecar: no name, or one model everywhere, reaches any sidecar.
    const anyModel = model === "" || (ids.size === 1 && !known);
    const serving = up.filter((s) => anyModel || s.serves(model));
    if (serving.length === 0) throw this.#none(model, anyModel || known || up.length < this.states.length);
    // The model's status on each sidecar ranks it: loaded, loading, available, failed (catalogue.ts).
    const name = anyModel ? (ids.size === 1 ? ([...ids][0] ?? "") : "") : model;
    if (key !== undefined) return byTier(serving, name, (tier) => rendezvousOrder(key, tier, (s) => s.url));
    return serving
      .map((s) => ({ s, tier: s.rank(name), load: s.load(name) }))
      .sort((a, b) => a.tier - b.tier || a.load - b.load || a.s.index - b.s.index)
      .map(({ s }) => s);
  }

  #none(model: string, someDown: boolean): Error {
    if (someDown) {
      const why = this.states.map((s) => s.lastError).find((m) => m !== undefined);
      return new ServiceUnavailableError(
        `No inference sidecar serving '${model}' is reachable${why === undefined ? "" : ` (last error: ${why})`}.`,
        {
          code: "service_unavailable",
        },
      );
    }
    return new NotFoundError(`The model '${model}' does not exist.`, { param: "model", code: "model_not_found" });
  }

  /**
   * The sidecar with this public id (what a stream id can carry, so that a later call about that
   * stream reaches the sidecar that holds it), or undefined.
   */
  async byId(id: string): Promise<SidecarState | undefined> {
    await this.#ids;
    return this.states.find((s) => s.id === id);
  }

  /**
   * The most sequences a sidecar up has for `model` (the most choices one request may ask for),
   * from the ListModels reports, asked again when stale (with one sidecar too); undefined when no
   * report gives a count for it (then the sidecar's own check decides).
   */
  async sequencesFor(model: string): Promise<number | undefined> {
    await this.refresh();
    const counts = this.states.flatMap((s) => {
      const sequences = s.down ? undefined : sequencesOf(s.models, model);
      return sequences === undefined ? [] : [sequences];
    });
    return counts.length === 0 ? undefined : Math.max(...counts);
  }

  /** Every sidecar's state after a refresh, for /health and /v1/info. */
  async status(): Promise<SidecarStatus[]> {
    await this.refresh();
    return this.states.map((s) => ({
      id: s.id,
      status: s.down ? ("down" as const) : ("ok" as const),
      models: s.down ? [] : s.models,
      ...(s.down && s.lastError !== undefined ? { message: s.lastError } : {}),
      requests: { ...s.outcomes },
    }));
  }
}

/**
 * The sidecars grouped by the status of `model` on each (loaded first, failed last), each group
 * put in order by `order`: affinity applies among the sidecars where the model stands the same.
 */
async function byTier(
  states: readonly SidecarState[],
  model: string,
  order: (tier: SidecarState[]) => Promise<SidecarState[]>,
): Promise<SidecarState[]> {
  const tiers = new Map<number, SidecarState[]>();
  for (const s of states) tiers.set(s.rank(model), [...(tiers.get(s.rank(model)) ?? []), s]);
  const ranked = [...tiers.entries()].sort(([a], [b]) => a - b);
  return (await Promise.all(ranked.map(([, tier]) => order(tier)))).flat();
}

/** Resolves when grpc.health.v1 says the inference service is SERVING; else rejects with UNAVAILABLE. */
async function serving(health: SidecarHealth, timeoutMs: number): Promise<void> {
  const { status } = await health.check({ service: InferenceService.typeName }, { timeoutMs });
  if (status !== HealthCheckResponse_ServingStatus.SERVING) {
    throw new ConnectError(
      `the sidecar's health check says ${HealthCheckResponse_ServingStatus[status]}`,
      Code.Unavailable,
    );
  }
}

/**
 * Whether a failure before `start` should send the request to the next candidate, and why: a
 * model that failed to load on one sidecar may load on another (its memory, its files).
 */
export function failoverReason(error: unknown): "unavailable" | "busy" | "load_failed" | undefined {
  if (!(error instanceof ConnectError)) return undefined;
  if (error.code === Code.Unavailable) return "unavailable";
  if (error.code === Code.ResourceExhausted) return "busy";
  if (error.code === Code.Internal && error.findDetails(ModelLoadFailedSchema).length > 0) return "load_failed";
  return undefined;
}

/** How a failed call counts per sidecar: a load failure is an `error` (it failed over all the same). */
export function outcomeOf(reason: ReturnType<typeof failoverReason>): RouteOutcome {
  return reason === "unavailable" || reason === "busy" ? reason : "error";
}
