// POST /api/chat and POST /api/generate: the body read and checked (schema.ts), then either a
// generation on the shared path (core/serve.ts, `serve`) streamed as NDJSON unless `stream` is
// false, or, with no messages (chat) or an empty prompt (generate), the model loaded, or with
// `keep_alive: 0` unloaded, answered as Ollama answers it (`done_reason` "load" or "unload").
import type * as z from "zod";
import type { AppContext } from "../../core/context.js";
import type { Endpoint } from "../../core/endpoint.js";
import { jsonResponse } from "../../core/answers.js";
import { serve } from "../../core/serve.js";
import { ollamaResult, ollamaStreamEncoder, type OllamaAnswer, type OllamaShape } from "./encoder.js";
import { ollamaModelName } from "./names.js";
import { ollamaProtocol } from "./protocol.js";
import { ollamaChatSchema, ollamaGenerateSchema } from "./schema.js";
import { chatToRequest, generateToRequest } from "./to-request.js";
import { createdAt } from "./usage.js";

type Body = {
  readonly model: string;
  readonly stream?: boolean | null | undefined;
  readonly logprobs?: boolean | null | undefined;
  readonly top_logprobs?: number | null | undefined;
};

function answerOf(shape: OllamaShape, body: Body): OllamaAnswer {
  return { shape, model: body.model, top: body.logprobs === true ? (body.top_logprobs ?? 0) : undefined };
}

function endpointOf<S extends z.ZodType<Body>>(
  shape: OllamaShape,
  schema: S,
  toRequest: Endpoint<S>["toRequest"],
): Endpoint<S> {
  return {
    protocol: ollamaProtocol,
    schema,
    idPrefix: "",
    toRequest,
    ...(shape === "generate" ? { infillField: "suffix" } : {}),
    isStream: (body) => body.stream !== false,
    streamEncoder: (body, meta) => ollamaStreamEncoder(answerOf(shape, body), meta),
    encodeResult: (body, meta, result) => ollamaResult(answerOf(shape, body), meta, result),
  };
}

const chatEndpoint = endpointOf("chat", ollamaChatSchema, chatToRequest);
const generateEndpoint = endpointOf("generate", ollamaGenerateSchema, generateToRequest);

/** An empty request: the model loaded (`keep_alive` counted from now), or with `keep_alive: 0` unloaded. */
async function loadOrUnload(
  shape: OllamaShape,
  body: Body & { readonly keep_alive?: number | undefined },
  request: Request,
  context: AppContext,
): Promise<Response> {
  const model = ollamaModelName(body.model);
  const unload = body.keep_alive === 0;
  if (unload) await context.sidecar.unloadModel({ model }, { signal: request.signal });
  else {
    const keep = body.keep_alive === undefined ? {} : { keepAliveSeconds: body.keep_alive };
    await context.sidecar.loadModel({ model, ...keep }, { signal: request.signal });
  }
  const reply = shape === "chat" ? { message: { role: "assistant", content: "" } } : { response: "" };
  const done = { done: true, done_reason: unload ? "unload" : "load" };
  return jsonResponse({ model: body.model, created_at: createdAt(context.now()), ...reply, ...done });
}

/** POST /api/chat */
export function handleOllamaChat(request: Request, context: AppContext): Promise<Response> {
  return serve(chatEndpoint, request, context, (body) =>
    (body.messages ?? []).length === 0 ? loadOrUnload("chat", body, request, context) : undefined,
  );
}

/** POST /api/generate */
export function handleOllamaGenerate(request: Request, context: AppContext): Promise<Response> {
  return serve(generateEndpoint, request, context, (body) =>
    (body.prompt ?? "") === "" ? loadOrUnload("generate", body, request, context) : undefined,
  );
}
