// The stream contract (docs/contract.md) as assertions over parsed SSE events.
import { expect } from "vitest";
import type { ParsedEvent } from "./sse.js";

interface Chunk {
  id: string;
  object: string;
  created: number;
  model: string;
  choices: {
    index: number;
    delta?: Record<string, unknown>;
    text?: string;
    finish_reason?: string | null;
  }[];
  usage?: unknown;
}

export interface ContractSummary {
  /** Concatenated content (chat) or text (completions). */
  text: string;
  finishReason: string | null;
  usage: unknown;
  error: unknown;
  done: boolean;
  /** Chat: concatenated `reasoning_content`. */
  reasoning?: string;
  /** Chat: the tool calls, their argument fragments concatenated. */
  toolCalls?: { id: string; name: string; arguments: string }[];
}

function errorEnding(events: readonly ParsedEvent[]): unknown {
  const errors = events.filter((e) => e.event === "error");
  if (errors.length === 0) return undefined;
  expect(errors, "at most one error event").toHaveLength(1);
  expect(events.at(-1)?.event, "the error event is the last event").toBe("error");
  expect(
    events.some((e) => e.data === "[DONE]"),
    "no [DONE] after an error",
  ).toBe(false);
  const data = JSON.parse(errors[0]?.data ?? "null") as Record<string, unknown>;
  // The fields at the top level, and an `error` object for the OpenAI SDKs.
  expect(data).toMatchObject({ message: expect.any(String), type: expect.any(String) });
  expect(data["error"]).toEqual({
    message: data["message"],
    type: data["type"],
    param: data["param"] ?? null,
    code: data["code"] ?? null,
  });
  return data;
}

function chunksOf(events: readonly ParsedEvent[], object: string): Chunk[] {
  const data = events.filter((e) => e.event === "message" && e.data !== "[DONE]");
  const chunks = data.map((e) => JSON.parse(e.data) as Chunk);
  const first = chunks[0];
  for (const chunk of chunks) {
    expect(chunk.object).toBe(object);
    expect(chunk.id, "same id on every chunk").toBe(first?.id);
    expect(chunk.created, "same created on every chunk").toBe(first?.created);
    expect(chunk.model, "same model on every chunk").toBe(first?.model);
  }
  return chunks;
}

function doneRule(events: readonly ParsedEvent[], error: unknown): boolean {
  const done = events.filter((e) => e.data === "[DONE]");
  if (error !== undefined) return false;
  if (done.length === 0) return false;
  expect(done, "[DONE] once").toHaveLength(1);
  expect(events.at(-1)?.data, "[DONE] last").toBe("[DONE]");
  return true;
}

/** Tail rule shared by both endpoints: after the terminal chunk only a usage chunk. */
function terminalAndUsage(chunks: readonly Chunk[], terminalAt: number): { reason: string | null; usage: unknown } {
  if (terminalAt === -1) return { reason: null, usage: undefined };
  const after = chunks.slice(terminalAt + 1);
  expect(after.length, "at most one chunk (usage) after the terminal chunk").toBeLessThanOrEqual(1);
  let usage: unknown;
  for (const chunk of after) {
    expect(chunk.choices, "the usage chunk has empty choices").toEqual([]);
    expect(chunk.usage).toBeDefined();
    usage = chunk.usage;
  }
  return { reason: chunks[terminalAt]?.choices[0]?.finish_reason ?? null, usage };
}

/**
 * `id`, `type` and `function.name` only on the first delta of each
 * tool-call index (with empty arguments), indexes from 0 in order; later deltas carry the index
 * and argument fragments only.
 */
