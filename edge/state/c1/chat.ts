// POST /c1/chat: chat completions on a conversation the server keeps (docs/contract.md,
// "Conversations"). The request carries only the new turn; the stored history goes first, the
// reply streams (or not) exactly as /v1/chat/completions answers, and the finished turn is stored
// in one transaction before the closing frames. Cancelled or failed replies store nothing.
import { callerOf } from "../../access/caller.js";
import { readJsonBody } from "../../core/body.js";
import type { AppContext } from "../../core/context.js";
import { ConflictError, NotFoundError } from "../../base/errors.js";
import type { GenerationResult } from "../../upstream/generation.js";
import { addAnswerHeaders, withProtocolHeaders } from "../../core/protocol-family.js";
import { chatEndpoint } from "../../protocols/openai-chat/handler.js";
import type { chatRequestSchema, ChatRequest } from "../../protocols/openai-chat/schema.js";
import { openAiProtocol } from "../../protocols/openai-common/protocol.js";
import { generateFor } from "../../core/serve.js";
import type { Endpoint } from "../../core/endpoint.js";
import { TurnConflictError, type C1Store, type StoredMessage } from "./store.js";
import { CONVERSATION_HEADER, readTurn, replyMessage, withHistory } from "./turn.js";

/** Where a finished reply is stored. */
interface PendingTurn {
  readonly owner: string;
  readonly conversationId: string;
  /** Messages stored before this turn. */
  readonly base: number;
}

async function commitTurn(
  store: C1Store,
  pending: PendingTurn,
  body: ChatRequest,
  result: GenerationResult,
  at: number,
): Promise<void> {
  const messages: StoredMessage[] = [...body.messages.slice(pending.base), replyMessage(result)];
  try {
    await store.commit({ ...pending, messages, at });
  } catch (error) {
    if (!(error instanceof TurnConflictError)) throw error;
    throw new ConflictError(
      `Conversation '${pending.conversationId}' changed while this reply was generated (another turn finished first, ` +
        `or it was ` +
        `deleted); this turn was not stored.`,
      { code: "conversation_conflict", cause: error },
    );
  }
}

/**
 * The chat-completions endpoint for one turn. A refusal before the first token (a conversation
 * that no longer fits the context) is an HTTP 400 on a stream too: there is no turn to store.
 */
function turnEndpoint(store: C1Store, pending: PendingTurn, context: AppContext): Endpoint<typeof chatRequestSchema> {
  // Read again as a plain chat stream: a replay stores nothing (docs/contract.md, "Resumable streams").
  const { refusedStream: _asHttp400, ...chat } = chatEndpoint;
  return {
    ...chat,
    finished: (body, result) => commitTurn(store, pending, body, result, context.now()),
    affinity: () => ({ id: pending.conversationId }),
  };
}

/** POST /c1/chat */
export function handleConversationChat(request: Request, context: AppContext, store: C1Store): Promise<Response> {
  return withProtocolHeaders(openAiProtocol, context, request, async () => {
    const raw = await readJsonBody(request, context.maxBodyBytes);
    const turn = readTurn(raw, request);
    const owner = callerOf(request).keyId;
    const stored = turn.conversationId === undefined ? undefined : await store.get(owner, turn.conversationId);
    if (turn.conversationId !== undefined && stored === undefined) {
      throw new NotFoundError(`No conversation found with id '${turn.conversationId}'.`, {
        param: "conversation_id",
        code: "conversation_not_found",
      });
    }
    const conversationId = turn.conversationId ?? `conv_${context.newId()}`;
    // Every answer names its conversation, errors included, once the conversation is known.
    addAnswerHeaders(request, { [CONVERSATION_HEADER]: conversationId });
    const history = stored?.messages ?? [];
    const body = withHistory(raw, history, turn);
    const pending: PendingTurn = { owner, conversationId, base: history.length };
    return generateFor(turnEndpoint(store, pending, context), body, request, context);
  });
}
