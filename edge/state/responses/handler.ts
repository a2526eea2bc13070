// /v1/responses with a store (docs/contract.md, "Stored responses"): POST stores the finished
// Response unless `store: false`, continues a stored one with previous_response_id or an OpenAI
// conversation with `conversation` (conversation.ts), and resolves `item_reference` items; GET and DELETE
// /v1/responses/{id} and GET …/input_items read and
// delete the caller's own responses (another key's are not found).
import { callerOf } from "../../access/caller.js";
import { readJsonBody } from "../../core/body.js";
import type { AppContext } from "../../core/context.js";
import { InvalidRequestError, NotFoundError } from "../../base/errors.js";
import { jsonResponse } from "../../core/answers.js";
import { withProtocolHeaders } from "../../core/protocol-family.js";
import { openAiProtocol } from "../../protocols/openai-common/protocol.js";
import { responsesRequestSchema, type ResponsesRequest } from "../../protocols/openai-responses/schema.js";
import { generateFor } from "../../core/serve.js";
import { compactIfDue } from "../../protocols/openai-responses/compaction/automatic.js";
import { isRecord, ownItems, type StoredItem } from "../items/items.js";
import { pageOptions } from "../items/page.js";
import type { ResponseStore, ResponseStores } from "./store.js";
import { parseRequest } from "../../core/validation.js";
import { requestConversation } from "./conversation.js";
import { storedEndpoint } from "./stored-endpoint.js";
import { inputItemsPage } from "./encoder.js";
import { contextAfter, previousResponse, shifted } from "./input.js";

function notFound(id: string): NotFoundError {
  return new NotFoundError(`Response with id '${id}' not found.`, { code: "response_not_found" });
}

/** The request as the sidecar gets it: the context first; errors name the request's own items. */
function parseWithContext(
  fields: Record<string, unknown>,
  prefix: readonly StoredItem[],
  own: unknown,
): ResponsesRequest {
  const input = Array.isArray(own) ? [...prefix, ...(own as unknown[])] : own;
  try {
    const body = parseRequest(responsesRequestSchema, { ...fields, input });
    // Stored unless the request says `store: false` (as OpenAI's API defaults).
    return { ...body, store: body.store !== false };
  } catch (error) {
    if (!(error instanceof InvalidRequestError) || prefix.length === 0) throw error;
    throw new InvalidRequestError(shifted(error.message, prefix.length), {
      param: error.param === null ? null : shifted(error.param, prefix.length),
    });
  }
}

/** POST /v1/responses */
export function handleStoredResponses(request: Request, context: AppContext, store: ResponseStores): Promise<Response> {
  return withProtocolHeaders(openAiProtocol, context, request, async () => {
    const raw = await readJsonBody(request, context.maxBodyBytes);
    // Not an object: the schema says why.
    const fields = isRecord(raw) ? raw : (parseRequest(responsesRequestSchema, raw) as Record<string, unknown>);
    const owner = callerOf(request).keyId;
    const previousId =
      typeof fields["previous_response_id"] === "string" && fields["previous_response_id"] !== ""
        ? fields["previous_response_id"]
        : undefined;
    if (fields["background"] === true && fields["stream"] !== true && fields["conversation"] != null) {
      // A polled job is read back from the sidecar, never appended (docs/contract.md, "Resumable streams").
      throw new InvalidRequestError(
        "A background response without a stream cannot be added to a conversation: send stream: true, or leave out " +
          "conversation.",
        {
          param: "background",
        },
      );
    }
    const conversation = await requestConversation(fields, previousId, store.conversations, owner);
    const previous = previousId === undefined ? undefined : await previousResponse(store.responses, owner, previousId);
    const own = await ownItems(fields["input"], store.responses, owner, context.newId);
    const prefix = conversation?.items ?? contextAfter(previous);
    const { conversation: _named, ...rest } = fields;
    const parsed = parseWithContext(rest, prefix, own);
    // The Response names its conversation, as OpenAI's does.
    const named = conversation === undefined ? parsed : { ...parsed, conversation: { id: conversation.id } };
    const body = await compactIfDue(named, request, context);
    if (body instanceof Response) return body;
    const inputItems = own as StoredItem[];
    const pending = { store, owner, inputItems, context: [...prefix, ...inputItems], conversationId: conversation?.id };
    return generateFor(storedEndpoint(pending), body, request, context);
  });
}

/** GET /v1/responses/{id} */
export async function handleGetResponse(id: string, request: Request, store: ResponseStore): Promise<Response> {
  const found = await store.getResponse(callerOf(request).keyId, id);
  if (found === undefined) throw notFound(id);
  return jsonResponse(found.response);
}

/** DELETE /v1/responses/{id} */
export async function handleDeleteResponse(id: string, request: Request, store: ResponseStore): Promise<Response> {
  if (!(await store.deleteResponse(callerOf(request).keyId, id))) throw notFound(id);
  return jsonResponse({ id, object: "response", deleted: true });
}

/** GET /v1/responses/{id}/input_items?order=&limit=&after= */
export async function handleInputItems(id: string, request: Request, store: ResponseStore): Promise<Response> {
  const options = pageOptions(new URL(request.url));
  const found = await store.getResponse(callerOf(request).keyId, id);
  if (found === undefined) throw notFound(id);
  return jsonResponse(inputItemsPage(found.inputItems, options));
}