function checkToolCallDelta(
  call: Record<string, unknown>,
  calls: { id: string; name: string; arguments: string }[],
): void {
  const index = call["index"];
  expect(typeof index, "a tool-call delta has an index").toBe("number");
  const fn = call["function"] as Record<string, unknown> | undefined;
  if (index === calls.length) {
    expect(call, "the first delta of a call").toEqual({
      index,
      id: expect.any(String),
      type: "function",
      function: { name: expect.any(String), arguments: "" },
    });
    expect(
      calls.map((c) => c.id),
      "each call has its own id",
    ).not.toContain(call["id"]);
    calls.push({ id: String(call["id"]), name: String(fn?.["name"]), arguments: "" });
    return;
  }
  expect(index, "a later delta belongs to the latest call").toBe(calls.length - 1);
  expect(call, "a later delta of a call: index and arguments only").toEqual({
    index,
    function: { arguments: expect.any(String) },
  });
  const current = calls[calls.length - 1];
  if (current !== undefined) current.arguments += String(fn?.["arguments"]);
}

export function checkChatStream(events: readonly ParsedEvent[]): ContractSummary {
  const error = errorEnding(events);
  const done = doneRule(events, error);
  const chunks = chunksOf(events, "chat.completion.chunk");
  if (chunks.length === 0) {
    expect(error, "a stream without chunks is an error stream").toBeDefined();
    return { text: "", finishReason: null, usage: undefined, error, done };
  }
  // 1. the role frame, first and only once, without content
  expect(chunks[0]?.choices).toEqual([{ index: 0, delta: { role: "assistant" }, finish_reason: null }]);
  let text = "";
  let reasoning = "";
  const calls: { id: string; name: string; arguments: string }[] = [];
  let terminalAt = -1;
  chunks.slice(1).forEach((chunk, i) => {
    if (terminalAt !== -1) return;
    const choice = chunk.choices[0];
    expect(chunk.choices).toHaveLength(1);
    expect(choice?.delta, "no role after the first chunk").not.toHaveProperty("role");
    if (choice?.finish_reason !== null) {
      // 3. the terminal chunk
      expect(choice?.delta, "terminal delta is {}").toEqual({});
      expect(["stop", "length", "tool_calls"]).toContain(choice?.finish_reason);
      terminalAt = i + 1;
    } else {
      // 2. content chunks: one kind per delta — content, reasoning_content or tool_calls
      const delta = choice.delta ?? {};
      const kinds = Object.keys(delta);
      expect(kinds, "one kind of content per delta").toHaveLength(1);
      if ("content" in delta) {
        expect(typeof delta["content"]).toBe("string");
        text += String(delta["content"]);
      } else if ("reasoning_content" in delta) {
        expect(typeof delta["reasoning_content"]).toBe("string");
        reasoning += String(delta["reasoning_content"]);
      } else {
        const toolCalls = delta["tool_calls"] as Record<string, unknown>[] | undefined;
        expect(toolCalls, "a delta carries content, reasoning_content or tool_calls").toBeDefined();
        for (const call of toolCalls ?? []) checkToolCallDelta(call, calls);
      }
    }
  });
  if (done) expect(terminalAt, "a finished stream has a terminal chunk").not.toBe(-1);
  const { reason, usage } = terminalAndUsage(chunks, terminalAt);
  // finish_reason "tool_calls" only if a call was actually sent.
  if (reason === "tool_calls") expect(calls.length, "tool_calls finish without a call").toBeGreaterThan(0);
  if (calls.length > 0 && reason !== null) expect(["tool_calls", "length"]).toContain(reason);
  return { text, finishReason: reason, usage, error, done, reasoning, toolCalls: calls };
}

export function checkCompletionStream(events: readonly ParsedEvent[]): ContractSummary {
  const error = errorEnding(events);
  const done = doneRule(events, error);
  const chunks = chunksOf(events, "text_completion");
  let text = "";
  let terminalAt = -1;
  chunks.forEach((chunk, i) => {
    if (terminalAt !== -1) return;
    expect(chunk.choices).toHaveLength(1);
    const choice = chunk.choices[0];
    expect(typeof choice?.text).toBe("string");
    if (choice?.finish_reason !== null) {
      expect(choice?.text, "the terminal chunk has no text").toBe("");
      expect(["stop", "length"]).toContain(choice?.finish_reason);
      terminalAt = i;
    } else {
      text += choice.text;
    }
  });
  if (done) expect(terminalAt).not.toBe(-1);
  const { reason, usage } = terminalAndUsage(chunks, terminalAt);
  return { text, finishReason: reason, usage, error, done };
}

