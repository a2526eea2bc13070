// A subscriber to the sidecar's KV-cache events that reads them as llm-d's endpoint picker does (llm-d-router
// v0.10.0, pkg/kvevents: the vLLM adapter's field positions, hashes as uint64, the pod and model from the topic
// kv@<pod>@<model>, a sequence number that goes back meaning a restart, a replay asked for from 0 when it joins
// late or sees a restart), and rebuilds each pod's blocks per model (an adapter's blocks under its `lora_name`), keyed
// `<medium>:<hash>` as the sidecar's own view.
import { decode } from "@msgpack/msgpack";
import { Dealer, Subscriber } from "zeromq";

export interface SubscribedBlock {
  readonly medium: string;
  readonly hash: bigint;
  readonly parent: bigint | undefined;
  readonly tokens: readonly number[];
}

type Frames = readonly Buffer[];

/** A fault in what was received: the test fails on it. */
export class SchemaError extends Error {}

function check(condition: boolean, what: string): asserts condition {
  if (!condition) throw new SchemaError(what);
}

export class KvSubscriber {
  readonly #sub = new Subscriber();
  /** pod → model → blocks. */
  readonly #pods = new Map<string, Map<string, Map<string, SubscribedBlock>>>();
  #last: bigint | undefined;
  #lastLive: bigint | undefined;
  readonly errors: Error[] = [];
  /** Batches applied, and replays asked for. */
  batches = 0;
  replays = 0;
  /** Times the numbers went back (the sidecar restarted). */
  restarts = 0;
  readonly #done: Promise<void>;

  /** Where the sidecar's replay socket is (known once it has started). */
  replayEndpoint = "";
  /** The address it is bound to (a publisher connects to it), or the one it connects to. */
  endpoint: string;

  private constructor(endpoint: string) {
    this.endpoint = endpoint;
    this.#sub.subscribe("kv@");
    this.#done = this.#run();
  }

  /** Binds `endpoint` (a wildcard port resolved): the sidecar connects to it (`--kv-events tcp://host:port`). */
  static async bound(endpoint: string): Promise<KvSubscriber> {
    const subscriber = new KvSubscriber(endpoint);
    await subscriber.#sub.bind(endpoint);
    subscriber.endpoint = subscriber.#sub.lastEndpoint ?? endpoint;
    return subscriber;
  }

  /** Connects to a sidecar that binds (`--kv-events tcp://*:5557`). */
  static connected(endpoint: string): KvSubscriber {
    const subscriber = new KvSubscriber(endpoint);
    subscriber.#sub.connect(endpoint);
    return subscriber;
  }

  /** The blocks of `model` on `pod`, keyed `<medium>:<hash>`. */
  view(pod: string, model: string): Map<string, SubscribedBlock> {
    return this.#pods.get(pod)?.get(model) ?? new Map();
  }

  async close(): Promise<void> {
    this.#sub.close();
    await this.#done;
  }

