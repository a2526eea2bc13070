// Every route the edge serves, in one table: the router is built from it and /v1/info lists it.
import type { IRequest } from "itty-router";
import type { AccessMode } from "../access/policy.js";
import type { AppContext } from "../core/context.js";
import { InvalidRequestError, NotFoundError } from "../base/errors.js";
import { DOCS } from "../fields/docs-text.js";
import { wantsWebSocket } from "./socket/port.js";
import {
  handleCancelResponse,
  handlePollResponse,
  handleResumeResponse,
  handleResumeStream,
} from "../replay/handler.js";
import { handleHealth } from "./health.js";
import { handleInfo, type RouteInfo } from "./info.js";
import { handleConversationChat } from "../state/c1/chat.js";
import { handleDeleteC1Conversation, handleGetC1Conversation, handleListC1Conversations } from "../state/c1/handler.js";
import type { Stores } from "../state/stores.js";
import type { Batches } from "../state/batches/batches.js";
import {
  handleCreateFile,
  handleDeleteFile,
  handleFileContent,
  handleGetFile,
  handleListFiles,
} from "../state/batches/files-handler.js";
import { handleCancelBatch, handleCreateBatch, handleGetBatch, handleListBatches } from "../state/batches/handler.js";
import {
  handleCancelMessageBatch,
  handleCreateMessageBatch,
  handleDeleteMessageBatch,
  handleGetMessageBatch,
  handleListMessageBatches,
  handleMessageBatchResults,
} from "../state/batches/anthropic-handler.js";
import {
  handleCreateConversation,
  handleDeleteConversation,
  handleGetConversation,
  handleUpdateConversation,
} from "../state/openai-conversations/handler.js";
import {
  handleCreateItems,
  handleDeleteItem,
  handleGetItem,
  handleListItems,
} from "../state/openai-conversations/items-handler.js";
import { handleThreadedMessages } from "../state/threads/handler.js";
import { handleCountTokens, handleMessages } from "../protocols/anthropic-messages/handler.js";
import { handleDetokenize, handleTokenize } from "../protocols/tokenizer/handler.js";
import { handleApplyTemplate } from "../protocols/openai-chat/apply-template.js";
import { handleChatRender } from "../protocols/openai-chat/render.js";
import { handleCompletionRender } from "../protocols/openai-completions/render.js";
import { handleEmbeddings } from "../protocols/openai-embeddings/handler.js";
import { handleRerank } from "../protocols/rerank/handler.js";
import { handleListLoraAdapters, handleSetLoraAdapters } from "../protocols/lora-adapters/handler.js";
import { handleChatCompletions } from "../protocols/openai-chat/handler.js";
import { handleCompletions } from "../protocols/openai-completions/handler.js";
import { handleInfill } from "../protocols/llama-infill/handler.js";
import {
  handleListModels,
  handleLoadModel,
  handleRetrieveModel,
  handleUnloadModel,
} from "../protocols/openai-models/handler.js";
import { handleResponses } from "../protocols/openai-responses/handler.js";
import { handleOllamaChat, handleOllamaGenerate } from "../protocols/ollama/handler.js";
import { handleOllamaEmbed, handleOllamaEmbeddings } from "../protocols/ollama/embed.js";
import { handleOllamaDelete, handleOllamaPull } from "../protocols/ollama/pull.js";
import { handleProps } from "../protocols/llama-operator/props.js";
import { handleSlots } from "../protocols/llama-operator/slots.js";
import { handleOllamaPs, handleOllamaShow, handleOllamaTags, handleOllamaVersion } from "../protocols/ollama/models.js";
import { handleCompact } from "../protocols/openai-responses/compaction/compact-route.js";
import {
  handleDeleteResponse,
  handleGetResponse,
  handleInputItems,
  handleStoredResponses,
} from "../state/responses/handler.js";

/** A form of a route that the endpoint lists show on a line of its own: a query, an upgrade. */
export interface RouteForm {
  /** What follows the method and path in the lists: `?stream=true`, ` (WebSocket upgrade)`. */
  readonly form: string;
  readonly about: string | false;
  /** Its section of docs/contract.md where that is not the route's. */
  readonly contract?: string;
}

