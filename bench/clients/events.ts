// A client for the stateful benchmark: POSTs a streamed request to any of the edge's protocols
// (chat completions, Responses, Anthropic Messages), notes when the first text arrives, and keeps
// every event's JSON and the response headers (the conversation id, the ids to continue from).

export interface EventsSample {
  readonly status: number;
  /** Request sent → the first text delta (ms); NaN if none came. */
  readonly ttftMs: number;
  readonly headers: Headers;
  /** Every `data:` payload that parsed as JSON, in order. */
  readonly events: readonly Record<string, unknown>[];
  readonly error?: string | undefined;
}

/** Whether an event carries reply text, in the three protocols' shapes. */
export function isTextDelta(event: Record<string, unknown>): boolean {
  if (event["type"] === "response.output_text.delta" || event["type"] === "content_block_delta") return true;
  const choices = event["choices"];
  const delta = Array.isArray(choices)
    ? (choices[0] as { delta?: { content?: unknown } } | undefined)?.delta
    : undefined;
  return typeof delta?.content === "string" && delta.content !== "";
}

function parseData(block: string): Record<string, unknown> | undefined {
  const data = block
    .split(/\r?\n/)
    .filter((line) => line.startsWith("data:"))
    .map((line) => line.slice(5).replace(/^ /, ""))
    .join("\n");
  if (data === "" || data === "[DONE]") return undefined;
  try {
    return JSON.parse(data) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/** POSTs `body` (a streamed request) and reads the SSE reply to its end; never throws. */
export async function streamEvents(
  url: string,
  body: unknown,
  headers: Record<string, string>,
  timeoutMs: number,
): Promise<EventsSample> {
  const sentAt = performance.now();
  const events: Record<string, unknown>[] = [];
  let ttftMs = Number.NaN;
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream", ...headers },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (!response.ok || response.body === null)
      return {
        status: response.status,
        ttftMs,
        headers: response.headers,
        events,
        error: (await response.text()).slice(0, 300),
      };
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buffer += value;
      const blocks = buffer.split(/\r?\n\r?\n/);
      buffer = blocks.pop() ?? "";
      for (const block of blocks) {
        const event = parseData(block);
        if (event === undefined) continue;
        if (Number.isNaN(ttftMs) && isTextDelta(event)) ttftMs = performance.now() - sentAt;
        events.push(event);
      }
    }
    return { status: response.status, ttftMs, headers: response.headers, events };
  } catch (error) {
    return { status: 0, ttftMs, headers: new Headers(), events, error: String(error) };
  }
}