  async #run(): Promise<void> {
    try {
      for await (const frames of this.#sub) await this.#live(frames);
    } catch (error) {
      if (!this.#sub.closed) this.errors.push(error as Error);
    }
  }

  /** A live batch: applied in order; a restart (numbers going back) or a late join replays from 0 first. */
  async #live(frames: Frames): Promise<void> {
    check(frames.length === 3 && frames[1]?.length === 8, `a message of ${frames.length} frames`);
    const seq = (frames[1] as Buffer).readBigUInt64BE(0);
    // Numbers going back among live batches (not those a replay brought) mean a restart, as llm-d reads them.
    const restarted = this.#lastLive !== undefined && seq < this.#lastLive;
    this.#lastLive = seq;
    if (this.#last === undefined ? seq > 0n : restarted) {
      if (this.#last !== undefined) {
        this.restarts++;
        this.#pods.delete(podOf(frames[0] as Buffer));
      }
      this.#last = undefined;
      await this.#replay();
    }
    if (this.#last !== undefined && seq <= this.#last) return;
    check(seq === (this.#last ?? -1n) + 1n, `batch ${seq} after ${this.#last}: a gap`);
    this.#apply(frames);
  }

  /** Asks for every batch kept from 0, as llm-d's subscriber does, and applies them. */
  async #replay(): Promise<void> {
    this.replays++;
    const dealer = new Dealer({ receiveTimeout: 5000, linger: 0 });
    dealer.connect(this.replayEndpoint);
    try {
      const start = Buffer.alloc(8);
      await dealer.send([Buffer.alloc(0), start]);
      for (;;) {
        const [empty, ...frames] = await dealer.receive();
        check(empty?.length === 0, "a replay answer without its empty frame");
        if (frames.length === 3 && frames[2]?.length === 0) return;
        const seq = (frames[1] as Buffer).readBigUInt64BE(0);
        if (this.#last === undefined) check(seq === 0n, `a replay from ${seq}, not 0`);
        else check(seq === this.#last + 1n, `replayed batch ${seq} after ${this.#last}`);
        this.#apply(frames);
      }
    } finally {
      dealer.close();
    }
  }

  #apply(frames: Frames): void {
    const topic = (frames[0] as Buffer).toString();
    const parts = topic.split("@");
    check(parts.length === 3 && parts[0] === "kv", `topic ${topic}`);
    const [, pod = "", model = ""] = parts;
    const payload = frames[2] as Buffer;
    // vLLM's EventBatch: an array [ts (float64), events, data_parallel_rank].
    check(payload[0] === 0x93 && payload[1] === 0xcb, "an EventBatch that is not [float64, events, rank]");
    const [ts, events, rank] = decode(payload, { useBigInt64: true }) as [number, unknown[][], unknown];
    check(typeof ts === "number" && Array.isArray(events) && rank === 0, "an EventBatch's fields");
    const models = this.#pods.get(pod) ?? new Map<string, Map<string, SubscribedBlock>>();
    this.#pods.set(pod, models);
    for (const event of events) this.#event(event, models, model, pod);
    this.#last = frames[1] === undefined ? this.#last : (frames[1] as Buffer).readBigUInt64BE(0);
    this.batches++;
  }

  /**
   * One event on `models` of a pod. A BlockStored with a `lora_name` is that adapter's (llm-d keys its blocks by the
   * adapter's name, not the topic's model); a BlockRemoved names no model: the key is looked for in each (engine keys
   * are the pod's, one model's each).
   */
  #event(fields: unknown[], models: Map<string, Map<string, SubscribedBlock>>, topicModel: string, pod: string): void {
    const tag = fields[0];
    const blocksOf = (model: string): Map<string, SubscribedBlock> => {
      const blocks = models.get(model) ?? new Map<string, SubscribedBlock>();
      models.set(model, blocks);
      return blocks;
    };
    if (tag === "BlockStored") stored(fields, (loraName) => blocksOf(loraName ?? topicModel));
    else if (tag === "BlockRemoved") removed(fields, [...models.values()]);
    else this.#cleared(fields, pod);
  }

  #cleared(fields: unknown[], pod: string): void {
    const tag = fields[0];
    check(tag === "AllBlocksCleared" && fields.length === 1, `an event ${String(tag)}`);
    // Pod-wide in llm-d: every model's blocks of the pod.
    for (const models of this.#pods.get(pod)?.values() ?? []) models.clear();
  }
}

function podOf(topic: Buffer): string {
  return topic.toString().split("@")[1] ?? "";
}

/** BlockStored [tag, block_hashes, parent_block_hash, token_ids, block_size, lora_id, medium, lora_name]. */
function stored(fields: unknown[], modelBlocks: (loraName: string | undefined) => Map<string, SubscribedBlock>): void {
  check(fields.length === 8, `a BlockStored of ${fields.length} fields`);
  const [, hashes, parent, tokens, blockSize, loraId, medium, loraName] = fields;
  check(Array.isArray(hashes) && hashes.every((h) => typeof h === "bigint"), "block_hashes not uint64s");
  check(parent === null || typeof parent === "bigint", "parent_block_hash not a uint64 or nil");
  check(Array.isArray(tokens) && tokens.every((t) => typeof t === "number"), "token_ids");
  check(typeof blockSize === "number" && tokens.length === hashes.length * blockSize, "a span not dense");
  const adapter = typeof loraId === "number" && loraId > 0 && typeof loraName === "string" && loraName !== "";
  check(adapter || (loraId === null && loraName === null), "lora_id and lora_name: both set or both nil");
  check(medium === "GPU" || medium === "CPU", "medium");
  const blocks = modelBlocks(adapter ? (loraName as string) : undefined);
  // llm-d finds the parent's request key by its engine key: it must be held (in any medium).
  if (parent !== null)
    check(blocks.has(`GPU:${parent}`) || blocks.has(`CPU:${parent}`), `parent ${parent} is not held`);
  hashes.forEach((hash: bigint, i: number) => {
    const key = `${medium}:${hash}`;
    check(!blocks.has(key), `${key} stored twice`);
    const blockTokens = (tokens as number[]).slice(i * blockSize, (i + 1) * blockSize);
    const blockParent = i === 0 ? (parent ?? undefined) : (hashes[i - 1] as bigint);
    blocks.set(key, { medium, hash, parent: blockParent as bigint | undefined, tokens: blockTokens });
  });
}

/** BlockRemoved [tag, block_hashes, medium]: each key held by exactly one model of the pod. */
function removed(fields: unknown[], models: readonly Map<string, SubscribedBlock>[]): void {
  check(fields.length === 3, `a BlockRemoved of ${fields.length} fields`);
  const [, hashes, medium] = fields;
  check(Array.isArray(hashes) && hashes.every((h) => typeof h === "bigint"), "block_hashes not uint64s");
  for (const hash of hashes) {
    const key = `${String(medium)}:${hash}`;
    const held = models.filter((blocks) => blocks.delete(key)).length;
    check(held === 1, `${key} removed but held by ${held} models`);
  }
}

/** `<medium>:<hash>` → parent and tokens, sorted: what a subscriber's view and the sidecar's own are compared on. */
export function comparableBlocks(
  view: Map<string, { readonly parent: bigint | undefined; readonly tokens: readonly number[] }>,
): [string, string, string][] {
  return [...view.entries()]
    .map(([key, block]): [string, string, string] => [key, String(block.parent), block.tokens.join(",")])
    .sort((a, b) => a[0].localeCompare(b[0]));
}