export interface Route extends RouteInfo {
  /**
   * What the route is, in a phrase. The endpoint lists of the docs are written from it and from
   * which tables hold the route (`npm run docs:endpoints`, scripts/endpoint-docs.ts); /v1/info does not show it.
   */
  readonly about: string | false;
  /** The section of docs/contract.md that holds the route's contract, by its anchor. */
  readonly contract?: string;
  /** Other forms of the route, each listed on its own line. */
  readonly forms?: readonly RouteForm[];
  handle(request: IRequest): Promise<Response>;
}

/** Whose error shape and headers a route's answers take (app.ts). */
export type RouteProtocol = RouteInfo["protocol"];

/**
 * Where no route matches (an unknown route, or a known one with another method): under
 * /v1/messages in Anthropic's shape, under /api in Ollama's, elsewhere in OpenAI's. The router tries them
 * after every route.
 */
export const FALLBACK_ROUTES: readonly { readonly path: string; readonly protocol: RouteProtocol }[] = [
  { path: "/v1/messages/*", protocol: "anthropic" },
  { path: "/api/*", protocol: "ollama" },
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

/** Routes whose contract is the section `contract` of docs/contract.md (its anchor). */
function inSection(contract: string, routes: readonly Omit<Route, "contract">[]): Route[] {
  return routes.map((route) => ({ ...route, contract }));
}

/** The /c1 routes: conversations the server keeps (docs/contract.md, "Conversations"). */
function conversationRoutes(context: AppContext, stores: Stores): Route[] {
  const id = (r: IRequest) => decodePathSegment(r.params["id"] ?? "");
  return inSection("conversations-c1", [
    {
      method: "POST",
      path: "/c1/chat",
      protocol: "openai",
      about: DOCS && "chat completions on a conversation the server keeps, named by `x-conversation-id`",
      handle: (r) => handleConversationChat(r, context, stores.c1),
    },
    {
      method: "GET",
      path: "/c1/conversations",
      protocol: "openai",
      about: DOCS && "the caller's conversations",
      handle: (r) => handleListC1Conversations(r, stores.c1),
    },
    {
      method: "GET",
      path: "/c1/conversations/:id",
      protocol: "openai",
      about: DOCS && "a conversation with its messages",
      handle: (r) => handleGetC1Conversation(id(r), r, stores.c1),
    },
    {
      method: "DELETE",
      path: "/c1/conversations/:id",
      protocol: "openai",
      about: DOCS && "deletes a conversation",
      handle: (r) => handleDeleteC1Conversation(id(r), r, stores.c1),
    },
  ]);
}

/** OpenAI's Conversations API (docs/contract.md, "OpenAI conversations"). */
function openAiConversationRoutes(context: AppContext, stores: Stores): Route[] {
  const id = (r: IRequest) => decodePathSegment(r.params["id"] ?? "");
  const item = (r: IRequest) => decodePathSegment(r.params["item_id"] ?? "");
  const { conversations, responses } = stores;
  return inSection("openai-conversations-v1conversations", [
    {
      method: "POST",
      path: "/v1/conversations",
      protocol: "openai",
      about: DOCS && "creates an OpenAI conversation",
      handle: (r) => handleCreateConversation(r, context, conversations, responses),
    },
    {
      method: "GET",
      path: "/v1/conversations/:id",
      protocol: "openai",
      about: DOCS && "a conversation",
      handle: (r) => handleGetConversation(id(r), r, conversations),
    },
    {
      method: "POST",
      path: "/v1/conversations/:id",
      protocol: "openai",
      about: DOCS && "replaces a conversation's metadata",
      handle: (r) => handleUpdateConversation(id(r), r, context, conversations),
    },
    {
      method: "DELETE",
      path: "/v1/conversations/:id",
      protocol: "openai",
      about: DOCS && "deletes a conversation",
      handle: (r) => handleDeleteConversation(id(r), r, conversations),
    },
    {
      method: "GET",
      path: "/v1/conversations/:id/items",
      protocol: "openai",
      about: DOCS && "a conversation's items",
      handle: (r) => handleListItems(id(r), r, conversations),
    },
    {
      method: "POST",
      path: "/v1/conversations/:id/items",
      protocol: "openai",
      about: DOCS && "adds items to a conversation",
      handle: (r) => handleCreateItems(id(r), r, context, conversations, responses),
    },
    {
      method: "GET",
      path: "/v1/conversations/:id/items/:item_id",
      protocol: "openai",
      about: DOCS && "one item of a conversation",
      handle: (r) => handleGetItem(id(r), item(r), r, conversations),
    },
    {
      method: "DELETE",
      path: "/v1/conversations/:id/items/:item_id",
      protocol: "openai",
      about: DOCS && "deletes an item of a conversation",
      handle: (r) => handleDeleteItem(id(r), item(r), r, conversations),
    },
  ]);
}

/** OpenAI's Files and Batches (docs/contract.md, "Batches"). */
function openAiBatchRoutes(context: AppContext, batches: Batches): Route[] {
  const id = (r: IRequest) => decodePathSegment(r.params["id"] ?? "");
  return inSection("batches", [
    {
      method: "POST",
      path: "/v1/files",
      protocol: "openai",
      about: DOCS && "uploads a file: a batch's JSONL input, or an image a request names by file_id",
      handle: (r) => handleCreateFile(r, context, batches),
    },
    {
      method: "GET",
      path: "/v1/files",
      protocol: "openai",
      about: DOCS && "the caller's files",
      handle: (r) => handleListFiles(r, batches),
    },
    {
      method: "GET",
      path: "/v1/files/:id",
      protocol: "openai",
      about: DOCS && "a file's record",
      handle: (r) => handleGetFile(id(r), r, batches),
    },
    {
      method: "GET",
      path: "/v1/files/:id/content",
      protocol: "openai",
      about: DOCS && "a file's bytes",
      handle: (r) => handleFileContent(id(r), r, batches),
    },
    {
      method: "DELETE",
      path: "/v1/files/:id",
      protocol: "openai",
      about: DOCS && "deletes a file",
      handle: (r) => handleDeleteFile(id(r), r, batches),
    },
    {
      method: "POST",
      path: "/v1/batches",
      protocol: "openai",
      about: DOCS && "starts an OpenAI batch, answered in idle capacity",
      handle: (r) => handleCreateBatch(r, context, batches),
    },
    {
      method: "GET",
      path: "/v1/batches",
      protocol: "openai",
      about: DOCS && "the caller's batches",
      handle: (r) => handleListBatches(r, batches),
    },
    {
      method: "GET",
      path: "/v1/batches/:id",
      protocol: "openai",
      about: DOCS && "a batch",
      handle: (r) => handleGetBatch(id(r), r, context, batches),
    },
    {
      method: "POST",
      path: "/v1/batches/:id/cancel",
      protocol: "openai",
      about: DOCS && "cancels a batch",
      handle: (r) => handleCancelBatch(id(r), r, context, batches),
    },
  ]);
}

/** Anthropic's Message Batches, on the same machinery (docs/contract.md, "Batches"). */
function messageBatchRoutes(context: AppContext, batches: Batches): Route[] {
  const id = (r: IRequest) => decodePathSegment(r.params["id"] ?? "");
  return inSection("batches", [
    {
      method: "POST",
      path: "/v1/messages/batches",
      protocol: "anthropic",
      about: DOCS && "starts an Anthropic Message Batch, answered in idle capacity",
      handle: (r) => handleCreateMessageBatch(r, context, batches),
    },
    {
      method: "GET",
      path: "/v1/messages/batches",
      protocol: "anthropic",
      about: DOCS && "the caller's Message Batches",
      handle: (r) => handleListMessageBatches(r, batches),
    },
    {
      method: "GET",
      path: "/v1/messages/batches/:id",
      protocol: "anthropic",
      about: DOCS && "a Message Batch",
      handle: (r) => handleGetMessageBatch(id(r), r, context, batches),
    },
    {
      method: "DELETE",
      path: "/v1/messages/batches/:id",
      protocol: "anthropic",
      about: DOCS && "deletes an ended Message Batch",
      handle: (r) => handleDeleteMessageBatch(id(r), r, context, batches),
    },
    {
      method: "POST",
      path: "/v1/messages/batches/:id/cancel",
      protocol: "anthropic",
      about: DOCS && "cancels a Message Batch",
      handle: (r) => handleCancelMessageBatch(id(r), r, context, batches),
    },
    {
      method: "GET",
      path: "/v1/messages/batches/:id/results",
      protocol: "anthropic",
      about: DOCS && "an ended Message Batch's results, as JSONL",
      handle: (r) => handleMessageBatchResults(id(r), r, context, batches),
    },
  ]);
}

const RESPONSES_CONTRACT = "openai-responses-post-v1responses";
const RESPONSES_ABOUT = "OpenAI Responses, streamed or not; with a store, the finished Response is kept";
const GET_RESPONSE_ABOUT =
  "a stored Response as it was answered (with a store), else a background Response as it stands";
const STREAM_FORM: RouteForm = {
  form: "?stream=true",
  about: DOCS && "a background Response's stream read again from `starting_after`, then live to its end",
  contract: "resumable-streams-x-resumable-get-v1streamsid",
};

/** Stored responses (docs/contract.md, "Stored responses"); without a store, POST alone. */
function responseRoutes(context: AppContext, store: Stores | undefined): Route[] {
  const id = (r: IRequest) => decodePathSegment(r.params["id"] ?? "");
  // `?stream=true` reads a background (resumable) Response's stream again (edge/replay/).
  const streamed = (r: IRequest) => new URL(r.url).searchParams.get("stream") === "true";
  const cancel: Route = {
    method: "POST",
    path: "/v1/responses/:id/cancel",
    protocol: "openai",
    about: DOCS && "stops a background Response",
    contract: "resumable-streams-x-resumable-get-v1streamsid",
    handle: (r) => handleCancelResponse(id(r), r, context),
  };
  const contract = "stored-responses-v1responses-with-a-store";
  if (store === undefined) {
    return [
      {
        method: "POST",
        path: "/v1/responses",
        protocol: "openai",
        about: DOCS && RESPONSES_ABOUT,
        contract: RESPONSES_CONTRACT,
        handle: (r) => handleResponses(r, context),
      },
      cancel,
      {
        method: "GET",
        path: "/v1/responses/:id",
        protocol: "openai",
        about: DOCS && GET_RESPONSE_ABOUT,
        contract,
        forms: [STREAM_FORM],
        handle: (r) => (streamed(r) ? handleResumeResponse(id(r), r, context) : handlePollResponse(id(r), r, context)),
      },
    ];
  }
  return [
    {
      method: "POST",
      path: "/v1/responses",
      protocol: "openai",
      about: DOCS && RESPONSES_ABOUT,
      contract: RESPONSES_CONTRACT,
      handle: (r) => handleStoredResponses(r, context, store),
    },
    cancel,
    {
      method: "GET",
      path: "/v1/responses/:id",
      protocol: "openai",
      about: DOCS && GET_RESPONSE_ABOUT,
      contract,
      forms: [STREAM_FORM],
      handle: (r) =>
        streamed(r) ? handleResumeResponse(id(r), r, context) : storedOrPolled(id(r), r, context, store.responses),
    },
    ...inSection(contract, [
      {
        method: "DELETE",
        path: "/v1/responses/:id",
        protocol: "openai",
        about: DOCS && "deletes a stored Response",
        handle: (r) => handleDeleteResponse(id(r), r, store.responses),
      },
      {
        method: "GET",
        path: "/v1/responses/:id/input_items",
        protocol: "openai",
        about: DOCS && "a stored Response's input items",
        handle: (r) => handleInputItems(id(r), r, store.responses),
      },
    ]),
  ];
}
/** GET /v1/responses/{id} with a store: a stored Response, else a background one as it stands. */
async function storedOrPolled(
  id: string,
  request: Request,
  context: AppContext,
  store: Stores["responses"],
): Promise<Response> {
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
        "The WebSocket mode of /v1/responses is not served by this host; POST /v1/responses (with stream: true for " +
          "server-sent events).",
        { code: "unsupported_endpoint" },
      )
    : new InvalidRequestError(
        "GET /v1/responses is the WebSocket mode: open it with a WebSocket upgrade and send response.create " +
          "messages; or POST /v1/responses.",
        { code: "websocket_upgrade_required" },
      );
  return Promise.reject(refusal);
}

