// POST /tokenize and POST /detokenize over the sidecar's Tokenize and Detokenize (schema.ts for
// the two request shapes, encoder.ts for the answers). Errors in OpenAI's shape.
import { Role } from "../../../proto/gen/inference/v1/inference_pb.js";
import { readJsonBody } from "../../core/body.js";
import type { AppContext } from "../../core/context.js";
import { jsonResponse } from "../../core/answers.js";
import { parseRequest } from "../../core/validation.js";
import { detokenizeAnswer, tokenizeAnswer } from "./encoder.js";
import { detokenizeRequestSchema, tokenizeRequestSchema, type TokenizeRequestBody } from "./schema.js";

const ROLES = { system: Role.SYSTEM, developer: Role.SYSTEM, user: Role.USER, assistant: Role.ASSISTANT } as const;

function tokenizeInput(body: TokenizeRequestBody) {
  if (body.messages != null) {
    return {
      input: {
        case: "chat" as const,
        value: { messages: body.messages.map((m) => ({ role: ROLES[m.role], content: m.content })) },
      },
    };
  }
  const text = body.content ?? body.prompt ?? "";
  // llama.cpp's server adds no special tokens unless asked; vLLM adds them unless told not to.
  const addSpecial = body.content != null ? body.add_special === true : body.add_special_tokens !== false;
  // Both read special-token text as the token (llama.cpp's `parse_special`, a Hugging Face tokenizer's added tokens).
  const parseSpecial = body.parse_special !== false;
  return {
    input: { case: "text" as const, value: text },
    addSpecial,
    parseSpecial,
    withPieces: body.with_pieces === true,
  };
}

export async function handleTokenize(request: Request, context: AppContext): Promise<Response> {
  const body = parseRequest(tokenizeRequestSchema, await readJsonBody(request, context.maxBodyBytes));
  const model = body.model ?? "";
  const response = await context.sidecar.tokenize({ model, ...tokenizeInput(body) }, { signal: request.signal });
  let contextSize = 0;
  if (body.content == null) {
    const { models } = await context.sidecar.listModels({}, { signal: request.signal });
    contextSize = (models.find((m) => m.id === model) ?? models[0])?.contextSize ?? 0;
  }
  return jsonResponse(tokenizeAnswer(body, response, contextSize));
}

export async function handleDetokenize(request: Request, context: AppContext): Promise<Response> {
  const body = parseRequest(detokenizeRequestSchema, await readJsonBody(request, context.maxBodyBytes));
  const { text } = await context.sidecar.detokenize(
    { model: body.model ?? "", tokens: body.tokens },
    { signal: request.signal },
  );
  return jsonResponse(detokenizeAnswer(text));
}