// ---- Anthropic Messages ---------------------------------------------------------
//   message_start → per block content_block_start / content_block_delta… /
//   content_block_stop (one open block at a time, indices 0, 1, 2…, delta type
//   matching the block) → message_delta → message_stop; `event:` equals the data's
//   `type`; `ping` anywhere before the end; a failure is one last `event: error`.

/** The delta types each block type may receive. */
const ANTHROPIC_DELTAS: Readonly<Record<string, readonly string[]>> = {
  text: ["text_delta"],
  thinking: ["thinking_delta", "signature_delta"],
  tool_use: ["input_json_delta"],
};
const ANTHROPIC_STOP_REASONS = ["end_turn", "max_tokens", "stop_sequence", "tool_use", "model_context_window_exceeded"];

export interface AnthropicSummary {
  /** The concatenated text_delta texts. */
  text: string;
  /** Each block's type and its concatenated delta text. */
  blocks: { type: string; text: string }[];
  message: Record<string, unknown> | undefined;
  stopReason: string | null;
  stopSequence: string | null;
  /** message_start's usage with message_delta's output_tokens. */
  usage: Record<string, unknown> | undefined;
  error: unknown;
  /** message_stop was sent. */
  done: boolean;
  pings: number;
}

type Data = Record<string, unknown> & { type?: unknown };

function asRecord(value: unknown): Record<string, unknown> {
  expect(value !== null && typeof value === "object", `${JSON.stringify(value)} is an object`).toBe(true);
  return value as Record<string, unknown>;
}

/** What the Anthropic check carries from one event to the next. */
interface AnthropicState {
  readonly summary: AnthropicSummary;
  /** The open content block. */
  open: { index: number; type: string } | undefined;
  /** The open block's signature_delta was seen. */
  signed: boolean;
  /** message_delta was seen. */
  sawDelta: boolean;
  /** message_stop or error was seen. */
  ended: boolean;
}

type AnthropicCheck = (st: AnthropicState, data: Data, i: number) => void;

function anthropicMessageStart(st: AnthropicState, data: Data, i: number): void {
  expect(st.summary.message, "one message_start, first").toBeUndefined();
  expect(i - st.summary.pings, "message_start is the first event").toBe(0);
  const message = asRecord(data["message"]);
  expect(message).toMatchObject({
    type: "message",
    role: "assistant",
    content: [],
    stop_reason: null,
    stop_sequence: null,
  });
  expect(String(message["id"])).toMatch(/^msg_/);
  expect(typeof message["model"]).toBe("string");
  const usage = asRecord(message["usage"]);
  expect(typeof usage["input_tokens"]).toBe("number");
  expect(typeof usage["output_tokens"]).toBe("number");
  st.summary.message = message;
  st.summary.usage = { ...usage };
}

function anthropicBlockStart(st: AnthropicState, data: Data): void {
  expect(st.open, "one open block at a time").toBeUndefined();
  expect(st.sawDelta, "no block after message_delta").toBe(false);
  expect(data["index"], "blocks are numbered 0, 1, 2…").toBe(st.summary.blocks.length);
  const block = asRecord(data["content_block"]);
  const type = String(block["type"]);
  expect(Object.keys(ANTHROPIC_DELTAS), "a known block type").toContain(type);
  if (type === "text") expect(block).toEqual({ type: "text", text: "" });
  if (type === "thinking") expect(block).toEqual({ type: "thinking", thinking: "", signature: "" });
  if (type === "tool_use")
    expect(block).toEqual({ type: "tool_use", id: expect.any(String), name: expect.any(String), input: {} });
  st.open = { index: Number(data["index"]), type };
  st.signed = false;
  st.summary.blocks.push({ type, text: "" });
}

