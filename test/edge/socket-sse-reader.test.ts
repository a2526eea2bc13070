// The WebSocket mode's reading of the Responses SSE body back into events (edge/http/socket/sse-reader.ts):
// whatever the chunking, each event's data once, comments skipped.
import { describe, expect, it } from "vitest";
import { sseData } from "../../edge/http/socket/sse-reader.js";

function bodyOf(chunks: readonly string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
}

async function read(chunks: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for await (const data of sseData(bodyOf(chunks))) out.push(data);
  return out;
}

const TEXT =
  'event: response.created\ndata: {"a":1}\n\n: ping\n\nevent: x\ndata: line one\ndata: line two\n\ndata: [DONE]\n\n';

describe("sseData", () => {
  it("reads each event's data, joining its lines, skipping comments", async () => {
    expect(await read([TEXT])).toEqual(['{"a":1}', "line one\nline two", "[DONE]"]);
  });

  it("gives the same events whatever the chunks' boundaries (a character split across two, too)", async () => {
    const bytes = new TextEncoder().encode(`data: ☀️ é\n\n${TEXT}`);
    const whole = await read([new TextDecoder().decode(bytes)]);
    for (let cut = 1; cut < bytes.length; cut++) {
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(bytes.slice(0, cut));
          controller.enqueue(bytes.slice(cut));
          controller.close();
        },
      });
      const out: string[] = [];
      for await (const data of sseData(stream)) out.push(data);
      expect(out).toEqual(whole);
    }
    expect(whole[0]).toBe("☀️ é");
  });

  it("reads a last event without its blank line", async () => {
    expect(await read(['data: {"b":2}\n'])).toEqual(['{"b":2}']);
  });
});
