// A /c1/chat turn: the request's new messages after the stored history, validated once as one
// chat-completions body, and what the finished reply adds to the conversation.
import * as z from "zod";
import { InvalidRequestError } from "../../base/errors.js";
import type { GenerationResult } from "../../upstream/generation.js";
import { chatMessage } from "../../protocols/openai-chat/encoder.js";
import { chatRequestSchema, type ChatRequest } from "../../protocols/openai-chat/schema.js";
import type { StoredMessage } from "./store.js";
import { parseRequest } from "../../core/validation.js";

/** The request header (and response header) that names the conversation. */
export const CONVERSATION_HEADER = "x-conversation-id";

/** What /c1/chat reads before the history is known: the conversation named, the new turn's messages. */
const turnSchema = z.object({
  conversation_id: z.string().nullish(),
  messages: z
    .array(z.unknown(), { error: "expected an array of the turn's new messages" })
    .min(1, { error: "at least one new message is required" }),
});

export interface TurnRequest {
  /** The conversation named by the header or the body; undefined starts a new one. */
  readonly conversationId: string | undefined;
  readonly messages: readonly unknown[];
}

export function readTurn(raw: unknown, request: Request): TurnRequest {
  const turn = parseRequest(turnSchema, raw);
  const header = request.headers.get(CONVERSATION_HEADER);
  const field = turn.conversation_id ?? undefined;
  if (header !== null && field !== undefined && header !== field) {
    throw new InvalidRequestError(
      `The ${CONVERSATION_HEADER} header ('${header}') and 'conversation_id' ('${field}') name different ` +
        `conversations.`,
      {
        param: "conversation_id",
      },
    );
  }
  return { conversationId: header ?? field, messages: turn.messages };
}

/** `messages[N]` of the whole conversation → `messages[N - base]` of the request, in a param or a message. */
function shifted(text: string, base: number): string {
  return text.replace(/messages\[(\d+)\]/g, (whole, n: string) =>
    Number(n) >= base ? `messages[${Number(n) - base}]` : whole,
  );
}

/**
 * The chat-completions body the sidecar gets: the stored history, then the new messages, with the
 * request's other fields. Errors name the request's own messages (`messages[0]` is the first new one).
 */
export function withHistory(raw: unknown, history: readonly StoredMessage[], turn: TurnRequest): ChatRequest {
  const { conversation_id: _ignored, ...fields } = raw as Record<string, unknown>;
  try {
    return parseRequest(chatRequestSchema, { ...fields, messages: [...history, ...turn.messages] });
  } catch (error) {
    if (!(error instanceof InvalidRequestError) || history.length === 0) throw error;
    throw new InvalidRequestError(shifted(error.message, history.length), {
      param: error.param === null ? null : shifted(error.param, history.length),
    });
  }
}

/** The assistant message a finished reply adds: its content, reasoning and tool calls. */
export function replyMessage(result: GenerationResult): StoredMessage {
  const { refusal: _refusal, ...message } = chatMessage(result).message;
  return message;
}