/** llama-server's fill-in-the-middle endpoint, answered with OpenAI's error shape. */
function infillRoute(context: AppContext): Route {
  return {
    method: "POST",
    path: "/infill",
    protocol: "openai",
    about: DOCS && "llama-server's fill-in-the-middle (code completion), streamed or not",
    contract: "infill-post-infill",
    handle: (r) => handleInfill(r, context),
  };
}

/** The generation routes: chat, completions, infill, Responses, Messages. */
function generationRoutes(context: AppContext, store: Stores | undefined): Route[] {
  return [
    {
      method: "POST",
      path: "/v1/chat/completions",
      protocol: "openai",
      about: DOCS && "OpenAI chat completions, streamed or not",
      contract: "request-fields-chat-completions-post-v1chatcompletions",
      handle: (r) => handleChatCompletions(r, context),
    },
    {
      method: "POST",
      path: "/v1/completions",
      protocol: "openai",
      about: DOCS && "OpenAI legacy completions, streamed or not",
      contract: "request-fields-completions-post-v1completions",
      handle: (r) => handleCompletions(r, context),
    },
    infillRoute(context),
    ...responseRoutes(context, store),
    {
      method: "GET",
      path: "/v1/responses",
      protocol: "openai",
      about: DOCS && "without a WebSocket upgrade, refused with a 400 naming the WebSocket mode",
      contract: "responses-websocket-mode-get-v1responses-upgraded",
      forms: [
        {
          form: " (WebSocket upgrade)",
          about: DOCS && "the Responses WebSocket mode: `response.create` messages in, the same events out as messages",
        },
      ],
      handle: refuseWebSocketMode,
    },
    {
      method: "POST",
      path: "/v1/responses/compact",
      protocol: "openai",
      about: DOCS && "a conversation compacted by the served model",
      contract: "compaction-post-v1responsescompact",
      handle: (r) => handleCompact(r, context),
    },
    ...inSection("anthropic-messages-post-v1messages-post-v1messagescount_tokens", [
      {
        method: "POST",
        path: "/v1/messages",
        protocol: "anthropic",
        about: DOCS && "Anthropic Messages, streamed or not; with a store, message threads (`thread`)",
        // With a store, message threads are kept (docs/contract.md, "Anthropic message threads").
        handle: (r) =>
          store === undefined ? handleMessages(r, context) : handleThreadedMessages(r, context, store.threads),
      },
      {
        method: "POST",
        path: "/v1/messages/count_tokens",
        protocol: "anthropic",
        about: DOCS && "the prompt's token count as the model's template renders it",
        handle: (r) => handleCountTokens(r, context),
      },
    ]),
  ];
}

