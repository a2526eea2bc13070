// The three ways the edge keeps a conversation, each beside the same protocol without the store:
// /c1/chat (and /v1/chat/completions), previous_response_id (and Responses with `store: false`),
// Anthropic message threads (and /v1/messages without `thread`). Every request streams; a turn
// reports its time to first text, its prompt and cached token counts, and the id to go on from.
import { streamEvents, type EventsSample } from "../clients/events.js";
import { SEED, TEMPERATURE } from "../workload.js";

export interface ChatMessage {
  readonly role: "user" | "assistant";
  readonly content: string;
}

export interface TurnSample {
  readonly ok: boolean;
  readonly ttftMs: number;
  readonly promptTokens: number;
  readonly cachedTokens: number;
  /** The reply's text. */
  readonly text: string;
  /** What the next turn names: the conversation id, the response id or the message id. */
  readonly next: string;
  readonly error?: string | undefined;
}

export type PathName = "c1" | "responses" | "threads";

export interface StatefulPath {
  readonly name: PathName;
  readonly label: string;
  /** A new stored conversation holding `messages`. */
  create(messages: readonly ChatMessage[]): Promise<TurnSample>;
  /** The next turn of a stored conversation: only its new user message. */
  next(from: string, user: string): Promise<TurnSample>;
  /** The same protocol without the store: the whole conversation in the request. */
  stateless(messages: readonly ChatMessage[]): Promise<TurnSample>;
}

/** Tokens generated per request: the prompt is what is measured here. */
export const REPLY_TOKENS = 16;

const num = (value: unknown): number => (typeof value === "number" ? value : Number.NaN);
const record = (value: unknown): Record<string, unknown> =>
  typeof value === "object" && value !== null ? (value as Record<string, unknown>) : {};

function turn(
  sample: EventsSample,
  read: (events: readonly Record<string, unknown>[]) => Omit<TurnSample, "ok" | "ttftMs" | "error">,
): TurnSample {
  const fields = read(sample.events);
  const ok = sample.status === 200 && sample.error === undefined && Number.isFinite(sample.ttftMs);
  return {
    ok,
    ttftMs: sample.ttftMs,
    ...fields,
    error: sample.error ?? (ok ? undefined : `status ${sample.status}, no text`),
  };
}

function chatPath(edgeUrl: string, timeoutMs: number): StatefulPath {
  const body = (messages: readonly ChatMessage[]) => ({
    model: "bench",
    messages,
    max_tokens: REPLY_TOKENS,
    temperature: TEMPERATURE,
    seed: SEED,
    stream: true,
    stream_options: { include_usage: true },
  });
  const send = async (
    path: string,
    messages: readonly ChatMessage[],
    headers: Record<string, string> = {},
  ): Promise<TurnSample> => {
    const sample = await streamEvents(`${edgeUrl}${path}`, body(messages), headers, timeoutMs);
    return turn(sample, (events) => {
      const usage = record(events.findLast((e) => e["usage"] != null)?.["usage"]);
      const text = events
        .map((e) => String(record(record((e["choices"] as unknown[] | undefined)?.[0])["delta"])["content"] ?? ""))
        .join("");
      return {
        text,
        promptTokens: num(usage["prompt_tokens"]),
        cachedTokens: num(record(usage["prompt_tokens_details"])["cached_tokens"]),
        next: sample.headers.get("x-conversation-id") ?? "",
      };
    });
  };
  return {
    name: "c1",
    label: "/c1/chat (vs /v1/chat/completions)",
    create: (messages) => send("/c1/chat", messages),
    next: (from, user) => send("/c1/chat", [{ role: "user", content: user }], { "x-conversation-id": from }),
    stateless: (messages) => send("/v1/chat/completions", messages),
  };
}

function responsesPath(edgeUrl: string, timeoutMs: number): StatefulPath {
  const send = async (fields: Record<string, unknown>): Promise<TurnSample> => {
    const body = { model: "bench", max_output_tokens: REPLY_TOKENS, temperature: TEMPERATURE, stream: true, ...fields };
    const sample = await streamEvents(`${edgeUrl}/v1/responses`, body, {}, timeoutMs);
    return turn(sample, (events) => {
      const response = record(
        events.find((e) => e["type"] === "response.completed" || e["type"] === "response.incomplete")?.["response"],
      );
      const usage = record(response["usage"]);
      const text = events
        .filter((e) => e["type"] === "response.output_text.delta")
        .map((e) => String(e["delta"]))
        .join("");
      return {
        text,
        promptTokens: num(usage["input_tokens"]),
        cachedTokens: num(record(usage["input_tokens_details"])["cached_tokens"]),
        next: String(response["id"] ?? ""),
      };
    });
  };
  return {
    name: "responses",
    label: "previous_response_id (vs store: false)",
    create: (messages) => send({ input: messages, store: true }),
    next: (from, user) => send({ input: [{ role: "user", content: user }], previous_response_id: from, store: true }),
    stateless: (messages) => send({ input: messages, store: false }),
  };
}

function threadsPath(edgeUrl: string, timeoutMs: number): StatefulPath {
  const send = async (fields: Record<string, unknown>): Promise<TurnSample> => {
    const body = { model: "bench", max_tokens: REPLY_TOKENS, temperature: TEMPERATURE, stream: true, ...fields };
    const sample = await streamEvents(
      `${edgeUrl}/v1/messages`,
      body,
      { "anthropic-beta": "message-threads-2026-08-12" },
      timeoutMs,
    );
    return turn(sample, (events) => {
      const message = record(events.find((e) => e["type"] === "message_start")?.["message"]);
      const usage = record(message["usage"]);
      const text = events
        .filter((e) => e["type"] === "content_block_delta")
        .map((e) => String(record(e["delta"])["text"] ?? ""))
        .join("");
      const cached = num(usage["cache_read_input_tokens"]);
      return {
        text,
        promptTokens: num(usage["input_tokens"]) + cached,
        cachedTokens: cached,
        next: String(message["id"] ?? ""),
      };
    });
  };
  return {
    name: "threads",
    label: "Anthropic thread (vs /v1/messages)",
    create: (messages) => send({ messages, thread: { type: "create" } }),
    next: (from, user) =>
      send({ messages: [{ role: "user", content: user }], thread: { type: "continue", previous_message_id: from } }),
    stateless: (messages) => send({ messages }),
  };
}

export function statefulPaths(edgeUrl: string, timeoutMs: number): StatefulPath[] {
  return [chatPath(edgeUrl, timeoutMs), responsesPath(edgeUrl, timeoutMs), threadsPath(edgeUrl, timeoutMs)];
}
