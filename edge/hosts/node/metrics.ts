// The Node edge's own metrics (Prometheus text through prom-client) at GET /metrics: calls routed
// to each sidecar, by outcome. A sidecar is named by its id (a digest of its URL, as /v1/info
// shows it), never by its address. The endpoint is admitted like the API (keys, loopback-only).
import { Counter, Registry } from "prom-client";
import type { App } from "../../http/app.js";
import type { RouteOutcome } from "../../upstream/sidecar-state.js";

export interface EdgeMetrics {
  readonly registry: Registry;
  /** Counts one routed call (the pool's `onOutcome`). */
  readonly count: (sidecarId: string, outcome: RouteOutcome) => void;
}

export function createEdgeMetrics(): EdgeMetrics {
  const registry = new Registry();
  const requests = new Counter({
    name: "edge_sidecar_requests_total",
    help:
      "Generations this edge sent to each sidecar, by outcome: ok (accepted), unavailable (unreachable or draining: " +
      "failed " +
      "over), busy (queue full: failed over), error (refused).",
    labelNames: ["sidecar", "outcome"] as const,
    registers: [registry],
  });
  return { registry, count: (sidecar, outcome) => requests.inc({ sidecar, outcome }) };
}

/** Answers GET /metrics from `metrics` for callers the app admits; everything else goes to `next`. */
export function withMetrics(
  metrics: EdgeMetrics,
  app: App,
  next: (request: Request) => Promise<Response>,
): (request: Request) => Promise<Response> {
  return async (request) => {
    const url = new URL(request.url);
    if (request.method !== "GET" || url.pathname !== "/metrics") return next(request);
    try {
      await app.access.admit(request, url);
    } catch {
      return next(request); // the app answers the refusal in its own shape
    }
    return new Response(await metrics.registry.metrics(), {
      headers: { "content-type": metrics.registry.contentType, "cache-control": "no-store" },
    });
  };
}