/** The models and what else a model answers without generating: embeddings, rerank (the tokenizer: below). */
function modelRoutes(context: AppContext): Route[] {
  const models = "models-v1models-modelsload-modelsunload-keep_alive";
  const rerank = "rerank-post-v1rerank-post-rerank";
  return [
    {
      method: "GET",
      path: "/v1/models",
      protocol: "openai",
      about: DOCS && "every catalogued model with its status",
      contract: models,
      handle: (r) => handleListModels(r, context),
    },
    // llama-server's paths, outside /v1 where model ids are path segments (docs/decisions.md, "Loading and unloading
    // by request").
    {
      method: "POST",
      path: "/models/load",
      protocol: "openai",
      about: DOCS && "loads a catalogued model now",
      contract: models,
      handle: (r) => handleLoadModel(r, context),
    },
    {
      method: "POST",
      path: "/models/unload",
      protocol: "openai",
      about: DOCS && "unloads a model",
      contract: models,
      handle: (r) => handleUnloadModel(r, context),
    },
    // llama-server's LoRA adapter endpoints (docs/contract.md, "LoRA adapters").
    {
      method: "GET",
      path: "/lora-adapters",
      protocol: "openai",
      about: DOCS && "the LoRA adapters served, with their scales",
      contract: "lora-adapters",
      handle: (r) => handleListLoraAdapters(r, context),
    },
    {
      method: "POST",
      path: "/lora-adapters",
      protocol: "openai",
      about: DOCS && "sets LoRA adapters' scales (admin)",
      contract: "lora-adapters",
      handle: (r) => handleSetLoraAdapters(r, context),
    },
    {
      method: "POST",
      path: "/v1/embeddings",
      protocol: "openai",
      about: DOCS && "OpenAI embeddings from the served model",
      contract: "embeddings-post-v1embeddings",
      handle: (r) => handleEmbeddings(r, context),
    },
    // llama-server's and Jina's path, and llama-server's short one (docs/contract.md, "Rerank").
    {
      method: "POST",
      path: "/v1/rerank",
      protocol: "openai",
      about: DOCS && "documents scored against a query",
      contract: rerank,
      handle: (r) => handleRerank(r, context),
    },
    {
      method: "POST",
      path: "/rerank",
      protocol: "openai",
      about: DOCS && "the same as `POST /v1/rerank`",
      contract: rerank,
      handle: (r) => handleRerank(r, context),
    },
  ];
}

