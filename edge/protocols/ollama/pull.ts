// POST /api/pull for a catalogued model: makes it ready as a pull would, by loading it (a model whose
// source is remote, `hf:` or a URL in the catalogue, is downloaded by its first load). Streamed (the
// default) as Ollama's progress lines, `{"status", "total", "completed"}` while it loads, then
// `{"status": "success"}`; with `stream: false`, that last line alone. A name the catalogue does not
// hold is a 404; an address (`hf:…`, `https://…`) a 400: adding models at run time is not served.
import * as z from "zod";
import type { ModelInfo } from "../../../proto/gen/inference/v1/inference_pb.js";
import { InvalidRequestError, NotFoundError, toApiError } from "../../base/errors.js";
import { jsonResponse } from "../../core/answers.js";
import { readJsonBody } from "../../core/body.js";
import type { AppContext } from "../../core/context.js";
import { withProtocolHeaders } from "../../core/protocol-family.js";
import { parseRequest } from "../../core/validation.js";
import { sseResponse } from "../../sse/stream-response.js";
import { findModel } from "../../upstream/catalogue.js";
import { ollamaModelName, ollamaTag } from "./names.js";
import { ollamaProtocol } from "./protocol.js";

/** How often a pull's progress is read from the catalogue. */
const PROGRESS_MS = 250;

const pullSchema = z
  .object({ model: z.string().nullish(), name: z.string().nullish(), stream: z.boolean().nullish() })
  .refine((b) => (b.model ?? b.name ?? "") !== "", { error: "a model is required", path: ["model"] });

const line = (value: object) => `${JSON.stringify(value)}\n`;

async function* progress(model: ModelInfo, loading: Promise<unknown>, context: AppContext, signal: AbortSignal) {
  const status = `pulling ${ollamaTag(model.id)}`;
  const total = Number(model.fileBytes);
  yield line({ status });
  const done = loading.then(() => true);
  for (;;) {
    const finished = await Promise.race([done, new Promise<false>((r) => setTimeout(() => r(false), PROGRESS_MS))]);
    if (finished) break;
    const now = findModel((await context.sidecar.listModels({}, { signal })).models, model.id);
    yield line({ status, digest: "", total, completed: Math.round((now?.loadProgress ?? 0) * total) });
  }
  yield line({ status, digest: "", total, completed: total });
  yield line({ status: "success" });
}

async function* orError(lines: AsyncGenerator<string>) {
  try {
    yield* lines;
  } catch (error) {
    yield line({ error: toApiError(error).message });
  }
}

/** POST /api/pull */
export function handleOllamaPull(request: Request, context: AppContext): Promise<Response> {
  return withProtocolHeaders(ollamaProtocol, context, request, async () => {
    const body = parseRequest(pullSchema, await readJsonBody(request, context.maxBodyBytes));
    const name = body.model ?? body.name ?? "";
    if (/^(hf:|huggingface:|https?:\/\/)/i.test(name)) {
      throw new InvalidRequestError("pulling by address is not served: add the model to the sidecar's catalogue", {
        param: "model",
      });
    }
    const { models } = await context.sidecar.listModels({}, { signal: request.signal });
    const model = findModel(models, ollamaModelName(name));
    if (model === undefined) throw new NotFoundError(`model '${name}' not found`, { param: "model" });
    if (body.stream === false) {
      await context.sidecar.loadModel({ model: model.id }, { signal: request.signal });
      return jsonResponse({ status: "success" });
    }
    const abort = new AbortController();
    const loading = context.sidecar.loadModel({ model: model.id }, { signal: abort.signal });
    loading.catch(() => undefined); // read by the stream
    const lines = orError(progress(model, loading, context, abort.signal));
    return sseResponse(lines, {
      onCancel: () => abort.abort(),
      headers: { "content-type": "application/x-ndjson" },
    });
  });
}
