// POST /v1/completions/render (vLLM's render API, which llm-d's token-producer calls): a completions body's prompt as
// token ids, exactly those the sidecar evaluates for the same body at /v1/completions (the same schema and
// translation, to-request.ts; the sidecar's Tokenize reads the text as Generate reads a prompt). A suffix
// (fill-in-the-middle) is refused, as vLLM refuses it.
import { InvalidRequestError } from "../../base/errors.js";
import { readJsonBody } from "../../core/body.js";
import type { AppContext } from "../../core/context.js";
import { jsonResponse } from "../../core/answers.js";
import { parseRequest } from "../../core/validation.js";
import { renderedPrompt } from "../openai-common/render.js";
import { completionRequestSchema, isInfill } from "./schema.js";
import { toGenerateRequest } from "./to-request.js";

/** A list of one GenerateRequest of vLLM's shape (one prompt per request, as /v1/completions takes). */
export async function handleCompletionRender(request: Request, context: AppContext): Promise<Response> {
  const body = parseRequest(completionRequestSchema, await readJsonBody(request, context.maxBodyBytes));
  if (isInfill(body))
    throw new InvalidRequestError("suffix is not supported by the render endpoint", { param: "suffix" });
  const { model, input } = toGenerateRequest(body);
  const text = input.case === "prompt" ? input.value : "";
  const { tokens } = await context.sidecar.tokenize(
    { model, input: { case: "text", value: text } },
    { signal: request.signal },
  );
  return jsonResponse([renderedPrompt("cmpl-", context, tokens, body)]);
}
