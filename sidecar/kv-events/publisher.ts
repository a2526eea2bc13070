// The KV-cache events' publisher (`--kv-events`): one ZeroMQ PUB socket for every model of the sidecar, each model's
// batches under the topic `kv@<pod>@<model>`, sent as vLLM's publisher sends them: three frames (topic, sequence
// number as 8 bytes big-endian, msgpack payload), numbered from 0 across topics.
import { Publisher } from "zeromq";
import type { KvBlockEvent, KvBlocksOption } from "../engine/llama/kv-blocks.js";
import { encodeBatch } from "./encode.js";
import type { KvEventsSettings } from "./settings.js";

/** Batches queued at most while the socket is busy; older ones are dropped past it (the subscriber sees the gap). */
const MAX_QUEUED = 100_000;

/** Whether vLLM's rule binds `endpoint` (else it connects). */
export function bindsTo(endpoint: string): boolean {
  return (
    endpoint.includes("*") || endpoint.includes("::") || endpoint.startsWith("ipc://") || endpoint.startsWith("inproc://")
  );
}

export class KvEventPublisher {
  readonly #socket: Publisher;
  readonly #pod: string;
  readonly #queue: [Buffer, Buffer, Uint8Array][] = [];
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

  static async open(settings: KvEventsSettings): Promise<KvEventPublisher> {
    const socket = new Publisher({ linger: 1000, sendHighWaterMark: MAX_QUEUED });
    let endpoint = settings.endpoint;
    if (bindsTo(endpoint)) {
      await socket.bind(endpoint);
      endpoint = socket.lastEndpoint ?? endpoint;
    } else socket.connect(endpoint);
    return new KvEventPublisher(socket, settings.pod, endpoint, settings.blockSize);
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
    this.#queue.push([Buffer.from(`kv@${this.#pod}@${model}`), seq, payload]);
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

  /** Sends what is queued, then closes the socket. */
  async close(): Promise<void> {
    await this.#sending;
    this.#socket.close();
  }
}
