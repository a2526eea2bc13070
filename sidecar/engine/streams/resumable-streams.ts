// Resumable generations (proto: GenerateRequest.resumable, Resume, CancelStream): each one's
// events in a replay buffer, readers counted, a grace period that cancels a generation nobody
// reads, retention after the finish, and a memory cap over all buffers.
import { randomBytes } from "node:crypto";
import type { GenerateEvent } from "../decode/generate.js";
import { ReplayBuffer } from "./replay-buffer.js";

export interface ResumableOptions {
  /** Longest wait for a reader once a generation has none, ms (also the most a request may ask). */
  readonly graceMs: number;
  /** How long a finished generation's events are kept, ms. */
  readonly retentionMs: number;
  /** Cap over all buffers, bytes: finished streams are dropped oldest first to stay under it. */
  readonly maxBytes: number;
}

export const DEFAULT_RESUMABLE: ResumableOptions = { graceMs: 60_000, retentionMs: 300_000, maxBytes: 64 * 2 ** 20 };

interface Entry {
  readonly id: string;
  readonly clientId: string;
  readonly buffer: ReplayBuffer<GenerateEvent>;
  readonly generation: AbortController;
  readonly graceMs: number;
  readers: number;
  timer?: ReturnType<typeof setTimeout> | undefined;
}

/** A rough size of an event as kept: its texts and bytes plus a fixed overhead per token and alternative. */
export function eventBytes(event: GenerateEvent): number {
  if (event.event?.case !== "token") return 256;
  const token = event.event.value;
  const text = (token.text?.length ?? 0) + (token.reasoning?.length ?? 0);
  return (
    64 +
    text * 2 +
    (token.piece?.length ?? 0) +
    (token.topLogprobs?.length ?? 0) * 48 +
    (token.toolCalls?.length ?? 0) * 64
  );
}

export class ResumableStreams {
  readonly #options: ResumableOptions;
  readonly #entries = new Map<string, Entry>();
  /** Finished streams, oldest first (for the memory cap). */
  readonly #finished: string[] = [];
  /** Bytes kept by all buffers. */
  #bytes = 0;

  constructor(options: ResumableOptions = DEFAULT_RESUMABLE) {
    this.#options = options;
  }

  /** Streams kept (live or finished). */
  get size(): number {
    return this.#entries.size;
  }

  /** A new stream id: random, so that it cannot be guessed. */
  newId(): string {
    return `strm_${randomBytes(16).toString("base64url")}`;
  }

  /**
   * Keeps `events` (the generation after its first event, `first`, already sent) under `id`, read
   * by nobody yet: the caller that asked for it reads next, through `read`. A `graceMs` of
   * Infinity: detached, it runs to its finish with no reader.
   */
  add(
    id: string,
    clientId: string,
    first: GenerateEvent,
    events: AsyncIterable<GenerateEvent>,
    generation: AbortController,
    graceMs: number,
  ): void {
    const entry: Entry = {
      id,
      clientId,
      buffer: new ReplayBuffer(),
      generation,
      graceMs: this.#grace(graceMs),
      readers: 0,
    };
    this.#entries.set(id, entry);
    this.#keep(entry, first);
    void this.#pump(entry, events);
  }

  /**
   * The stream's events from `after` on, then live (with `snapshot`, only those kept now); the reader counts until it
   * stops.
   */
  read(
    id: string,
    clientId: string,
    after: number,
    signal: AbortSignal,
    snapshot = false,
  ): AsyncGenerator<GenerateEvent, void, undefined> | undefined {
    const entry = this.#find(id, clientId);
    if (entry === undefined) return undefined;
    return snapshot ? entry.buffer.read(after, signal, true) : this.#reader(entry, after, signal);
  }

  /** Cancels a live stream; undefined when unknown (or another client's), false when it had finished. */
  cancel(id: string, clientId: string): boolean | undefined {
    const entry = this.#find(id, clientId);
    if (entry === undefined) return undefined;
    if (entry.buffer.done) return false;
    entry.generation.abort(new Error("cancelled by CancelStream"));
    return true;
  }

  /** Cancels every live generation (shutdown). */
  cancelAll(): void {
    for (const entry of this.#entries.values())
      if (!entry.buffer.done) entry.generation.abort(new Error("the sidecar is stopping"));
  }

  #find(id: string, clientId: string): Entry | undefined {
    const entry = this.#entries.get(id);
    return entry !== undefined && entry.clientId === clientId ? entry : undefined;
  }

  #grace(requested: number): number {
    if (requested === Infinity) return Infinity;
    return requested > 0 ? Math.min(requested, this.#options.graceMs) : this.#options.graceMs;
  }

  async *#reader(entry: Entry, after: number, signal: AbortSignal): AsyncGenerator<GenerateEvent, void, undefined> {
    entry.readers += 1;
    clearTimeout(entry.timer);
    try {
      yield* entry.buffer.read(after, signal);
    } finally {
      entry.readers -= 1;
      if (entry.readers === 0 && !entry.buffer.done) this.#awaitReader(entry);
    }
  }

  /**
   * Nobody reads a live stream: it is cancelled unless a reader comes within its grace period (a detached one never
   * is).
   */
  #awaitReader(entry: Entry): void {
    if (entry.graceMs === Infinity) return;
    entry.timer = setTimeout(() => {
      if (entry.readers === 0) entry.generation.abort(new Error("no reader within the grace period"));
    }, entry.graceMs);
    entry.timer.unref?.();
  }

  async #pump(entry: Entry, events: AsyncIterable<GenerateEvent>): Promise<void> {
    try {
      for await (const event of events) this.#keep(entry, event);
      entry.buffer.end();
    } catch (error) {
      entry.buffer.end({ error });
    }
    clearTimeout(entry.timer);
    this.#finished.push(entry.id);
    const expiry = setTimeout(() => this.#drop(entry.id), this.#options.retentionMs);
    expiry.unref?.();
    this.#trim();
  }

  #keep(entry: Entry, event: GenerateEvent): void {
    const bytes = eventBytes(event);
    entry.buffer.push(event, bytes);
    this.#bytes += bytes;
    if (this.#bytes > this.#options.maxBytes) this.#trim();
  }

  #drop(id: string): void {
    const entry = this.#entries.get(id);
    if (entry === undefined) return;
    this.#bytes -= entry.buffer.bytes;
    this.#entries.delete(id);
    const at = this.#finished.indexOf(id);
    if (at !== -1) this.#finished.splice(at, 1);
  }

  /** Drops finished streams, oldest first, while the buffers hold more than the cap. */
  #trim(): void {
    while (this.#bytes > this.#options.maxBytes && this.#finished.length > 0) this.#drop(this.#finished[0] as string);
  }
}
