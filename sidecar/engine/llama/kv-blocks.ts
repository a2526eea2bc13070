// The KV-cache blocks a model holds, for the KV-cache events (`--kv-events`, sidecar/kv-events/): what each holder
// holds (a sequence's cells: medium GPU; a KV tier state in host memory: medium CPU) cut into blocks of `blockSize`
// tokens, each keyed by a hash chained over the blocks before it. A block is stored when the first holder of its
// medium takes it and removed when the last one lets it go; `KvBlocks` reports each change to its sink. A LoRA
// adapter's blocks are keyed apart from its base's (the chain starts from the adapter's own root) and carry its id and
// name, as vLLM reports an adapter's blocks.
import { createHash } from "node:crypto";
import type { Token } from "node-llama-cpp";

/** Where a block's cells are: a sequence's (GPU, whatever device runs the context) or a saved state's (CPU). */
export type KvMedium = "GPU" | "CPU";

/** The LoRA adapter whose context holds the blocks: vLLM's `lora_id` (from 1) and `lora_name` (its model name). */
export interface KvLora {
  readonly id: number;
  readonly name: string;
}

/** A change to the blocks a model holds: vLLM's BlockStored, BlockRemoved and AllBlocksCleared. */
export type KvBlockEvent =
  | {
      readonly kind: "stored";
      readonly hashes: readonly bigint[];
      readonly parent: bigint | undefined;
      readonly tokens: readonly number[];
      readonly medium: KvMedium;
      /** The adapter whose blocks they are; none: the base model's. */
      readonly lora?: KvLora | undefined;
    }
  | { readonly kind: "removed"; readonly hashes: readonly bigint[]; readonly medium: KvMedium }
  | { readonly kind: "cleared" };

/** Receives each change, as one batch, synchronously. */
export type KvBlockSink = (events: readonly KvBlockEvent[]) => void;

/** `ModelOptions.kvBlocks`: the block size and where a model's changes go. */
export interface KvBlocksOption {
  readonly blockSize: number;
  readonly publish: (model: string, events: readonly KvBlockEvent[]) => void;
}

/** One block as a subscriber rebuilds it: its key, its parent's and its tokens. */
export interface KvBlock {
  readonly medium: KvMedium;
  readonly hash: bigint;
  readonly parent: bigint | undefined;
  readonly tokens: readonly number[];
}

interface Chain {
  /** The tokens of the full blocks, in order. */
  readonly tokens: readonly Token[];
  readonly hashes: readonly bigint[];
}

const EMPTY: Chain = { tokens: [], hashes: [] };

/**
 * The key a chain's first block is hashed from: none for a base model (8 zero bytes), the first 8 bytes of SHA-256 over
 * `lora:<name>` for an adapter, so that the same tokens make other keys under each adapter (a subscriber maps a key to
 * one model's tokens). Events still report no parent for a first block.
 */
export function chainRoot(lora: KvLora | undefined): bigint | undefined {
  if (lora === undefined) return undefined;
  return createHash("sha256").update(`lora:${lora.name}`).digest().readBigUInt64BE(0);
}

/**
 * A block's key: the first 8 bytes (big-endian) of SHA-256 over its parent's key (none: 8 zero bytes) and its tokens
 * (4 bytes each, little-endian).
 */
export function blockHash(parent: bigint | undefined, tokens: readonly Token[]): bigint {
  const buffer = Buffer.allocUnsafe(8 + 4 * tokens.length);
  buffer.writeBigUInt64BE(parent ?? 0n, 0);
  for (let i = 0; i < tokens.length; i++) buffer.writeUInt32LE(tokens[i] as number, 8 + 4 * i);
  return createHash("sha256").update(buffer).digest().readBigUInt64BE(0);
}

/** The keys of the full blocks of `tokens` from block `from` on, chained to `chain`'s first `from` keys. */
function extend(chain: Chain, tokens: readonly Token[], from: number, blockSize: number, root?: bigint): Chain {
  const full = Math.floor(tokens.length / blockSize);
  const hashes = chain.hashes.slice(0, from);
  for (let block = from; block < full; block++)
    hashes.push(blockHash(hashes[block - 1] ?? root, tokens.slice(block * blockSize, (block + 1) * blockSize)));
  return { tokens: tokens.slice(0, full * blockSize), hashes };
}

/** Every block of what the holders hold, keyed `<medium>:<hash>`: the view a subscriber rebuilds. */
export function blockView(
  holders: readonly { readonly medium: KvMedium; readonly tokens: readonly Token[] }[],
  blockSize: number,
  lora?: KvLora,
): Map<string, KvBlock> {
  const view = new Map<string, KvBlock>();
  const root = chainRoot(lora);
  for (const { medium, tokens } of holders) {
    const chain = extend(EMPTY, tokens, 0, blockSize, root);
    chain.hashes.forEach((hash, block) => {
      const blockTokens = chain.tokens.slice(block * blockSize, (block + 1) * blockSize) as number[];
      view.set(`${medium}:${hash}`, { medium, hash, parent: chain.hashes[block - 1], tokens: blockTokens });
    });
  }
  return view;
}