/** The tokenizer's routes, and one model by its id (last: its path takes any rest). */
function tokenizerRoutes(context: AppContext): Route[] {
  const models = "models-v1models-modelsload-modelsunload-keep_alive";
  const tokenizer = "tokenizer-post-tokenize-post-detokenize-post-apply-template";
  return [
    {
      method: "POST",
      path: "/tokenize",
      protocol: "openai",
      about: DOCS && "a text's tokens",
      contract: tokenizer,
      handle: (r) => handleTokenize(r, context),
    },
    {
      method: "POST",
      path: "/detokenize",
      protocol: "openai",
      about: DOCS && "tokens' text",
      contract: tokenizer,
      handle: (r) => handleDetokenize(r, context),
    },
    {
      method: "POST",
      path: "/apply-template",
      protocol: "openai",
      about: DOCS && "a chat body's prompt text",
      contract: tokenizer,
      handle: (r) => handleApplyTemplate(r, context),
    },
    {
      method: "GET",
      path: "/v1/models/:id+",
      protocol: "openai",
      about: DOCS && "one model, by its id or an alias",
      contract: models,
      handle: (r) => handleRetrieveModel(decodePathSegment(r.params["id"] ?? ""), r, context),
    },
  ];
}

/**
 * vLLM's render API, for llm-d's token-producer (docs/contract.md, "Render"): a prompt's token ids, errors in vLLM's
 * shape. The Node edge's `RENDER_PORT` serves these routes alone, without keys (app.ts, `render`).
 */
