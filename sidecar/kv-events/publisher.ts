// The KV-cache events' publisher (`--kv-events`): one ZeroMQ PUB socket for every model of the sidecar, each model's
// batches under the topic `kv@<pod>@<model>`, sent as vLLM's publisher sends them: three frames (topic, sequence
// number as 8 bytes big-endian, msgpack payload), numbered from 0 across topics. The first batch is AllBlocksCleared
// (a new process holds nothing). With `--kv-events-replay`, a ROUTER socket sends the batches kept since a number a
// subscriber asks for (replay.ts), so one that joins late or sees the numbers restart rebuilds the whole view.
import { Publisher } from "zeromq";
import type { KvBlockEvent, KvBlocksOption } from "../engine/llama/kv-blocks.js";
import { encodeBatch } from "./encode.js";
import { ReplayBuffer, serveReplay, type Frames } from "./replay.js";
import type { KvEventsSettings } from "./settings.js";

/** Batches queued at most while the socket is busy; older ones are dropped past it (the subscriber sees the gap). */
const MAX_QUEUED = 100_000;

/** Whether vLLM's rule binds `endpoint` (else it connects). */
export function bindsTo(endpoint: string): boolean {
  return (
    endpoint.includes("*") ||
    endpoint.includes("::") ||
    endpoint.startsWith("ipc://") ||
    endpoint.startsWith("inproc://")
  );
}

/** Binds or connects `socket` as vLLM does; returns the address (a bound wildcard port resolved). */
async function attach(
  socket: { bind(a: string): Promise<void>; connect(a: string): void; lastEndpoint: string | null },
  endpoint: string,
): Promise<string> {
  if (!bindsTo(endpoint)) {
    socket.connect(endpoint);
    return endpoint;
  }
  await socket.bind(endpoint);
  return socket.lastEndpoint ?? endpoint;
}

export class KvEventPublisher {
  readonly #socket: Publisher;
  readonly #pod: string;
  readonly #queue: Frames[] = [];
  readonly #buffer = new ReplayBuffer();
  #replay: { readonly endpoint: string; close(): Promise<void> } | undefined;
  #seq = 0n;
  #sending: Promise<void> | undefined;

  private constructor(
    socket: Publisher,
    pod: string,
    /** Where it publishes: the bound address (a wildcard port resolved), or the one it connects to. */
    readonly endpoint: string,
    readonly blockSize: number,
  ) {
    this.#socket = socket;
    this.#pod = pod;
  }

  /** Opens the sockets; `model` names the topic of the first batch, AllBlocksCleared. */
  static async open(settings: KvEventsSettings, model: string): Promise<KvEventPublisher> {
    const socket = new Publisher({ linger: 1000, sendHighWaterMark: MAX_QUEUED });
    const publisher = new KvEventPublisher(
      socket,
      settings.pod,
      await attach(socket, settings.endpoint),
      settings.blockSize,
    );
    if (settings.replay !== undefined) publisher.#replay = await serveReplay(settings.replay, publisher.#buffer);
    publisher.publish(model, [{ kind: "cleared" }]);
    return publisher;
  }

  /** The replay socket's address, when there is one. */
  get replayEndpoint(): string | undefined {
    return this.#replay?.endpoint;
  }

  /** The engine's side: block size, and each model's changes published under its topic. */
  get option(): KvBlocksOption {
    return { blockSize: this.blockSize, publish: (model, events) => this.publish(model, events) };
  }

  /** Encodes the batch now (its timestamp is now) and queues it; sending never holds the caller. */
  publish(model: string, events: readonly KvBlockEvent[]): void {
    const seq = Buffer.alloc(8);
    seq.writeBigUInt64BE(this.#seq++);
    const payload = encodeBatch((performance.timeOrigin + performance.now()) / 1000, events);
    const frames: Frames = [Buffer.from(`kv@${this.#pod}@${model}`), seq, payload];
    this.#buffer.add(frames);
    this.#queue.push(frames);
    if (this.#queue.length > MAX_QUEUED) this.#queue.shift();
    this.#sending ??= this.#drain();
  }

  async #drain(): Promise<void> {
    try {
      for (let frames = this.#queue.shift(); frames !== undefined; frames = this.#queue.shift())
        await this.#socket.send(frames).catch(() => undefined);
    } finally {
      this.#sending = undefined;
    }
  }

  /** Sends what is queued, then closes the sockets. */
  async close(): Promise<void> {
    await this.#sending;
    await this.#replay?.close();
    this.#socket.close();
  }
}