/** The first block at which `a` and `b` differ, within `blocks` blocks. */
function firstDifferentBlock(a: readonly Token[], b: readonly Token[], blocks: number, blockSize: number): number {
  const end = Math.min(a.length, b.length, blocks * blockSize);
  let i = 0;
  while (i < end && a[i] === b[i]) i++;
  return Math.min(Math.floor(i / blockSize), blocks);
}

/**
 * The blocks of one model's holders, reference counted per medium. `hold` is called when a holder's tokens may have
 * changed (cheap when they have not: one comparison, no hashing), `drop` when it lets them all go, `close` at unload.
 */
export class KvBlocks {
  readonly #holders = new Map<unknown, { readonly medium: KvMedium; chain: Chain }>();
  readonly #counts: Record<KvMedium, Map<bigint, number>> = { GPU: new Map(), CPU: new Map() };
  readonly #sink: KvBlockSink;
  readonly #root: bigint | undefined;
  #closed = false;

  constructor(
    readonly blockSize: number,
    sink: KvBlockSink,
    /** The adapter whose context's blocks these are; none: a base model's. */
    readonly lora?: KvLora,
  ) {
    this.#sink = sink;
    this.#root = chainRoot(lora);
  }

  /** `holder` holds `tokens` now (a sequence's context tokens, a state's tokens). */
  hold(holder: unknown, medium: KvMedium, tokens: readonly Token[]): void {
    if (this.#closed) return;
    const held = this.#holders.get(holder);
    const before = held?.chain ?? EMPTY;
    const full = Math.floor(tokens.length / this.blockSize);
    const same = firstDifferentBlock(before.tokens, tokens, Math.min(before.hashes.length, full), this.blockSize);
    if (same === before.hashes.length && same === full) return;
    const after = extend(before, tokens, same, this.blockSize, this.#root);
    if (held === undefined) this.#holders.set(holder, { medium, chain: after });
    else held.chain = after;
    this.#emit([...this.#release(medium, before.hashes.slice(same)), ...this.#take(medium, after, same)]);
  }

  /** `holder` holds nothing any more. */
  drop(holder: unknown): void {
    const held = this.#holders.get(holder);
    if (held === undefined || this.#closed) return;
    this.#holders.delete(holder);
    this.#emit(this.#release(held.medium, held.chain.hashes));
  }

  /**
   * The model is unloaded: every block it holds removed, in each medium; later calls change nothing. Not
   * AllBlocksCleared: a subscriber clears a whole pod on it (llm-d does), the sidecar's other models' blocks too.
   */
  close(): void {
    if (this.#closed) return;
    const events: KvBlockEvent[] = [];
    for (const medium of ["GPU", "CPU"] as const) {
      const hashes = [...this.#counts[medium].keys()];
      if (hashes.length > 0) events.push({ kind: "removed", hashes, medium });
      this.#counts[medium].clear();
    }
    this.#holders.clear();
    this.#closed = true;
    this.#emit(events);
  }

  /** The blocks held now, keyed `<medium>:<hash>`, from the holders' chains. */
  view(): Map<string, KvBlock> {
    const holders = [...this.#holders.values()].map(({ medium, chain }) => ({ medium, tokens: chain.tokens }));
    return blockView(holders, this.blockSize, this.lora);
  }

  #emit(events: readonly KvBlockEvent[]): void {
    if (events.length > 0) this.#sink(events);
  }

  /** Blocks `chain.hashes[from..]` taken: the runs of those no holder of `medium` held, each with its parent. */
  #take(medium: KvMedium, chain: Chain, from: number): KvBlockEvent[] {
    const counts = this.#counts[medium];
    const events: KvBlockEvent[] = [];
    let run: { hashes: bigint[]; parent: bigint | undefined; start: number } | undefined;
    const close = (end: number): void => {
      if (run === undefined) return;
      const tokens = chain.tokens.slice(run.start * this.blockSize, end * this.blockSize) as number[];
      const lora = this.lora === undefined ? {} : { lora: this.lora };
      events.push({ kind: "stored", hashes: run.hashes, parent: run.parent, tokens, medium, ...lora });
      run = undefined;
    };
    for (let block = from; block < chain.hashes.length; block++) {
      const hash = chain.hashes[block] as bigint;
      const count = counts.get(hash) ?? 0;
      counts.set(hash, count + 1);
      if (count > 0) close(block);
      else if (run === undefined) run = { hashes: [hash], parent: chain.hashes[block - 1], start: block };
      else run.hashes.push(hash);
    }
    close(chain.hashes.length);
    return events;
  }

  /** Blocks let go of: those no holder of `medium` holds any more. */
  #release(medium: KvMedium, hashes: readonly bigint[]): KvBlockEvent[] {
    const counts = this.#counts[medium];
    const gone: bigint[] = [];
    for (const hash of hashes) {
      const count = (counts.get(hash) ?? 0) - 1;
      if (count > 0) counts.set(hash, count);
      else {
        counts.delete(hash);
        gone.push(hash);
      }
    }
    return gone.length === 0 ? [] : [{ kind: "removed", hashes: gone, medium }];
  }
}
