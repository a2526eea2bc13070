// The affinity key of a generation (docs/decisions.md, "Several sidecars behind one edge"): the
// sidecar that served a conversation's earlier turns still holds their tokens in its KV cache, so
// its later turns should go there too. An explicit id (the /c1 conversation, the Responses
// `conversation`) is the key when the route has one; else the prompt's opening — the tools, the
// system prompt and the messages up to the first user message, or a raw prompt's first
// characters — when it is long enough for a cached copy to matter or the request continues a
// conversation (every turn of a `previous_response_id` chain, or of a client that resends the
// history, repeats the same opening). A `prompt_cache_key` joins the key: key and opening together
// when the opening is long enough, the key alone otherwise, so requests sharing a key land on one
// sidecar. Without a key the least loaded sidecar is picked.
import { toJsonString } from "@bufbuild/protobuf";
import {
  ChatMessageSchema,
  Role,
  ToolSchema,
  type GenerateRequest,
} from "../../proto/gen/inference/v1/inference_pb.js";
import { sha256Hex } from "./rendezvous.js";

/** An opening at least this long (characters) is worth keeping on one sidecar. */
export const OPENING_MIN_CHARS = 512;

/** How much of a raw prompt is its opening. */
export const PROMPT_OPENING_CHARS = 4096;

/** What a route knows of a request's conversation. */
export interface Affinity {
  /** A conversation id that names every turn alike (the /c1 conversation, the Responses `conversation`). */
  readonly id?: string | undefined;
  /** The request continues an earlier response (`previous_response_id`): key on the opening. */
  readonly continues?: boolean;
  /** The caller's `prompt_cache_key`: requests sharing it go to one sidecar. */
  readonly cacheKey?: string | undefined;
}

/** The id of a Responses `conversation` field: the id itself, or `{ id }`. */
export function conversationIdOf(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (typeof value === "object" && value !== null && "id" in value && typeof value.id === "string") return value.id;
  return undefined;
}

/** The request's opening as text, and whether the request continues a conversation. */
export function openingOf(
  request: GenerateRequest,
): { readonly text: string; readonly continues: boolean } | undefined {
  switch (request.input.case) {
    case "prompt":
      return { text: request.input.value.slice(0, PROMPT_OPENING_CHARS), continues: false };
    case "infill": {
      // The prompt opens with the repository context, then the file up to the cursor: a file's edits share it.
      const { files, prefix } = request.input.value;
      const text = [...files.map((f) => `${f.filename}\n${f.text}`), prefix].join("\n");
      return { text: text.slice(0, PROMPT_OPENING_CHARS), continues: false };
    }
    case "chat": {
      const { messages, tools } = request.input.value;
      const firstUser = messages.findIndex((m) => m.role === Role.USER);
      const opening = firstUser < 0 ? messages : messages.slice(0, firstUser + 1);
      const parts = [
        ...tools.map((t) => toJsonString(ToolSchema, t)),
        ...opening.map((m) => toJsonString(ChatMessageSchema, m)),
      ];
      return { text: parts.join("\n"), continues: messages.some((m) => m.role === Role.ASSISTANT) };
    }
    case undefined:
      return undefined;
  }
}

/**
 * The routing key: the conversation id when the route has one; else a digest of the opening when it
 * is long or the request continues a conversation (with the cache key when there is one); else the
 * cache key alone; else undefined (least loaded).
 */
export async function affinityKey(request: GenerateRequest, affinity: Affinity = {}): Promise<string | undefined> {
  if (affinity.id !== undefined && affinity.id !== "") return `id:${affinity.id}`;
  const continues = affinity.continues === true;
  const cacheKey = affinity.cacheKey === undefined || affinity.cacheKey === "" ? undefined : affinity.cacheKey;
  const opening = openingOf(request);
  const worth =
    opening !== undefined &&
    opening.text !== "" &&
    (opening.text.length >= OPENING_MIN_CHARS || opening.continues || continues);
  if (worth && cacheKey !== undefined) return `cache-opening:${await sha256Hex(`${cacheKey}\n${opening.text}`)}`;
  if (worth) return `opening:${await sha256Hex(opening.text)}`;
  return cacheKey === undefined ? undefined : `cache:${await sha256Hex(cacheKey)}`;
}