export function renderRoutes(context: AppContext): Route[] {
  return inSection("render-post-v1chatcompletionsrender-post-v1completionsrender", [
    {
      method: "POST",
      path: "/v1/chat/completions/render",
      protocol: "vllm",
      about: DOCS && "a chat body's prompt as the token ids the model evaluates, as vLLM's render API",
      handle: (r) => handleChatRender(r, context),
    },
    {
      method: "POST",
      path: "/v1/completions/render",
      protocol: "vllm",
      about: DOCS && "a completions body's prompt as the token ids the model evaluates, as vLLM's render API",
      handle: (r) => handleCompletionRender(r, context),
    },
  ]);
}

/** llama-server's operator endpoints, for admin keys (docs/contract.md, "Operator endpoints"). */
function operatorRoutes(context: AppContext): Route[] {
  return inSection("operator-endpoints-get-slots-get-props", [
    {
      method: "GET",
      path: "/slots",
      protocol: "openai",
      about:
        DOCS && "every sequence of the loaded models: busy or idle, its tokens, request, key and decode rate (admin)",
      forms: [{ form: "?saved=true", about: DOCS && "the states the KV cache tiers keep (admin)" }],
      handle: (r) => handleSlots(r, context),
    },
    {
      method: "GET",
      path: "/props",
      protocol: "openai",
      about: DOCS && "a model's server properties, as llama-server's web UI and llama-swap read them (admin)",
      handle: (r) => handleProps(r, context),
    },
  ]);
}

