// GET /lora-adapters: every LoRA adapter of the sidecars in llama-server's shape (`[{id, path, scale}]`, with its
// `name` and `parent`); POST /lora-adapters (admin): llama-server's `[{id, scale}]` sets the adapters' scales, on
// every sidecar that has them (docs/contract.md, "LoRA adapters").
import * as z from "zod";
import { requireAdmin } from "../../core/admin.js";
import { jsonResponse } from "../../core/answers.js";
import { readJsonBody } from "../../core/body.js";
import type { AppContext } from "../../core/context.js";
import { adapterOf, loraAdapterObjects, loraAdapters } from "../../core/lora.js";
import { parseRequest } from "../../core/validation.js";

const setScalesSchema = z.array(
  z.object({ id: z.union([z.number().int().min(0), z.string().min(1)]), scale: z.number().finite() }),
);

/** GET /lora-adapters */
export async function handleListLoraAdapters(request: Request, context: AppContext): Promise<Response> {
  return jsonResponse(loraAdapterObjects(await loraAdapters(context.sidecar, request.signal)));
}

/** POST /lora-adapters — every entry checked before any scale is set; answers `{"success": true}` as llama-server. */
export async function handleSetLoraAdapters(request: Request, context: AppContext): Promise<Response> {
  requireAdmin(request);
  const body = parseRequest(setScalesSchema, await readJsonBody(request, context.maxBodyBytes));
  const adapters = await loraAdapters(context.sidecar, request.signal);
  const changes = body.map((entry, i) => ({
    model: adapterOf(adapters, entry.id, `[${i}].id`).id,
    scale: entry.scale,
  }));
  for (const change of changes) await context.sidecar.setLoraScale(change, { signal: request.signal });
  return jsonResponse({ success: true });
}
