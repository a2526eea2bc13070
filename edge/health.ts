// GET /health: 200 when the sidecar answers ListModels in time, else 503.
import type { AppContext } from "./context.js";
import { toApiError } from "./errors.js";

function json(body: unknown, status: number): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", "cache-control": "no-store" },
  });
}

export async function handleHealth(request: Request, context: AppContext): Promise<Response> {
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
