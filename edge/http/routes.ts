// Every route the edge serves, in one table: the router is built from it and /v1/info lists it.
import type { IRequest } from "itty-router";
import type { AccessMode } from "../access/policy.js";
import type { AppContext } from "../core/context.js";
import { InvalidRequestError, NotFoundError } from "../base/errors.js";
import { wantsWebSocket } from "./socket/port.js";
import { handleCancelResponse, handlePollResponse, handleResumeResponse, handleResumeStream } from "../replay/handler.js";
import { handleHealth } from "./health.js";
import { handleInfo, type RouteInfo } from "./info.js";
import { handleConversationChat } from "../state/c1/chat.js";
import { handleDeleteC1Conversation, handleGetC1Conversation, handleListC1Conversations } from "../state/c1/handler.js";
import type { Stores } from "../state/stores.js";
import type { Batches } from "../state/batches/batches.js";
import { handleCreateFile, handleDeleteFile, handleFileContent, handleGetFile, handleListFiles } from "../state/batches/files-handler.js";
import { handleCancelBatch, handleCreateBatch, handleGetBatch, handleListBatches } from "../state/batches/handler.js";
import {
  handleCancelMessageBatch,
  handleCreateMessageBatch,
  handleDeleteMessageBatch,
  handleGetMessageBatch,
  handleListMessageBatches,
  handleMessageBatchResults,
} from "../state/batches/anthropic-handler.js";
import { handleCreateConversation, handleDeleteConversation, handleGetConversation, handleUpdateConversation } from "../state/openai-conversations/handler.js";
import { handleCreateItems, handleDeleteItem, handleGetItem, handleListItems } from "../state/openai-conversations/items-handler.js";
import { handleThreadedMessages } from "../state/threads/handler.js";
import { handleCountTokens, handleMessages } from "../protocols/anthropic-messages/handler.js";
import { handleDetokenize, handleTokenize } from "../protocols/tokenizer/handler.js";
import { handleApplyTemplate } from "../protocols/openai-chat/apply-template.js";
import { handleEmbeddings } from "../protocols/openai-embeddings/handler.js";
import { handleRerank } from "../protocols/rerank/handler.js";
import { handleChatCompletions } from "../protocols/openai-chat/handler.js";
import { handleCompletions } from "../protocols/openai-completions/handler.js";
import { handleListModels, handleLoadModel, handleRetrieveModel, handleUnloadModel } from "../protocols/openai-models/handler.js";
import { handleResponses } from "../protocols/openai-responses/handler.js";
import { handleCompact } from "../protocols/openai-responses/compact.js";
import { handleDeleteResponse, handleGetResponse, handleInputItems, handleStoredResponses } from "../state/responses/handler.js";

export interface Route extends RouteInfo {
  handle(request: IRequest): Promise<Response>;
}

/** Whose error shape and headers a route's answers take (app.ts). */
export type RouteProtocol = RouteInfo["protocol"];

/**
 * Where no route matches (an unknown route, or a known one with another method): under
 * /v1/messages in Anthropic's shape, elsewhere in OpenAI's. The router tries them after every route.
 */
export const FALLBACK_ROUTES: readonly { readonly path: string; readonly protocol: RouteProtocol }[] = [
  { path: "/v1/messages/*", protocol: "anthropic" },
  { path: "*", protocol: "openai" },
];

