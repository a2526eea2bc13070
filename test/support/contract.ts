// The stream contract (seed 000, DESIGN §3) as assertions over parsed SSE events.
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
}

function errorEnding(events: readonly ParsedEvent[]): unknown {
  const errors = events.filter((e) => e.event === "error");
  if (errors.length === 0) return undefined;
  expect(errors, "at most one error event").toHaveLength(1);
  expect(events.at(-1)?.event, "the error event is the last event").toBe("error");
  expect(events.some((e) => e.data === "[DONE]"), "no [DONE] after an error").toBe(false);
  const data = JSON.parse(errors[0]?.data ?? "null") as Record<string, unknown>;
  // Seed 000's fields at the top level, and an `error` object for the OpenAI SDKs.
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
      // 2. content chunks
      expect(typeof choice.delta?.["content"]).toBe("string");
      text += String(choice.delta?.["content"]);
    }
  });
  if (done) expect(terminalAt, "a finished stream has a terminal chunk").not.toBe(-1);
  const { reason, usage } = terminalAndUsage(chunks, terminalAt);
  return { text, finishReason: reason, usage, error, done };
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
