// The catalogue in Ollama's shapes: GET /api/tags (every catalogued model), POST /api/show (one
// model: details, its GGUF header's metadata (DescribeModel: long arrays null unless `verbose`), its template,
// capabilities), GET /api/ps
// (the loaded models, their memory and when an idle one unloads) and GET /api/version. A model
// without a tag is listed as `name:latest`, as Ollama lists it (names.ts).
import type { JsonObject } from "@bufbuild/protobuf";
import * as z from "zod";
import type { ModelInfo } from "../../../proto/gen/inference/v1/inference_pb.js";
import { NotFoundError } from "../../base/errors.js";
import { jsonResponse } from "../../core/answers.js";
import { readJsonBody } from "../../core/body.js";
import type { AppContext } from "../../core/context.js";
import { withProtocolHeaders } from "../../core/protocol-family.js";
import { parseRequest } from "../../core/validation.js";
import { findModel, statusName } from "../../upstream/catalogue.js";
import { ollamaModelName, ollamaTag } from "./names.js";
import { ollamaProtocol } from "./protocol.js";
import { createdAt } from "./usage.js";

/** The Ollama API version this server answers as (GET /api/version): the shapes above are that release's. */
export const OLLAMA_VERSION = "0.12.0";

/** Go's longest duration (2^63 - 1 ns) in ms: Ollama's `expires_at` for a model kept loaded for ever. */
const FOREVER_MS = 9_223_372_036_854.775;

/** llama.cpp's file types (GGUF `general.file_type`) by number, as Ollama names a quantization. */
const FILE_TYPES: Record<number, string> = {
  0: "F32",
  1: "F16",
  2: "Q4_0",
  3: "Q4_1",
  7: "Q8_0",
  8: "Q5_0",
  9: "Q5_1",
  10: "Q2_K",
  11: "Q3_K_S",
  12: "Q3_K_M",
  13: "Q3_K_L",
  14: "Q4_K_S",
  15: "Q4_K_M",
  16: "Q5_K_S",
  17: "Q5_K_M",
  18: "Q6_K",
  32: "BF16",
};

function details(model: ModelInfo, header: JsonObject = {}) {
  const family = model.architecture;
  const fileType = header["general.file_type"];
  const sizeLabel = header["general.size_label"];
  return {
    parent_model: "",
    format: "gguf",
    family,
    families: family === "" ? null : [family],
    parameter_size: typeof sizeLabel === "string" ? sizeLabel : "",
    quantization_level: typeof fileType === "number" ? (FILE_TYPES[fileType] ?? "") : "",
  };
}

function entry(model: ModelInfo) {
  const name = ollamaTag(model.id);
  const modified = createdAt(Number(model.created) * 1000);
  return {
    name,
    model: name,
    modified_at: modified,
    size: Number(model.fileBytes),
    digest: "",
    details: details(model),
  };
}

/** What a model does, in Ollama's words; a model not loaded yet by its kind alone. */
function capabilities(model: ModelInfo): string[] {
  if (model.kind === "embed") return ["embedding"];
  if (model.kind === "rank") return [];
  return [
    "completion",
    ...(model.toolCallSyntax === "" ? [] : ["tools"]),
    ...(model.reasoning ? ["thinking"] : []),
    ...(model.fillInMiddle === "" ? [] : ["insert"]),
    ...(model.modalities.includes("image") ? ["vision"] : []),
  ];
}

/**
 * The template /api/show gives: the model's chat template, led for a model with fill-in-the-middle tokens by a
 * `.Suffix` clause, which is how Ollama's templates say so and what Continue's Ollama provider reads to send
 * `suffix` (the infill itself is assembled from the model's own tokens, not from this text).
 */
function templateOf(model: ModelInfo): string {
  if (model.fillInMiddle === "") return model.chatTemplate;
  return `{{- if .Suffix }}fill-in-the-middle (${model.fillInMiddle}){{- else }}${model.chatTemplate}{{- end }}`;
}

function expiresAt(model: ModelInfo, nowMs: number): string {
  if (model.keepAliveSeconds < 0) return createdAt(nowMs + FOREVER_MS);
  if (model.expiresAt > 0n) return createdAt(Number(model.expiresAt) * 1000);
  return createdAt(nowMs + model.keepAliveSeconds * 1000); // busy: its keep-alive counts from its end
}

async function catalogue(request: Request, context: AppContext): Promise<ModelInfo[]> {
  return (await context.sidecar.listModels({}, { signal: request.signal })).models;
}

/** GET /api/tags */
export function handleOllamaTags(request: Request, context: AppContext): Promise<Response> {
  return withProtocolHeaders(ollamaProtocol, context, request, async () =>
    jsonResponse({ models: (await catalogue(request, context)).map(entry) }),
  );
}

/** GET /api/ps */
export function handleOllamaPs(request: Request, context: AppContext): Promise<Response> {
  return withProtocolHeaders(ollamaProtocol, context, request, async () => {
    const loaded = (await catalogue(request, context)).filter((m) => statusName(m) === "loaded");
    const now = context.now();
    const models = loaded.map((m) => ({
      ...entry(m),
      size: Number(m.memoryBytes),
      expires_at: expiresAt(m, now),
      size_vram:
        m.gpu === "" || m.modelLayers === 0 ? 0 : Math.round((Number(m.memoryBytes) * m.gpuLayers) / m.modelLayers),
      context_length: m.contextSize,
    }));
    return jsonResponse({ models });
  });
}

const showSchema = z
  .object({ model: z.string().nullish(), name: z.string().nullish(), verbose: z.boolean().nullish() })
  .refine((b) => (b.model ?? b.name ?? "") !== "", { error: "a model is required", path: ["model"] });

/** POST /api/show */
export function handleOllamaShow(request: Request, context: AppContext): Promise<Response> {
  return withProtocolHeaders(ollamaProtocol, context, request, async () => {
    const body = parseRequest(showSchema, await readJsonBody(request, context.maxBodyBytes));
    const name = body.model ?? body.name ?? "";
    const model = findModel(await catalogue(request, context), ollamaModelName(name));
    if (model === undefined) throw new NotFoundError(`model '${name}' not found`, { param: "model" });
    const described = await context.sidecar.describeModel(
      { model: model.id, verbose: body.verbose === true },
      { signal: request.signal },
    );
    const info = described.metadata ?? {};
    const license = info["general.license"];
    return jsonResponse({
      license: typeof license === "string" ? license : "",
      modelfile: "",
      parameters: "",
      template: templateOf(model),
      details: details(model, info),
      model_info: info,
      capabilities: capabilities(model),
      modified_at: createdAt(Number(model.created) * 1000),
    });
  });
}

/** GET /api/version */
export function handleOllamaVersion(request: Request, context: AppContext): Promise<Response> {
  return withProtocolHeaders(ollamaProtocol, context, request, async () => jsonResponse({ version: OLLAMA_VERSION }));
}