/** Ollama's API (docs/contract.md, "Ollama"): its shapes, NDJSON streams and errors. */
function ollamaRoutes(context: AppContext): Route[] {
  const route = (method: "GET" | "POST" | "DELETE", path: string, about: string, handle: Route["handle"]): Route => ({
    method,
    path,
    protocol: "ollama",
    about: DOCS && about,
    contract: "ollama-api",
    handle,
  });
  return [
    route("POST", "/api/chat", "Ollama chat, NDJSON or one answer", (r) => handleOllamaChat(r, context)),
    route("POST", "/api/generate", "Ollama generate, NDJSON or one answer", (r) => handleOllamaGenerate(r, context)),
    route("POST", "/api/embed", "Ollama embeddings", (r) => handleOllamaEmbed(r, context)),
    route("POST", "/api/embeddings", "Ollama's older embeddings", (r) => handleOllamaEmbeddings(r, context)),
    route("GET", "/api/tags", "the catalogued models, as Ollama lists them", (r) => handleOllamaTags(r, context)),
    route("POST", "/api/show", "one model: details, template, capabilities", (r) => handleOllamaShow(r, context)),
    route("GET", "/api/ps", "the loaded models and when they unload", (r) => handleOllamaPs(r, context)),
    route("GET", "/api/version", "the Ollama API version answered", (r) => handleOllamaVersion(r, context)),
    route("POST", "/api/pull", "a catalogued model loaded, or one downloaded by address (admin), with progress", (r) =>
      handleOllamaPull(r, context),
    ),
    route("DELETE", "/api/delete", "a model's file deleted from the models folder (admin)", (r) =>
      handleOllamaDelete(r, context),
    ),
  ];
}

/**
 * Every route; the state's routes only with a store (without one, /v1/responses and /v1/messages
 * keep nothing), the batch routes only with batches (a store and the host's file store).
 */
export function routeTable(
  context: AppContext,
  access: AccessMode,
  store?: Stores,
  batches?: Batches,
): readonly Route[] {
  const discovery = "discovery-and-health-get-v1info-get-health";
  const routes: Route[] = [
    ...generationRoutes(context, store),
    ...modelRoutes(context),
    ...tokenizerRoutes(context),
    ...ollamaRoutes(context),
    ...renderRoutes(context),
    ...operatorRoutes(context),
    ...(store === undefined ? [] : conversationRoutes(context, store)),
    ...(store === undefined ? [] : openAiConversationRoutes(context, store)),
    ...(batches === undefined ? [] : [...openAiBatchRoutes(context, batches), ...messageBatchRoutes(context, batches)]),
    {
      method: "GET",
      path: "/v1/streams/:id",
      protocol: "openai",
      about: DOCS && "a resumable stream read again after `Last-Event-ID`, then live to its end",
      contract: "resumable-streams-x-resumable-get-v1streamsid",
      handle: (r) => handleResumeStream(decodePathSegment(r.params["id"] ?? ""), r, context),
    },
    {
      method: "GET",
      path: "/v1/info",
      protocol: "server",
      about: DOCS && "discovery: the server, its models, endpoints and limits",
      contract: discovery,
      handle: (r) => handleInfo(r, context, routes, access),
    },
    {
      method: "GET",
      path: "/health",
      protocol: "server",
      about: DOCS && "whether the sidecar answers",
      contract: discovery,
      handle: (r) => handleHealth(r, context),
    },
  ];
  return routes;
}