/** Percent-decodes a path parameter; a malformed escape is taken literally. */
function decodePathSegment(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

/** The /c1 routes: conversations the server keeps (docs/contract.md, "Conversations"). */
function conversationRoutes(context: AppContext, stores: Stores): Route[] {
  const id = (r: IRequest) => decodePathSegment(r.params["id"] ?? "");
  return [
    { method: "POST", path: "/c1/chat", protocol: "openai", handle: (r) => handleConversationChat(r, context, stores.c1) },
    { method: "GET", path: "/c1/conversations", protocol: "openai", handle: (r) => handleListC1Conversations(r, stores.c1) },
    { method: "GET", path: "/c1/conversations/:id", protocol: "openai", handle: (r) => handleGetC1Conversation(id(r), r, stores.c1) },
    { method: "DELETE", path: "/c1/conversations/:id", protocol: "openai", handle: (r) => handleDeleteC1Conversation(id(r), r, stores.c1) },
  ];
}

/** OpenAI's Conversations API (docs/contract.md, "OpenAI conversations"). */
function openAiConversationRoutes(context: AppContext, stores: Stores): Route[] {
  const id = (r: IRequest) => decodePathSegment(r.params["id"] ?? "");
  const item = (r: IRequest) => decodePathSegment(r.params["item_id"] ?? "");
  return [
    {
      method: "POST",
      path: "/v1/conversations",
      protocol: "openai",
      handle: (r) => handleCreateConversation(r, context, stores.conversations, stores.responses),
    },
    { method: "GET", path: "/v1/conversations/:id", protocol: "openai", handle: (r) => handleGetConversation(id(r), r, stores.conversations) },
    { method: "POST", path: "/v1/conversations/:id", protocol: "openai", handle: (r) => handleUpdateConversation(id(r), r, context, stores.conversations) },
    { method: "DELETE", path: "/v1/conversations/:id", protocol: "openai", handle: (r) => handleDeleteConversation(id(r), r, stores.conversations) },
    { method: "GET", path: "/v1/conversations/:id/items", protocol: "openai", handle: (r) => handleListItems(id(r), r, stores.conversations) },
    {
      method: "POST",
      path: "/v1/conversations/:id/items",
      protocol: "openai",
      handle: (r) => handleCreateItems(id(r), r, context, stores.conversations, stores.responses),
    },
    { method: "GET", path: "/v1/conversations/:id/items/:item_id", protocol: "openai", handle: (r) => handleGetItem(id(r), item(r), r, stores.conversations) },
    {
      method: "DELETE",
      path: "/v1/conversations/:id/items/:item_id",
      protocol: "openai",
      handle: (r) => handleDeleteItem(id(r), item(r), r, stores.conversations),
    },
  ];
}

/** OpenAI's Files and Batches and Anthropic's Message Batches (docs/contract.md, "Batches"). */
function batchRoutes(context: AppContext, batches: Batches): Route[] {
  const id = (r: IRequest) => decodePathSegment(r.params["id"] ?? "");
  return [
    { method: "POST", path: "/v1/files", protocol: "openai", handle: (r) => handleCreateFile(r, context, batches) },
    { method: "GET", path: "/v1/files", protocol: "openai", handle: (r) => handleListFiles(r, batches) },
    { method: "GET", path: "/v1/files/:id", protocol: "openai", handle: (r) => handleGetFile(id(r), r, batches) },
    { method: "GET", path: "/v1/files/:id/content", protocol: "openai", handle: (r) => handleFileContent(id(r), r, batches) },
    { method: "DELETE", path: "/v1/files/:id", protocol: "openai", handle: (r) => handleDeleteFile(id(r), r, batches) },
    { method: "POST", path: "/v1/batches", protocol: "openai", handle: (r) => handleCreateBatch(r, context, batches) },
    { method: "GET", path: "/v1/batches", protocol: "openai", handle: (r) => handleListBatches(r, batches) },
    { method: "GET", path: "/v1/batches/:id", protocol: "openai", handle: (r) => handleGetBatch(id(r), r, context, batches) },
    { method: "POST", path: "/v1/batches/:id/cancel", protocol: "openai", handle: (r) => handleCancelBatch(id(r), r, context, batches) },
    { method: "POST", path: "/v1/messages/batches", protocol: "anthropic", handle: (r) => handleCreateMessageBatch(r, context, batches) },
    { method: "GET", path: "/v1/messages/batches", protocol: "anthropic", handle: (r) => handleListMessageBatches(r, batches) },
    { method: "GET", path: "/v1/messages/batches/:id", protocol: "anthropic", handle: (r) => handleGetMessageBatch(id(r), r, context, batches) },
    { method: "DELETE", path: "/v1/messages/batches/:id", protocol: "anthropic", handle: (r) => handleDeleteMessageBatch(id(r), r, context, batches) },
    { method: "POST", path: "/v1/messages/batches/:id/cancel", protocol: "anthropic", handle: (r) => handleCancelMessageBatch(id(r), r, context, batches) },
    { method: "GET", path: "/v1/messages/batches/:id/results", protocol: "anthropic", handle: (r) => handleMessageBatchResults(id(r), r, context, batches) },
  ];
}

/** Stored responses (docs/contract.md, "Stored responses"); without a store, POST alone. */
function responseRoutes(context: AppContext, store: Stores | undefined): Route[] {
  const id = (r: IRequest) => decodePathSegment(r.params["id"] ?? "");
  // `?stream=true` reads a background (resumable) Response's stream again (edge/replay/).
  const streamed = (r: IRequest) => new URL(r.url).searchParams.get("stream") === "true";
  const cancel: Route = { method: "POST", path: "/v1/responses/:id/cancel", protocol: "openai", handle: (r) => handleCancelResponse(id(r), r, context) };
  if (store === undefined) {
    return [
      { method: "POST", path: "/v1/responses", protocol: "openai", handle: (r) => handleResponses(r, context) },
      cancel,
      {
        method: "GET",
        path: "/v1/responses/:id",
        protocol: "openai",
        handle: (r) => (streamed(r) ? handleResumeResponse(id(r), r, context) : handlePollResponse(id(r), r, context)),
      },
    ];
  }
  return [
    { method: "POST", path: "/v1/responses", protocol: "openai", handle: (r) => handleStoredResponses(r, context, store) },
    cancel,
    {
      method: "GET",
      path: "/v1/responses/:id",
      protocol: "openai",
      handle: (r) => (streamed(r) ? handleResumeResponse(id(r), r, context) : storedOrPolled(id(r), r, context, store.responses)),
    },
    { method: "DELETE", path: "/v1/responses/:id", protocol: "openai", handle: (r) => handleDeleteResponse(id(r), r, store.responses) },
    { method: "GET", path: "/v1/responses/:id/input_items", protocol: "openai", handle: (r) => handleInputItems(id(r), r, store.responses) },
  ];
}

/** GET /v1/responses/{id} with a store: a stored Response, else a background one as it stands. */
async function storedOrPolled(id: string, request: Request, context: AppContext, store: Stores["responses"]): Promise<Response> {
  try {
    return await handleGetResponse(id, request, store);
  } catch (error) {
    if (!(error instanceof NotFoundError)) throw error;
    return handlePollResponse(id, request, context);
  }
}

/**
 * GET /v1/responses that did not open the WebSocket mode (app.ts opens it where the host has
 * WebSockets, http/socket/): without an upgrade it is refused by name, not left to a 405; an
 * upgrade reaches this route only on a host without WebSockets (an app built without them).
 */
function refuseWebSocketMode(request: Request): Promise<Response> {
  const refusal = wantsWebSocket(request)
    ? new InvalidRequestError(
        "The WebSocket mode of /v1/responses is not served by this host; POST /v1/responses (with stream: true for server-sent events).",
        { code: "unsupported_endpoint" },
      )
    : new InvalidRequestError(
        "GET /v1/responses is the WebSocket mode: open it with a WebSocket upgrade and send response.create messages; or POST /v1/responses.",
        { code: "websocket_upgrade_required" },
      );
  return Promise.reject(refusal);
}

/**
 * Every route; the state's routes only with a store (without one, /v1/responses and /v1/messages
 * keep nothing), the batch routes only with batches (a store and the host's file store).
 */
export function routeTable(context: AppContext, access: AccessMode, store?: Stores, batches?: Batches): readonly Route[] {
  const routes: Route[] = [
    { method: "POST", path: "/v1/chat/completions", protocol: "openai", handle: (r) => handleChatCompletions(r, context) },
    { method: "POST", path: "/v1/completions", protocol: "openai", handle: (r) => handleCompletions(r, context) },
    ...responseRoutes(context, store),
    { method: "GET", path: "/v1/responses", protocol: "openai", handle: refuseWebSocketMode },
    { method: "POST", path: "/v1/responses/compact", protocol: "openai", handle: (r) => handleCompact(r, context) },
    {
      method: "POST",
      path: "/v1/messages",
      protocol: "anthropic",
      // With a store, message threads are kept (docs/contract.md, "Anthropic message threads").
      handle: (r) => (store === undefined ? handleMessages(r, context) : handleThreadedMessages(r, context, store.threads)),
    },
    { method: "POST", path: "/v1/messages/count_tokens", protocol: "anthropic", handle: (r) => handleCountTokens(r, context) },
    { method: "GET", path: "/v1/models", protocol: "openai", handle: (r) => handleListModels(r, context) },
    // llama-server's paths, outside /v1 where model ids are path segments (docs/decisions.md, "Loading and unloading by request").
    { method: "POST", path: "/models/load", protocol: "openai", handle: (r) => handleLoadModel(r, context) },
    { method: "POST", path: "/models/unload", protocol: "openai", handle: (r) => handleUnloadModel(r, context) },
    { method: "POST", path: "/v1/embeddings", protocol: "openai", handle: (r) => handleEmbeddings(r, context) },
    // llama-server's and Jina's path, and llama-server's short one (docs/contract.md, "Rerank").
    { method: "POST", path: "/v1/rerank", protocol: "openai", handle: (r) => handleRerank(r, context) },
    { method: "POST", path: "/rerank", protocol: "openai", handle: (r) => handleRerank(r, context) },
    { method: "POST", path: "/tokenize", protocol: "openai", handle: (r) => handleTokenize(r, context) },
    { method: "POST", path: "/detokenize", protocol: "openai", handle: (r) => handleDetokenize(r, context) },
    { method: "POST", path: "/apply-template", protocol: "openai", handle: (r) => handleApplyTemplate(r, context) },
    {
      method: "GET",
      path: "/v1/models/:id+",
      protocol: "openai",
      handle: (r) => handleRetrieveModel(decodePathSegment(r.params["id"] ?? ""), r, context),
    },
    ...(store === undefined ? [] : conversationRoutes(context, store)),
    ...(store === undefined ? [] : openAiConversationRoutes(context, store)),
    ...(batches === undefined ? [] : batchRoutes(context, batches)),
    { method: "GET", path: "/v1/streams/:id", protocol: "openai", handle: (r) => handleResumeStream(decodePathSegment(r.params["id"] ?? ""), r, context) },
    { method: "GET", path: "/v1/info", protocol: "server", handle: (r) => handleInfo(r, context, routes, access) },
    { method: "GET", path: "/health", protocol: "server", handle: (r) => handleHealth(r, context) },
  ];
  return routes;
}
