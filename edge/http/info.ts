// GET /v1/info: what a client or gateway needs to know before its first request — the server,
// the models with their context length, the endpoints and protocols served, the limits, whether
// keys are required and whether the sidecar answers. No secrets (no keys, no sidecar address).
import { MAX_MEDIA_PARTS } from "../core/media/settings.js";
import type { AccessMode } from "../access/policy.js";
import type { AppContext } from "../core/context.js";
import { toApiError } from "../base/errors.js";
import { MAX_STOP_SEQUENCES, MAX_TOP_LOGPROBS } from "../fields/checks.js";
import { jsonResponse } from "../core/answers.js";
import { SERVER_NAME, SERVER_VERSION } from "../core/identity.js";
import { mergeCatalogues } from "../upstream/catalogue.js";

/** One served route, as /v1/info lists it. */
export interface RouteInfo {
  readonly method: "GET" | "POST" | "DELETE";
  readonly path: string;
  /** The API family: `openai`, `anthropic`, or `server` for discovery and health. */
  readonly protocol: "openai" | "anthropic" | "ollama" | "vllm" | "server";
}

/** With several sidecars: the union of models, and each sidecar by its id (never its address). */
async function severalStatus(context: AppContext) {
  const sidecars = await context.sidecars.status();
  const up = sidecars.filter((s) => s.status === "ok");
  const models = mergeCatalogues(up.map((s) => s.models));
  const each = sidecars.map((s) => ({
    id: s.id,
    status: s.status,
    models: s.models.map((m) => m.id),
    ...(s.message === undefined ? {} : { message: s.message }),
    requests: s.requests,
  }));
  const message = "no sidecar is reachable";
  return up.length === 0
    ? { status: "unavailable" as const, message, models, sidecars: each }
    : { status: "ok" as const, models, sidecars: each };
}

async function sidecarStatus(request: Request, context: AppContext) {
  if (context.sidecars.several) return severalStatus(context);
  try {
    const { models } = await context.sidecar.listModels(
      {},
      { signal: request.signal, timeoutMs: context.healthTimeoutMs },
    );
    return { status: "ok" as const, models };
  } catch (error) {
    return { status: "unavailable" as const, message: toApiError(error).message, models: [] };
  }
}

/** A model's speculative decoding (docs/configuration.md: `--spec-lookup`, `--model-draft`); null: none. */
function speculationOf(model: {
  speculation: string;
  draftMax: number;
  draftTokens: bigint;
  draftAcceptedTokens: bigint;
}) {
  if (model.speculation === "") return null;
  const drafted = Number(model.draftTokens);
  const accepted = Number(model.draftAcceptedTokens);
  return {
    type: model.speculation,
    draft_max: model.draftMax,
    drafted_tokens: drafted,
    accepted_tokens: accepted,
    acceptance_rate: drafted === 0 ? null : accepted / drafted,
  };
}

export async function handleInfo(
  request: Request,
  context: AppContext,
  routes: readonly RouteInfo[],
  access: AccessMode,
): Promise<Response> {
  const sidecar = await sidecarStatus(request, context);
  const [first] = sidecar.models;
  return jsonResponse(
    {
      object: "server.info",
      name: SERVER_NAME,
      version: SERVER_VERSION,
      protocols: [...new Set(routes.map((route) => route.protocol).filter((p) => p !== "server"))],
      endpoints: routes.map((route) => ({ method: route.method, path: route.path, protocol: route.protocol })),
      models: sidecar.models.map((model) => ({
        id: model.id,
        context_length: model.contextSize,
        sequences: model.sequences,
        architecture: model.architecture,
        engine_build: model.engineBuild,
        embedding_dimensions: model.embeddingDimensions,
        gpu: {
          type: model.gpu || null,
          devices: model.gpuDevices,
          vram_bytes: Number(model.vramBytes),
          layers_offloaded: model.gpuLayers,
          layers: model.modelLayers,
        },
        speculation: speculationOf(model),
        // Its fill-in-the-middle order ("prefix-suffix-middle", "suffix-prefix-middle"), or null: no FIM tokens.
        fill_in_middle: model.fillInMiddle || null,
        // What it reads: "text", and "image" once loaded with a projector (ModelInfo.modalities).
        modalities: ["text", ...model.modalities],
      })),
      limits: {
        max_body_bytes: context.maxBodyBytes,
        max_image_bytes: context.media.maxBytes,
        max_images: MAX_MEDIA_PARTS,
        image_urls_fetched: context.media.fetch,
        max_tokens: first?.contextSize ?? null,
        max_stop_sequences: MAX_STOP_SEQUENCES,
        max_top_logprobs: MAX_TOP_LOGPROBS,
        sequences: first?.sequences ?? null,
        max_queue: first?.maxQueue ?? null,
        queue_timeout_ms: first?.queueTimeoutMs ?? null,
      },
      auth: {
        api_key_required: access === "keys",
        mode: access,
        headers: ["authorization: Bearer <key>", "x-api-key: <key>"],
      },
      sidecar: sidecar.status === "ok" ? { status: "ok" } : { status: "unavailable", message: sidecar.message },
      ...("sidecars" in sidecar ? { sidecars: sidecar.sidecars } : {}),
    },
    200,
    { "cache-control": "no-store" },
  );
}
