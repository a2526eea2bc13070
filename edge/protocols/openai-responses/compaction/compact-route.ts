// POST /v1/responses/compact (docs/contract.md, "Compaction"): the served model summarises the
// conversation in `input` with the compaction prompt (compaction-prompt.ts); the answer is OpenAI's
// `response.compaction` object whose output is the input's user messages followed by one
// compaction item holding the sealed summary.
import { readJsonBody } from "../../../core/body.js";
import type { AppContext } from "../../../core/context.js";
import type { Endpoint, ResponseMeta } from "../../../core/endpoint.js";
import { withProtocolHeaders } from "../../../core/protocol-family.js";
import { generateFor } from "../../../core/serve.js";
import { parseRequest } from "../../../core/validation.js";
import type { GenerationResult } from "../../../upstream/generation.js";
import { openAiProtocol } from "../../openai-common/protocol.js";
import { compactionItem, summaryOf } from "./trigger-answer.js";
import { createResponsesStreamEncoder } from "../encoder.js";
import { InvalidRequestError } from "../../../base/errors.js";
import {
  type ResponsesContentPart,
  type ResponsesInputItem,
  type ResponsesRequest,
  responsesRequestSchema,
} from "../schema.js";
import { toGenerateRequest } from "../to-request.js";
import { responsesUsage } from "../usage.js";

/** The input as items (a string input is one user message). */
function inputItems(body: ResponsesRequest): ResponsesInputItem[] {
  return typeof body.input === "string" ? [{ type: "message", role: "user", content: body.input }] : [...body.input];
}

/**
 * The request the model summarises with: the conversation and a compaction_trigger, which
 * to-request.ts turns into the compaction prompt as the last user turn, with no tools offered.
 */
export function compactionBody(body: ResponsesRequest): ResponsesRequest {
  const items = inputItems(body).filter((item) => item.type !== "compaction_trigger");
  return { ...body, input: [...items, { type: "compaction_trigger" }], stream: false, background: false };
}

/** OpenAI's CompactedResponse: the input's user messages, then the compaction item. */
export function encodeCompaction(
  body: ResponsesRequest,
  meta: ResponseMeta,
  result: GenerationResult,
): Record<string, unknown> {
  const users = inputItems(body).flatMap((item) =>
    item.type === "message" && item.role === "user"
      ? [
          {
            id: `msg_${meta.newId()}`,
            type: "message",
            status: "completed",
            role: "user",
            content: userContent(item.content),
          },
        ]
      : [],
  );
  const compaction = compactionItem(meta, summaryOf(result));
  return {
    id: meta.id,
    object: "response.compaction",
    created_at: meta.created,
    output: [...users, compaction],
    usage: responsesUsage(result.finish),
  };
}

/** A user message's content as input_text parts. */
/** A user message's content as it is sent back: its text parts, and its images as the request referred to them. */
function userContent(content: string | readonly ResponsesContentPart[]): Record<string, unknown>[] {
  return (typeof content === "string" ? [content] : content).map((part) =>
    typeof part === "string" ? { type: "input_text", text: part } : { type: "input_image", detail: "auto", ...part },
  );
}

export const compactEndpoint: Endpoint<typeof responsesRequestSchema> = {
  protocol: openAiProtocol,
  schema: responsesRequestSchema,
  idPrefix: "resp_",
  toRequest: (body) => toGenerateRequest(compactionBody(body)),
  isStream: () => false,
  // Never used: a compaction is not streamed.
  streamEncoder: createResponsesStreamEncoder,
  encodeResult: encodeCompaction,
};

/**
 * What compact takes apart from the Responses body: `model` is required (as OpenAI requires it);
 * previous_response_id is refused by name (docs/contract.md, "Compaction").
 */
function checkCompactFields(raw: unknown): void {
  const fields = typeof raw === "object" && raw !== null && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {};
  if (fields["model"] == null)
    throw new InvalidRequestError("Missing required parameter: 'model'.", { param: "model" });
  if (fields["previous_response_id"] != null) {
    throw new InvalidRequestError(
      "previous_response_id is not supported on /v1/responses/compact: send the whole conversation in 'input'.",
      {
        param: "previous_response_id",
      },
    );
  }
}

/** POST /v1/responses/compact: the whole conversation in `input` (and `instructions`), summarised. */
export function handleCompact(request: Request, context: AppContext): Promise<Response> {
  return withProtocolHeaders(openAiProtocol, context, request, async () => {
    const raw = await readJsonBody(request, context.maxBodyBytes);
    checkCompactFields(raw);
    const body = { ...parseRequest(responsesRequestSchema, raw), stream: false, background: false, store: false };
    return generateFor(compactEndpoint, body, request, context);
  });
}
