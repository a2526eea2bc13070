// The model that answered a request whose body named none: the sidecar's first model (with one
// served, any name reaches it). Used by the endpoints whose RPC answer carries no model name.
import type { AppContext } from "./context.js";

export async function servedModel(request: Request, context: AppContext): Promise<string> {
  const { models } = await context.sidecar.listModels({}, { signal: request.signal });
  return models[0]?.id ?? "";
}
