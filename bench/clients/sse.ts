// An HTTP client for streaming OpenAI-style endpoints (the edge, llama-server): plain fetch,
// SSE read by hand, a timestamp for every content chunk.
import type { StreamSample } from "../sample.js";

interface ChunkJson {
  choices?: { text?: unknown; delta?: { content?: unknown } }[];
  usage?: { completion_tokens?: number; prompt_tokens?: number; prompt_tokens_details?: { cached_tokens?: number } };
  /** llama-server's own figures on its last chunk. */
  timings?: { prompt_n?: number; prompt_ms?: number; predicted_n?: number; predicted_ms?: number; cache_n?: number };
}

function contentOf(chunk: ChunkJson): string {
  const choice = chunk.choices?.[0];
  const text = choice?.text ?? choice?.delta?.content;
  return typeof text === "string" ? text : "";
}

/** POSTs `body` to `url` and reads the SSE reply to its end; never throws. */
export async function streamSse(url: string, body: unknown, timeoutMs: number, headers: Readonly<Record<string, string>> = {}): Promise<StreamSample> {
  const abort = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    abort.abort();
  }, timeoutMs);
  const sentAt = performance.now();
  const since = (): number => performance.now() - sentAt;
  let first: number | undefined;
  let last = 0;
  let chunks = 0;
  let usage: ChunkJson["usage"];
  let timings: ChunkJson["timings"];
  let status = 0;
  let acceptedMs: number | undefined;
  const result = (outcome: StreamSample["outcome"], error?: string): StreamSample => ({
    outcome,
    status,
    acceptedMs,
    ttftMs: first ?? Number.NaN,
    lastTokenMs: first === undefined ? Number.NaN : last,
    totalMs: since(),
    tokens: usage?.completion_tokens ?? timings?.predicted_n ?? chunks,
    promptTokens: usage?.prompt_tokens ?? timings?.prompt_n,
    cachedTokens: usage?.prompt_tokens_details?.cached_tokens ?? timings?.cache_n,
    serverPromptMs: timings?.prompt_ms,
    serverDecodeMs: timings?.predicted_ms,
    sentAt,
    error,
  });
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream", ...headers },
      body: JSON.stringify(body),
      signal: abort.signal,
    });
    status = response.status;
    acceptedMs = since();
    if (!response.ok || response.body === null) {
      const text = await response.text();
      return result(status === 429 ? "rejected" : "failed", text.slice(0, 300));
    }
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    let failure: string | undefined;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buffer += value;
      for (let end = buffer.search(/\r?\n\r?\n/); end !== -1; end = buffer.search(/\r?\n\r?\n/)) {
        const event = buffer.slice(0, end);
        buffer = buffer.slice(end).replace(/^\r?\n\r?\n/, "");
        let name = "message";
        const data: string[] = [];
        for (const line of event.split(/\r?\n/)) {
          if (line.startsWith("event:")) name = line.slice(6).trim();
          else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
        }
        if (data.length === 0) continue;
        const payload = data.join("\n");
        if (name === "error") failure = payload.slice(0, 300);
        if (payload === "[DONE]") continue;
        let chunk: ChunkJson;
        try {
          chunk = JSON.parse(payload) as ChunkJson;
        } catch {
          continue;
        }
        if (contentOf(chunk) !== "") {
          last = since();
          first ??= last;
          chunks++;
        }
        if (chunk.usage) usage = chunk.usage;
        if (chunk.timings) timings = chunk.timings;
      }
    }
    return result(failure === undefined ? "completed" : "failed", failure);
  } catch (error) {
    return result(timedOut ? "hung" : "failed", error instanceof Error ? error.message : String(error));
  } finally {
    clearTimeout(timer);
  }
}