function anthropicBlockDelta(st: AnthropicState, data: Data): void {
  expect(st.open, "a delta inside an open block").toBeDefined();
  expect(data["index"], "the delta's index is the open block's").toBe(st.open?.index);
  const delta = asRecord(data["delta"]);
  expect(ANTHROPIC_DELTAS[st.open?.type ?? ""], "delta type matches the block").toContain(delta["type"]);
  expect(st.signed, "the signature is a thinking block's last delta").toBe(false);
  if (delta["type"] === "signature_delta") st.signed = true;
  const piece = String(delta["text"] ?? delta["thinking"] ?? delta["partial_json"] ?? "");
  const block = st.summary.blocks.at(-1);
  if (block !== undefined) block.text += piece;
  if (delta["type"] === "text_delta") {
    expect(typeof delta["text"]).toBe("string");
    expect(delta["text"], "no empty text deltas").not.toBe("");
    st.summary.text += String(delta["text"]);
  }
}

function anthropicBlockStop(st: AnthropicState, data: Data): void {
  expect(st.open, "a stop closes an open block").toBeDefined();
  if (st.open?.type === "thinking") expect(st.signed, "a thinking block is signed before it stops").toBe(true);
  expect(data).toEqual({ type: "content_block_stop", index: st.open?.index });
  st.open = undefined;
}

function anthropicMessageDelta(st: AnthropicState, data: Data): void {
  expect(st.open, "every block is closed before message_delta").toBeUndefined();
  expect(st.sawDelta, "one message_delta").toBe(false);
  st.sawDelta = true;
  const delta = asRecord(data["delta"]);
  expect(ANTHROPIC_STOP_REASONS).toContain(delta["stop_reason"]);
  const usedTools = st.summary.blocks.some((b) => b.type === "tool_use");
  if (delta["stop_reason"] === "tool_use") expect(usedTools, "stop_reason tool_use needs a tool_use block").toBe(true);
  if (usedTools)
    expect(["tool_use", "max_tokens"], "a reply with tool_use stops for it").toContain(delta["stop_reason"]);
  if (delta["stop_reason"] === "stop_sequence") expect(typeof delta["stop_sequence"]).toBe("string");
  else expect(delta["stop_sequence"]).toBeNull();
  const usage = asRecord(data["usage"]);
  expect(typeof usage["output_tokens"]).toBe("number");
  st.summary.stopReason = String(delta["stop_reason"]);
  st.summary.stopSequence = (delta["stop_sequence"] as string | null) ?? null;
  st.summary.usage = { ...st.summary.usage, ...usage };
}

/** Each Anthropic event type's checks. */
const ANTHROPIC_EVENTS = new Map<string, AnthropicCheck>([
  [
    "ping",
    (st, data) => {
      expect(data).toEqual({ type: "ping" });
      st.summary.pings++;
    },
  ],
  ["message_start", anthropicMessageStart],
  ["content_block_start", anthropicBlockStart],
  ["content_block_delta", anthropicBlockDelta],
  ["content_block_stop", anthropicBlockStop],
  ["message_delta", anthropicMessageDelta],
  [
    "message_stop",
    (st, data) => {
      expect(st.sawDelta, "message_stop follows message_delta").toBe(true);
      expect(data).toEqual({ type: "message_stop" });
      st.summary.done = true;
      st.ended = true;
    },
  ],
  [
    "error",
    (st, data) => {
      expect(asRecord(data["error"])).toMatchObject({ type: expect.any(String), message: expect.any(String) });
      expect(Object.keys(data).sort()).toEqual(["error", "type"]);
      st.summary.error = data;
      st.ended = true;
    },
  ],
]);

