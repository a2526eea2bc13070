// POST /api/pull and DELETE /api/delete. A pull of a catalogued name makes it ready by loading it (a model whose
// source is remote is downloaded by its first load); a pull by address (`hf.co/<user>/<repo>:<quant>` as Ollama's
// clients write it, `hf:…`, an http(s) URL) needs an admin key: every sidecar downloads the file into its models
// folder and catalogues it under its file name, the address as written reaching it too. Streamed (the default) as
// Ollama's progress lines — `pulling manifest`, `{"status", "digest", "total", "completed"}` while it goes, then
// `{"status": "success"}`; with `stream: false`, that last line alone. A name the catalogue does not hold is a
// 404. A delete (admin key) removes a model whose file is in the models folder: 200 with no body.
import * as z from "zod";
import type { ModelInfo, PullProgress } from "../../../proto/gen/inference/v1/inference_pb.js";
import { NotFoundError, toApiError } from "../../base/errors.js";
import { jsonResponse } from "../../core/answers.js";
import { requireAdmin } from "../../core/admin.js";
import { readJsonBody } from "../../core/body.js";
import type { AppContext } from "../../core/context.js";
import { withProtocolHeaders } from "../../core/protocol-family.js";
import { parseRequest } from "../../core/validation.js";
import { sseResponse } from "../../sse/stream-response.js";
import { findModel } from "../../upstream/catalogue.js";
import { modelAddress, ollamaModelName, ollamaTag } from "./names.js";
import { ollamaProtocol } from "./protocol.js";

/** How often a pull's progress is read from the catalogue. */
const PROGRESS_MS = 250;

const modelSchema = z
  .object({ model: z.string().nullish(), name: z.string().nullish(), stream: z.boolean().nullish() })
  .refine((b) => (b.model ?? b.name ?? "") !== "", { error: "a model is required", path: ["model"] });

const line = (value: object) => `${JSON.stringify(value)}\n`;

async function* loadSteps(model: ModelInfo, loading: Promise<unknown>, context: AppContext, signal: AbortSignal) {
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

/** A pull by address: its first step already read (a refusal is the answer's status), then the rest. */
async function* downloadSteps(name: string, first: PullProgress | undefined, rest: AsyncIterator<PullProgress>) {
  const status = `pulling ${name}`;
  yield line({ status: "pulling manifest" });
  for (let step = first; step !== undefined; ) {
    yield line({ status, digest: "", total: Number(step.totalBytes), completed: Number(step.completedBytes) });
    const next = await rest.next();
    step = next.done === true ? undefined : next.value;
  }
  yield line({ status: "success" });
}

async function* orError(lines: AsyncGenerator<string>) {
  try {
    yield* lines;
  } catch (error) {
    yield line({ error: toApiError(error).message });
  }
}

const ndjson = (lines: AsyncGenerator<string>, abort: AbortController) =>
  sseResponse(orError(lines), { onCancel: () => abort.abort(), headers: { "content-type": "application/x-ndjson" } });

async function pullAddress(request: Request, context: AppContext, name: string, stream: boolean): Promise<Response> {
  requireAdmin(request);
  const abort = new AbortController();
  const signal = AbortSignal.any([request.signal, abort.signal]);
  const steps = context.sidecar.pullModel({ source: modelAddress(name) ?? name, alias: name }, { signal });
  const iterator = steps[Symbol.asyncIterator]();
  const first = await iterator.next();
  if (!stream) {
    for (let next = first; next.done !== true; next = await iterator.next());
    return jsonResponse({ status: "success" });
  }
  return ndjson(downloadSteps(name, first.done === true ? undefined : first.value, iterator), abort);
}

/** POST /api/pull */
export function handleOllamaPull(request: Request, context: AppContext): Promise<Response> {
  return withProtocolHeaders(ollamaProtocol, context, request, async () => {
    const body = parseRequest(modelSchema, await readJsonBody(request, context.maxBodyBytes));
    const name = body.model ?? body.name ?? "";
    const { models } = await context.sidecar.listModels({}, { signal: request.signal });
    const model = findModel(models, ollamaModelName(name));
    if (model === undefined && modelAddress(name) !== undefined)
      return pullAddress(request, context, name, body.stream !== false);
    if (model === undefined) throw new NotFoundError(`model '${name}' not found`, { param: "model" });
    if (body.stream === false) {
      await context.sidecar.loadModel({ model: model.id }, { signal: request.signal });
      return jsonResponse({ status: "success" });
    }
    const abort = new AbortController();
    const loading = context.sidecar.loadModel({ model: model.id }, { signal: abort.signal });
    loading.catch(() => undefined); // read by the stream
    return ndjson(loadSteps(model, loading, context, abort.signal), abort);
  });
}

/** DELETE /api/delete */
export function handleOllamaDelete(request: Request, context: AppContext): Promise<Response> {
  return withProtocolHeaders(ollamaProtocol, context, request, async () => {
    requireAdmin(request);
    const body = parseRequest(modelSchema, await readJsonBody(request, context.maxBodyBytes));
    const name = body.model ?? body.name ?? "";
    const { models } = await context.sidecar.listModels({}, { signal: request.signal });
    const model = findModel(models, ollamaModelName(name));
    if (model === undefined) throw new NotFoundError(`model '${name}' not found`, { param: "model" });
    await context.sidecar.deleteModel({ model: model.id }, { signal: request.signal });
    return new Response(null, { status: 200 });
  });
}
