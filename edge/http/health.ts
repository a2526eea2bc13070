// GET /health: 200 when the sidecar answers ListModels in time, else 503. With several sidecars:
// each one's state, 200 while at least one is up ("degraded" when not all are).
import type { AppContext } from "../core/context.js";
import { toApiError } from "../base/errors.js";

function json(body: unknown, status: number): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", "cache-control": "no-store" },
  });
}

async function severalHealth(context: AppContext): Promise<Response> {
  const sidecars = await context.sidecars.status();
  const up = sidecars.filter((s) => s.status === "ok");
  const status = up.length === 0 ? "unavailable" : up.length < sidecars.length ? "degraded" : "ok";
  const models = [...new Set(up.flatMap((s) => s.models.map((m) => m.id)))];
  const each = sidecars.map((s) => ({
    id: s.id,
    status: s.status,
    models: s.models.map((m) => m.id),
    ...(s.message === undefined ? {} : { message: s.message }),
  }));
  return json(
    { status: up.length === 0 ? "unavailable" : "ok", sidecar: status, models, sidecars: each },
    up.length === 0 ? 503 : 200,
  );
}

export async function handleHealth(request: Request, context: AppContext): Promise<Response> {
  if (context.sidecars.several) return severalHealth(context);
  try {
    const { models } = await context.sidecar.listModels(
      {},
      { signal: request.signal, timeoutMs: context.healthTimeoutMs },
    );
    return json({ status: "ok", sidecar: "ok", models: models.map((m) => m.id) }, 200);
  } catch (error) {
    return json({ status: "unavailable", sidecar: "unavailable", message: toApiError(error).message }, 503);
  }
}