export function checkAnthropicStream(events: readonly ParsedEvent[]): AnthropicSummary {
  const summary: AnthropicSummary = {
    text: "",
    blocks: [],
    message: undefined,
    stopReason: null,
    stopSequence: null,
    usage: undefined,
    error: undefined,
    done: false,
    pings: 0,
  };
  const st: AnthropicState = { summary, open: undefined, signed: false, sawDelta: false, ended: false };
  events.forEach((event, i) => {
    expect(st.ended, `nothing after the end (event ${i}: ${event.event})`).toBe(false);
    const data = JSON.parse(event.data) as Data;
    expect(event.event, "the event: line names the data's type").toBe(data.type);
    if (data.type !== "message_start" && data.type !== "error") {
      expect(summary.message, `${String(data.type)} after message_start`).toBeDefined();
    }
    const check = typeof data.type === "string" ? ANTHROPIC_EVENTS.get(data.type) : undefined;
    if (check === undefined) expect.unreachable(`unknown event type ${JSON.stringify(data.type)}`);
    else check(st, data, i);
  });
  expect(st.ended, "the stream ends with message_stop or error").toBe(true);
  return summary;
}

// ---- OpenAI Responses -----------------------------------------------------------
//   data-only frames with `type` and `sequence_number` 0, 1, 2…;
//   response.created → response.in_progress → per item output_item.added →
//   (content_part.added → output_text.delta… → output_text.done →
//   content_part.done)… → output_item.done, one open item and part at a time,
//   output_index = position in the final output → one terminal
//   response.completed | response.incomplete | response.failed → data: [DONE].

const TERMINALS = ["response.completed", "response.incomplete", "response.failed"];

export interface ResponsesSummary {
  text: string;
  /** Concatenated reasoning_text deltas. */
  reasoning: string;
  /** The terminal event's type, or null. */
  terminal: string | null;
  /** The terminal event's response. */
  response: Record<string, unknown> | undefined;
  usage: unknown;
  error: unknown;
  done: boolean;
  /** The items as output_item.done sent them. */
  items: Record<string, unknown>[];
}

/** Responses output item types and their id prefixes. */
const RESPONSES_ITEMS: Readonly<Record<string, string>> = { message: "msg_", reasoning: "rs_", function_call: "fc_" };

/** The content part of a message or reasoning item. */
function partOf(itemType: string | undefined, text: string): Record<string, unknown> {
  return itemType === "reasoning"
    ? { type: "reasoning_text", text }
    : { type: "output_text", text, annotations: [], logprobs: [] };
}

/** What the Responses check carries from one event to the next. */
interface ResponsesState {
  readonly summary: ResponsesSummary;
  /** The first response's id, which every later one repeats. */
  responseId: string | undefined;
  /** The open output item. */
  item:
    | { id: string; index: number; type: string; parts: string[]; added: Record<string, unknown>; arguments: string }
    | undefined;
  /** The open content part. */
  part: { index: number; text: string } | undefined;
}

type ResponsesCheck = (st: ResponsesState, data: Data, type: string, i: number) => void;

function checkResponse(st: ResponsesState, value: unknown, status: string): Record<string, unknown> {
  const response = asRecord(value);
  expect(response["object"]).toBe("response");
  expect(String(response["id"])).toMatch(/^resp_/);
  st.responseId ??= String(response["id"]);
  expect(response["id"], "the same response id throughout").toBe(st.responseId);
  expect(response["status"]).toBe(status);
  return response;
}

/** The event belongs to the open item. */
function inOpenItem(st: ResponsesState, data: Data, type: string): void {
  expect(st.item, `${type} inside an open item`).toBeDefined();
  expect(data["item_id"]).toBe(st.item?.id);
  expect(data["output_index"]).toBe(st.item?.index);
}

function responsesStarted(st: ResponsesState, data: Data, _type: string, i: number): void {
  expect(i).toBeLessThan(2);
  const response = checkResponse(st, data["response"], "in_progress");
  expect(response["output"]).toEqual([]);
}

