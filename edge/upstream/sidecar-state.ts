// What the edge knows of one sidecar: its last report (models and load, from ListModels), whether
// it is down and until when, and its request counts. Kept in this process's (or isolate's) memory
// only: a cold isolate starts with every sidecar up and unreported, and learns by asking.
import type { ModelInfo } from "../../proto/gen/inference/v1/inference_pb.js";
import { findModel, names, statusRank } from "./catalogue.js";
import type { Sidecar, SidecarHealth } from "./connection.js";

/** How a routed call ended, as counted per sidecar. */
export type RouteOutcome = "ok" | "unavailable" | "busy" | "error";

export interface SidecarTarget {
  /** Its base URL: the name its rendezvous weights and its public id are made from. */
  readonly url: string;
  readonly client: Sidecar;
  /** Its grpc.health.v1 service: asked first when a down sidecar is checked (without it, ListModels alone). */
  readonly health?: SidecarHealth | undefined;
}

export class SidecarState {
  /** A short digest of the URL: names the sidecar in /v1/info, /health and metrics (never the URL). */
  id = "";
  /** The models of its last successful report. */
  models: readonly ModelInfo[] = [];
  /** When that report arrived (ms); 0: never. */
  reportedAt = 0;
  /** Generations this edge sent it since that report (load the report cannot show yet). */
  sentSinceReport = 0;
  /** Failures in a row; the backoff doubles with each. */
  failures = 0;
  /** Down until this time (ms); then the next report is its health check. */
  downUntil = 0;
  /** The last failure's message (a sidecar's own message, never a secret). */
  lastError: string | undefined;
  /** Calls routed to it in this process, by outcome. */
  readonly outcomes: Record<RouteOutcome, number> = { ok: 0, unavailable: 0, busy: 0, error: 0 };
  /** A report on its way, shared by everyone who needs it. */
  refreshing: Promise<void> | undefined;

  constructor(
    readonly index: number,
    readonly url: string,
    readonly client: Sidecar,
    readonly health: SidecarHealth | undefined,
  ) {}

  /** Down from a failure until a health check (its next report, after the backoff) succeeds. */
  get down(): boolean {
    return this.failures > 0;
  }

  /** Whether its last report lists `model` in its catalogue (by id or alias), whatever its status. */
  serves(model: string): boolean {
    return this.models.some((m) => names(m, model));
  }

  /** Where `model` is here, as catalogue.ts ranks statuses (0: loaded); "" ranks every sidecar 0. */
  rank(model: string): number {
    if (model === "") return 0;
    const info = findModel(this.models, model);
    return info === undefined ? Number.POSITIVE_INFINITY : statusRank(info);
  }

  /** Takes in what a LoadModel or UnloadModel call answered, ahead of the next report. */
  update(model: ModelInfo): void {
    this.models = this.models.map((m) => (m.id === model.id ? model : m));
  }

  /** Takes in a model PullModel catalogued, ahead of the next report. */
  added(model: ModelInfo): void {
    this.models = [...this.models.filter((m) => m.id !== model.id), model];
  }

  /** Forgets a model DeleteModel dropped, ahead of the next report. */
  removed(id: string): void {
    this.models = this.models.filter((m) => m.id !== id);
  }

  /** (active + queued + sent since the report) per sequence, for `model` (or all its models). */
  load(model: string): number {
    const infos = this.models.filter((m) => model === "" || names(m, model));
    const sequences = infos.reduce((sum, m) => sum + m.sequences, 0);
    const busy = infos.reduce((sum, m) => sum + m.active + m.queued, 0) + this.sentSinceReport;
    return busy / Math.max(1, sequences);
  }
}
