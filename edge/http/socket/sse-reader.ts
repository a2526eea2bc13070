// Reads a server-sent-event body back into its events' `data` texts: the WebSocket mode sends
// the very events the Responses encoder writes for stream: true, one JSON message each.

/** Each event's `data` (its lines joined by "\n"), in order; comments (`: ping`) are skipped. */
export async function* sseData(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffered = "";
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    buffered += decoder.decode(chunk, { stream: true });
    let end = buffered.indexOf("\n\n");
    while (end >= 0) {
      const data = dataOf(buffered.slice(0, end));
      if (data !== undefined) yield data;
      buffered = buffered.slice(end + 2);
      end = buffered.indexOf("\n\n");
    }
  }
  const rest = dataOf(buffered + decoder.decode());
  if (rest !== undefined) yield rest;
}

/** The `data` of one event block, or undefined for a block without data (a comment). */
function dataOf(block: string): string | undefined {
  const lines = block.split("\n").filter((line) => line.startsWith("data:"));
  if (lines.length === 0) return undefined;
  return lines.map((line) => line.slice(line.startsWith("data: ") ? 6 : 5)).join("\n");
}