function responsesItemAdded(st: ResponsesState, data: Data): void {
  expect(st.item, "one open item at a time").toBeUndefined();
  expect(data["output_index"], "output_index is the item's position in output").toBe(st.summary.items.length);
  const added = asRecord(data["item"]);
  expect(added["status"]).toBe("in_progress");
  const itemType = String(added["type"]);
  expect(Object.keys(RESPONSES_ITEMS), "a known item type").toContain(itemType);
  expect(String(added["id"])).toMatch(new RegExp(`^${RESPONSES_ITEMS[itemType] ?? "?"}`));
  if (itemType === "message") expect(added).toMatchObject({ role: "assistant", content: [] });
  if (itemType === "reasoning") expect(added).toMatchObject({ summary: [], content: [] });
  if (itemType === "function_call") {
    expect(added).toMatchObject({ call_id: expect.any(String), name: expect.any(String), arguments: "" });
  }
  st.item = {
    id: String(added["id"]),
    index: st.summary.items.length,
    type: itemType,
    parts: [],
    added,
    arguments: "",
  };
}

function responsesPartAdded(st: ResponsesState, data: Data, type: string): void {
  inOpenItem(st, data, type);
  expect(st.part, "one open part at a time").toBeUndefined();
  expect(st.item?.type, "content parts only in message and reasoning items").not.toBe("function_call");
  expect(data["content_index"]).toBe(st.item?.parts.length);
  expect(data["part"]).toEqual(partOf(st.item?.type, ""));
  st.part = { index: Number(data["content_index"]), text: "" };
}

function responsesTextDelta(st: ResponsesState, data: Data, type: string): void {
  inOpenItem(st, data, type);
  expect(st.part, "a delta inside an open part").toBeDefined();
  expect(st.item?.type, `${type} only in ${type.includes("reasoning") ? "reasoning" : "message"} items`).toBe(
    type.includes("reasoning") ? "reasoning" : "message",
  );
  expect(data["content_index"]).toBe(st.part?.index);
  expect(typeof data["delta"]).toBe("string");
  expect(data["delta"], "no empty deltas").not.toBe("");
  if (st.part !== undefined) st.part.text += String(data["delta"]);
  if (st.item?.type === "message") st.summary.text += String(data["delta"]);
  else st.summary.reasoning += String(data["delta"]);
}

function responsesTextDone(st: ResponsesState, data: Data, type: string): void {
  inOpenItem(st, data, type);
  expect(data["content_index"]).toBe(st.part?.index);
  expect(data["text"], "done carries the whole text").toBe(st.part?.text);
}

function responsesPartDone(st: ResponsesState, data: Data, type: string): void {
  inOpenItem(st, data, type);
  expect(data["content_index"]).toBe(st.part?.index);
  expect(data["part"]).toEqual(partOf(st.item?.type, st.part?.text ?? ""));
  st.item?.parts.push(st.part?.text ?? "");
  st.part = undefined;
}

function responsesArgumentsDelta(st: ResponsesState, data: Data, type: string): void {
  inOpenItem(st, data, type);
  expect(st.item?.type, "argument deltas only in function_call items").toBe("function_call");
  expect(data["delta"], "no empty deltas").not.toBe("");
  if (st.item !== undefined) st.item.arguments += String(data["delta"]);
}

function responsesArgumentsDone(st: ResponsesState, data: Data, type: string): void {
  inOpenItem(st, data, type);
  expect(st.item?.type).toBe("function_call");
  expect(data["arguments"], "done carries the whole arguments").toBe(st.item?.arguments);
  expect(data["name"]).toBe(st.item?.added["name"]);
}

function responsesItemDone(st: ResponsesState, data: Data): void {
  const { item } = st;
  expect(item, "done closes an open item").toBeDefined();
  expect(st.part, "parts are closed before their item").toBeUndefined();
  expect(data["output_index"]).toBe(item?.index);
  const done = asRecord(data["item"]);
  expect(done["id"]).toBe(item?.id);
  expect(["completed", "incomplete"]).toContain(done["status"]);
  if (item?.type === "function_call") {
    expect(done).toMatchObject({ call_id: item.added["call_id"], name: item.added["name"], arguments: item.arguments });
  } else {
    const open = item;
    expect(done["content"]).toEqual(open?.parts.map((text) => partOf(open.type, text)));
  }
  st.summary.items.push(done);
  st.item = undefined;
}

