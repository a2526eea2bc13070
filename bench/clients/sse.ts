// An HTTP client for streaming OpenAI-style endpoints (the edge, llama-server): plain fetch,
// SSE read by hand, a timestamp for every content chunk.
import type { StreamSample } from "../sample.js";

interface ChunkJson {
  choices?: { text?: unknown; delta?: { content?: unknown } }[];
  /** llama-server's /completion and /infill events (and this server's /infill). */
  content?: unknown;
  usage?: { completion_tokens?: number; prompt_tokens?: number; prompt_tokens_details?: { cached_tokens?: number } };
  /** llama-server's own figures on its last chunk. */
  timings?: { prompt_n?: number; prompt_ms?: number; predicted_n?: number; predicted_ms?: number; cache_n?: number };
}

function contentOf(chunk: ChunkJson): string {
  const choice = chunk.choices?.[0];
  const text = choice?.text ?? choice?.delta?.content ?? chunk.content;
  return typeof text === "string" ? text : "";
}

/** What a stream showed so far: its status, when it was accepted, its content chunks' times. */
interface Seen {
  status: number;
  acceptedMs: number | undefined;
  first: number | undefined;
  last: number;
  chunks: number;
  text: string;
  usage: ChunkJson["usage"];
  timings: ChunkJson["timings"];
  failure: string | undefined;
}

function sampleOf(
  seen: Seen,
  sentAt: number,
  totalMs: number,
  outcome: StreamSample["outcome"],
  error?: string,
): StreamSample {
  const { first, usage, timings } = seen;
  return {
    outcome,
    status: seen.status,
    acceptedMs: seen.acceptedMs,
    ttftMs: first ?? Number.NaN,
    lastTokenMs: first === undefined ? Number.NaN : seen.last,
    totalMs,
    tokens: usage?.completion_tokens ?? timings?.predicted_n ?? seen.chunks,
    promptTokens: usage?.prompt_tokens ?? timings?.prompt_n,
    cachedTokens: usage?.prompt_tokens_details?.cached_tokens ?? timings?.cache_n,
    serverPromptMs: timings?.prompt_ms,
    serverDecodeMs: timings?.predicted_ms,
    text: seen.text,
    sentAt,
    error,
  };
}

/** The complete SSE events at the head of `buffer` (those with data), and what is left of it. */
function takeEvents(buffer: string): { events: { name: string; payload: string }[]; rest: string } {
  const events: { name: string; payload: string }[] = [];
  let rest = buffer;
  for (let end = rest.search(/\r?\n\r?\n/); end !== -1; end = rest.search(/\r?\n\r?\n/)) {
    const event = rest.slice(0, end);
    rest = rest.slice(end).replace(/^\r?\n\r?\n/, "");
    let name = "message";
    const data: string[] = [];
    for (const line of event.split(/\r?\n/)) {
      if (line.startsWith("event:")) name = line.slice(6).trim();
      else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
    }
    if (data.length > 0) events.push({ name, payload: data.join("\n") });
  }
  return { events, rest };
}

/** Notes one event: an error event's message, a content chunk's time, the usage and timings. */
function noteEvent(seen: Seen, name: string, payload: string, since: () => number): void {
  if (name === "error") seen.failure = payload.slice(0, 300);
  if (payload === "[DONE]") return;
  let chunk: ChunkJson;
  try {
    chunk = JSON.parse(payload) as ChunkJson;
  } catch {
    return;
  }
  const content = contentOf(chunk);
  if (content !== "") {
    seen.text += content;
    seen.last = since();
    seen.first ??= seen.last;
    seen.chunks++;
  }
  if (chunk.usage) seen.usage = chunk.usage;
  if (chunk.timings) seen.timings = chunk.timings;
}

/** POSTs `body` to `url` and reads the SSE reply to its end; never throws. */
export async function streamSse(
  url: string,
  body: unknown,
  timeoutMs: number,
  headers: Readonly<Record<string, string>> = {},
): Promise<StreamSample> {
  const abort = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    abort.abort();
  }, timeoutMs);
  const sentAt = performance.now();
  const since = (): number => performance.now() - sentAt;
  const seen: Seen = {
    status: 0,
    acceptedMs: undefined,
    first: undefined,
    last: 0,
    chunks: 0,
    text: "",
    usage: undefined,
    timings: undefined,
    failure: undefined,
  };
  const result = (outcome: StreamSample["outcome"], error?: string): StreamSample =>
    sampleOf(seen, sentAt, since(), outcome, error);
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream", ...headers },
      body: JSON.stringify(body),
      signal: abort.signal,
    });
    seen.status = response.status;
    seen.acceptedMs = since();
    if (!response.ok || response.body === null) {
      const text = await response.text();
      return result(seen.status === 429 ? "rejected" : "failed", text.slice(0, 300));
    }
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const { events, rest } = takeEvents(buffer + value);
      buffer = rest;
      for (const { name, payload } of events) noteEvent(seen, name, payload, since);
    }
    return result(seen.failure === undefined ? "completed" : "failed", seen.failure);
  } catch (error) {
    return result(timedOut ? "hung" : "failed", error instanceof Error ? error.message : String(error));
  } finally {
    clearTimeout(timer);
  }
}
