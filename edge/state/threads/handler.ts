// POST /v1/messages on a server with a store (docs/contract.md, "Anthropic message threads"): a
// request without `thread` is answered as without a store; `thread: {type: "create"}` keeps the
// conversation and `{type: "continue", previous_message_id}` continues it from that reply, the
// client sending only the new turn. The finished turn (its messages and the reply) is stored in
// one statement after the last token, before the closing frames or the body; a failed or cancelled
// reply stores nothing.
import * as z from "zod";
import { callerOf } from "../../access/caller.js";
import { readJsonBody } from "../../core/body.js";
import type { AppContext } from "../../core/context.js";
import { withProtocolHeaders } from "../../core/protocol-family.js";
import { messagesEndpoint } from "../../protocols/anthropic-messages/handler.js";
import { anthropicProtocol } from "../../protocols/anthropic-messages/protocol.js";
import { messagesRequestSchema, threadParam } from "../../protocols/anthropic-messages/schema.js";
import { generateFor } from "../../core/serve.js";
import type { Endpoint } from "../../core/endpoint.js";
import type { ThreadStore } from "./store.js";
import { parseRequest } from "../../core/validation.js";
import { continueTurn, createTurn, turnMessages, type ThreadTurnRequest } from "./turn.js";

const threadOnly = z.object({ thread: threadParam.nullish() });

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** The Messages endpoint of one thread turn: answered as ever, the finished turn stored. */
function threadEndpoint(
  store: ThreadStore,
  owner: string,
  turn: ThreadTurnRequest,
  context: AppContext,
): Endpoint<typeof messagesRequestSchema> {
  return {
    ...messagesEndpoint,
    finished: (body, result, meta) =>
      store.putThreadTurn({
        id: meta.id,
        owner,
        parent: turn.parent,
        createdAt: context.now(),
        ...(turn.fixed === undefined ? {} : { fixed: turn.fixed }),
        messages: turnMessages(turn, body, meta, result),
      }),
  };
}

/** POST /v1/messages */
export function handleThreadedMessages(request: Request, context: AppContext, store: ThreadStore): Promise<Response> {
  return withProtocolHeaders(anthropicProtocol, context, request, async () => {
    const raw = await readJsonBody(request, context.maxBodyBytes);
    const thread = isRecord(raw) ? parseRequest(threadOnly, raw).thread : undefined;
    if (thread == null || !isRecord(raw))
      return generateFor(messagesEndpoint, parseRequest(messagesRequestSchema, raw), request, context);
    const owner = callerOf(request).keyId;
    const turn =
      thread.type === "create" ? createTurn(raw) : await continueTurn(raw, thread.previous_message_id, store, owner);
    return generateFor(threadEndpoint(store, owner, turn, context), turn.body, request, context);
  });
}
