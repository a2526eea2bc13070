// POST /api/embed (`input`: a string or strings → `embeddings`) and the older POST /api/embeddings
// (`prompt` → `embedding`), over the sidecar's Embed. An empty input loads the model and answers
// no vector, as Ollama does. `options` is checked as on /api/chat and changes nothing here.
import * as z from "zod";
import type { EmbedResponse } from "../../../proto/gen/inference/v1/inference_pb.js";
import { jsonResponse } from "../../core/answers.js";
import { readJsonBody } from "../../core/body.js";
import type { AppContext } from "../../core/context.js";
import { priorityOf } from "../../core/priority.js";
import { withProtocolHeaders } from "../../core/protocol-family.js";
import { parseRequest } from "../../core/validation.js";
import { keepAliveField, keepAliveInit } from "../../fields/keep-alive.js";
import { ollamaModelName } from "./names.js";
import { optionsSchema } from "./options.js";
import { ollamaProtocol } from "./protocol.js";

const common = {
  model: z.string({ error: "expected a model name" }).min(1, { error: "a model is required" }),
  keep_alive: keepAliveField(),
  options: optionsSchema.nullish(),
  // Long inputs are a 400 either way: never cut.
  truncate: z.boolean().nullish(),
};

const embedSchema = z.object({
  ...common,
  input: z.union([z.string(), z.array(z.string())]),
  dimensions: z.number().int().min(1).nullish(),
});

const embeddingsSchema = z.object({ ...common, prompt: z.string().nullish() });

async function embed(
  request: Request,
  context: AppContext,
  body: { model: string; keep_alive?: number | undefined; dimensions?: number | null | undefined },
  texts: readonly string[],
): Promise<EmbedResponse | undefined> {
  const model = ollamaModelName(body.model);
  if (texts.length === 0) {
    await context.sidecar.loadModel({ model, ...keepAliveInit(body) }, { signal: request.signal });
    return undefined;
  }
  const inputs = texts.map((text) => ({ input: { case: "text" as const, value: text } }));
  const call = {
    model,
    inputs,
    dimensions: body.dimensions ?? 0,
    ...keepAliveInit(body),
    priority: priorityOf(request),
  };
  return context.sidecar.embed(call, { signal: request.signal });
}

/** POST /api/embed */
export function handleOllamaEmbed(request: Request, context: AppContext): Promise<Response> {
  return withProtocolHeaders(ollamaProtocol, context, request, async () => {
    const started = context.now();
    const body = parseRequest(embedSchema, await readJsonBody(request, context.maxBodyBytes));
    const texts = typeof body.input === "string" ? (body.input === "" ? [] : [body.input]) : body.input;
    const response = await embed(request, context, body, texts);
    const total = Math.round((context.now() - started) * 1e6);
    return jsonResponse({
      model: body.model,
      embeddings: response?.embeddings.map((e) => e.values) ?? [],
      total_duration: total,
      load_duration: 0,
      prompt_eval_count: response?.promptTokens ?? 0,
    });
  });
}

/** POST /api/embeddings */
export function handleOllamaEmbeddings(request: Request, context: AppContext): Promise<Response> {
  return withProtocolHeaders(ollamaProtocol, context, request, async () => {
    const body = parseRequest(embeddingsSchema, await readJsonBody(request, context.maxBodyBytes));
    const prompt = body.prompt ?? "";
    const response = await embed(request, context, body, prompt === "" ? [] : [prompt]);
    return jsonResponse({ embedding: response?.embeddings[0]?.values ?? [] });
  });
}
