// A small, spec-following SSE reader for tests (WHATWG HTML "event stream
// interpretation"): UTF-8 decoding across chunk boundaries, CRLF / LF / CR line
// ends (a CR at the end of one chunk and an LF at the start of the next are one
// line end), comments, multi-line data, `event`, `id`. Plus helpers that cut a byte
// stream at hostile places, and helpers that replay a recorded transcript to an SDK.
import { readFileSync } from "node:fs";

export interface ParsedEvent {
  /** "message" when no `event:` line was given. */
  event: string;
  data: string;
  /** The last event id seen so far ("" when none). */
  id: string;
}

export class SseParser {
  readonly comments: string[] = [];
  private readonly decoder = new TextDecoder("utf-8");
  private buffer = "";
  private pendingCr = false;
  private firstChunk = true;
  private eventType = "";
  private data: string[] = [];
  private lastId = "";

  /** Feeds bytes; returns the events completed by them. */
  feed(chunk: Uint8Array): ParsedEvent[] {
    return this.feedText(this.decoder.decode(chunk, { stream: true }));
  }

  /** Flushes at end of stream (an unterminated last event is dropped, per spec). */
  end(): ParsedEvent[] {
    const events = this.feedText(this.decoder.decode());
    if (this.buffer !== "") this.buffer = "";
    return events;
  }

  private feedText(text: string): ParsedEvent[] {
    let input = text;
    if (this.firstChunk && input !== "") {
      if (input.startsWith("\uFEFF")) input = input.slice(1);
      this.firstChunk = false;
    }
    if (this.pendingCr && input.startsWith("\n")) input = input.slice(1);
    this.pendingCr = false;
    this.buffer += input;
    const events: ParsedEvent[] = [];
    for (;;) {
      const match = /\r\n|\r|\n/.exec(this.buffer);
      if (match === null) break;
      // A CR at the very end might be the first half of a CRLF.
      if (match[0] === "\r" && match.index === this.buffer.length - 1) {
        this.pendingCr = true;
      }
      const line = this.buffer.slice(0, match.index);
      this.buffer = this.buffer.slice(match.index + match[0].length);
      const event = this.line(line);
      if (event !== undefined) events.push(event);
    }
    return events;
  }

  private line(line: string): ParsedEvent | undefined {
    if (line === "") return this.dispatch();
    if (line.startsWith(":")) {
      this.comments.push(line.slice(1).replace(/^ /, ""));
      return undefined;
    }
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    switch (field) {
      case "event":
        this.eventType = value;
        break;
      case "data":
        this.data.push(value);
        break;
      case "id":
        if (!value.includes("\0")) this.lastId = value;
        break;
      default:
        break; // "retry" and unknown fields are ignored here
    }
    return undefined;
  }

  private dispatch(): ParsedEvent | undefined {
    const type = this.eventType;
    const data = this.data;
    this.eventType = "";
    this.data = [];
    if (data.length === 0) return undefined;
    return { event: type === "" ? "message" : type, data: data.join("\n"), id: this.lastId };
  }
}

/** Parses a sequence of chunks as one stream. */
export function parseChunks(chunks: Iterable<Uint8Array>): { events: ParsedEvent[]; comments: string[] } {
  const parser = new SseParser();
  const events: ParsedEvent[] = [];
  for (const chunk of chunks) events.push(...parser.feed(chunk));
  events.push(...parser.end());
  return { events, comments: parser.comments };
}

export function parseText(text: string): ParsedEvent[] {
  return parseChunks([new TextEncoder().encode(text)]).events;
}

/** Reads a whole body and parses it. */
export async function readEvents(body: ReadableStream<Uint8Array> | null): Promise<ParsedEvent[]> {
  if (body === null) return [];
  const chunks: Uint8Array[] = [];
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) chunks.push(chunk);
  return parseChunks(chunks).events;
}

// ---- hostile boundaries -------------------------------------------------------

/** Cuts `bytes` at the given offsets (sorted, deduplicated, in range). */
export function splitAt(bytes: Uint8Array, offsets: Iterable<number>): Uint8Array[] {
  const cuts = [...new Set(offsets)].filter((o) => o > 0 && o < bytes.length).sort((a, b) => a - b);
  const chunks: Uint8Array[] = [];
  let start = 0;
  for (const cut of cuts) {
    chunks.push(bytes.subarray(start, cut));
    start = cut;
  }
  chunks.push(bytes.subarray(start));
  return chunks;
}

export function everyByte(bytes: Uint8Array): Uint8Array[] {
  return splitAt(
    bytes,
    Array.from({ length: bytes.length }, (_, i) => i),
  );
}

/** Cuts inside every multi-byte UTF-8 sequence (after each lead or continuation byte). */
export function insideUtf8(bytes: Uint8Array): Uint8Array[] {
  const offsets: number[] = [];
  for (let i = 1; i < bytes.length; i++) {
    const byte = bytes[i] ?? 0;
    if ((byte & 0xc0) === 0x80) offsets.push(i);
  }
  return splitAt(bytes, offsets);
}

/** Cuts between the CR and LF of every CRLF, and right after every LF. */
export function atLineEnds(bytes: Uint8Array): Uint8Array[] {
  const offsets: number[] = [];
  for (let i = 0; i < bytes.length; i++) if (bytes[i] === 0x0a || bytes[i] === 0x0d) offsets.push(i, i + 1);
  return splitAt(bytes, offsets);
}

/** A deterministic pseudo-random generator (mulberry32). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `count` random cuts, reproducible from `seed`. */
export function randomSplits(bytes: Uint8Array, seed: number, count = Math.ceil(bytes.length / 8)): Uint8Array[] {
  const random = seededRandom(seed);
  return splitAt(
    bytes,
    Array.from({ length: count }, () => Math.floor(random() * bytes.length)),
  );
}

/** Every hostile splitting of `bytes` the tests use, by name. */
export function hostileSplits(bytes: Uint8Array): [string, Uint8Array[]][] {
  return [
    ["whole", [bytes]],
    ["every byte", everyByte(bytes)],
    ["inside UTF-8 sequences", insideUtf8(bytes)],
    ["at line ends", atLineEnds(bytes)],
    ...[1, 2, 3, 4, 5].map((seed): [string, Uint8Array[]] => [`random splits #${seed}`, randomSplits(bytes, seed)]),
  ];
}

/** A byte stream that hands out `chunks` one read at a time. */
export function streamOf(chunks: readonly Uint8Array[]): ReadableStream<Uint8Array> {
  let index = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      const chunk = chunks[index++];
      if (chunk === undefined) controller.close();
      else controller.enqueue(chunk.slice());
    },
  });
}

/** The bytes of a golden transcript, test/golden/<name>.txt. */
export function goldenBytes(name: string): Uint8Array {
  return new Uint8Array(readFileSync(new URL(`../golden/${name}.txt`, import.meta.url)));
}

/** A fetch that answers any request with `chunks` as an SSE body: an SDK then reads a recorded transcript. */
export function replayFetch(chunks: readonly Uint8Array[]): () => Promise<Response> {
  return async () => new Response(streamOf(chunks), { headers: { "content-type": "text/event-stream" } });
}
