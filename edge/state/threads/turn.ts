// One turn of an Anthropic message thread: the request as the sidecar gets it (a create's own
// conversation; a continue's stored thread, then its new messages, with the thread's `system`
// and `tools`), validated once as one Messages body, and what the finished reply adds.
import { InvalidRequestError, NotFoundError } from "../../base/errors.js";
import type { GenerationResult } from "../../upstream/generation.js";
import { encodeMessage } from "../../protocols/anthropic-messages/encoder.js";
import { withoutCacheControl } from "../../protocols/anthropic-messages/cache-control.js";
import { messagesRequestSchema, type MessagesRequest } from "../../protocols/anthropic-messages/schema.js";
import type { ResponseMeta } from "../../core/endpoint.js";
import type { ThreadMessage, ThreadStore } from "./store.js";
import { parseRequest } from "../../core/validation.js";

/** The fields a thread keeps from the turn that created it; a continue may not send them. */
const FIXED_FIELDS = ["system", "tools"] as const;

export interface ThreadTurnRequest {
  /** The whole conversation, validated, `thread` taken out. */
  readonly body: MessagesRequest;
  /** The reply this turn continues; null when it creates the thread. */
  readonly parent: string | null;
  /** What a create fixes for the thread's later turns; undefined on a continue. */
  readonly fixed: Readonly<Record<string, unknown>> | undefined;
  /** How many of `body.messages` the thread held already. */
  readonly base: number;
}

/** `messages[N]` of the whole thread → `messages[N - base]` of the request, in a param or a message. */
function shifted(text: string, base: number): string {
  return text.replace(/messages\[(\d+)\]/g, (whole, n: string) =>
    Number(n) >= base ? `messages[${Number(n) - base}]` : whole,
  );
}

function parseWhole(fields: Record<string, unknown>, base: number): MessagesRequest {
  try {
    return parseRequest(messagesRequestSchema, { ...fields, thread: null });
  } catch (error) {
    if (!(error instanceof InvalidRequestError) || base === 0) throw error;
    throw new InvalidRequestError(shifted(error.message, base), {
      param: error.param === null ? null : shifted(error.param, base),
    });
  }
}

/** `thread: {type: "create"}`: the request's own conversation; its `system` and `tools` are kept. */
export function createTurn(fields: Record<string, unknown>): ThreadTurnRequest {
  const body = parseWhole(fields, 0);
  const fixed = Object.fromEntries(FIXED_FIELDS.map((field) => [field, fields[field] ?? null]));
  return { body, parent: null, fixed, base: 0 };
}

export function threadNotFound(id: string): NotFoundError {
  return new NotFoundError(
    `No thread holds message '${id}' for this key; send the whole conversation with thread {"type": "create"} to ` +
      `start a new one.`,
    {
      param: "thread.previous_message_id",
      details: { error_code: "thread_not_found" },
    },
  );
}

/** `thread: {type: "continue"}`: the stored thread up to `parent`, then the request's new messages. */
export async function continueTurn(
  fields: Record<string, unknown>,
  parent: string,
  store: ThreadStore,
  owner: string,
): Promise<ThreadTurnRequest> {
  const stored = await store.getThread(owner, parent);
  if (stored === undefined) throw threadNotFound(parent);
  for (const field of FIXED_FIELDS) {
    if (fields[field] != null) {
      throw new InvalidRequestError(
        `'${field}' cannot be sent when continuing a thread: the thread keeps the ${field} it was created with. ` +
          `Leave it out, or start a new thread.`,
        {
          param: field,
        },
      );
    }
  }
  const own = fields["messages"];
  const messages = Array.isArray(own) ? [...stored.messages, ...(own as unknown[])] : own;
  const body = parseWhole({ ...fields, ...stored.fixed, messages }, stored.messages.length);
  return { body, parent, fixed: undefined, base: stored.messages.length };
}

/** What the finished turn stores: its own messages as validated, then the reply as it was answered. */
export function turnMessages(
  turn: ThreadTurnRequest,
  body: MessagesRequest,
  meta: ResponseMeta,
  result: GenerationResult,
): ThreadMessage[] {
  const reply = encodeMessage(body, meta, result);
  return [...withoutCacheControl(body.messages.slice(turn.base)), { role: "assistant", content: reply.content }];
}