function responsesTerminal(st: ResponsesState, data: Data, type: string): void {
  const { summary } = st;
  const status = type.slice("response.".length);
  const response = checkResponse(st, data["response"], status);
  summary.terminal = type;
  summary.response = response;
  if (type === "response.failed") {
    expect(asRecord(response["error"])).toMatchObject({ code: expect.any(String), message: expect.any(String) });
    summary.error = response["error"];
    return;
  }
  expect(st.item, "every item is closed before the terminal event").toBeUndefined();
  expect(response["output"], "the terminal output is the items sent").toEqual(summary.items);
  expect(response["error"]).toBeNull();
  if (type === "response.incomplete") expect(response["incomplete_details"]).toEqual({ reason: "max_output_tokens" });
  else expect(response["incomplete_details"]).toBeNull();
  if ("output_text" in response) expect(response["output_text"]).toBe(summary.text);
  const usage = asRecord(response["usage"]);
  expect(usage["total_tokens"]).toBe(Number(usage["input_tokens"]) + Number(usage["output_tokens"]));
  summary.usage = usage;
}

/** Each Responses event type's checks. */
const RESPONSES_EVENTS = new Map<string, ResponsesCheck>([
  ["response.created", responsesStarted],
  ["response.in_progress", responsesStarted],
  ["response.output_item.added", responsesItemAdded],
  ["response.content_part.added", responsesPartAdded],
  ["response.output_text.delta", responsesTextDelta],
  ["response.reasoning_text.delta", responsesTextDelta],
  ["response.output_text.done", responsesTextDone],
  ["response.reasoning_text.done", responsesTextDone],
  ["response.content_part.done", responsesPartDone],
  ["response.function_call_arguments.delta", responsesArgumentsDelta],
  ["response.function_call_arguments.done", responsesArgumentsDone],
  ["response.output_item.done", responsesItemDone],
  ...TERMINALS.map((terminal): [string, ResponsesCheck] => [terminal, responsesTerminal]),
]);

export function checkResponsesStream(events: readonly ParsedEvent[]): ResponsesSummary {
  const summary: ResponsesSummary = {
    text: "",
    reasoning: "",
    terminal: null,
    response: undefined,
    usage: undefined,
    error: undefined,
    done: false,
    items: [],
  };
  // Every event is named by its type (`event:` equal to the data's `type`); [DONE] is a plain data frame.
  for (const event of events) {
    if (event.data === "[DONE]") expect(event.event, "[DONE] has no event: line").toBe("message");
    else expect(event.event, "event: names the data's type").toBe((JSON.parse(event.data) as { type?: string }).type);
  }
  const doneAt = events.findIndex((e) => e.data === "[DONE]");
  if (doneAt !== -1) {
    expect(doneAt, "[DONE] is last and once").toBe(events.length - 1);
    summary.done = true;
  }
  const payloads = events.filter((e) => e.data !== "[DONE]").map((e) => JSON.parse(e.data) as Data);
  const st: ResponsesState = { summary, responseId: undefined, item: undefined, part: undefined };
  payloads.forEach((data, i) => {
    expect(data["sequence_number"], "sequence numbers grow by one from 0").toBe(i);
    expect(summary.terminal, `nothing but [DONE] after ${String(summary.terminal)}`).toBeNull();
    const type = String(data.type);
    if (i === 0) expect(type, "response.created first").toBe("response.created");
    if (i === 1) expect(type, "response.in_progress second").toBe("response.in_progress");
    const check = RESPONSES_EVENTS.get(type);
    if (check === undefined) expect.unreachable(`unknown event type ${type}`);
    else check(st, data, type, i);
  });
  expect(TERMINALS, "the stream ends with a terminal event").toContain(summary.terminal);
  expect(summary.done, "[DONE] after the terminal event").toBe(true);
  return summary;
}

/** The Responses WebSocket mode's error message for a previous_response_id it cannot continue. */
export function socketNotFound(id: string): unknown {
  return {
    type: "error",
    status: 400,
    error: {
      type: "invalid_request_error",
      code: "previous_response_not_found",
      message: `Previous response with id '${id}' not found.`,
      param: "previous_response_id",
    },
  };
}
