// The sequences of one context: the free one with the longest shared prefix, a bounded wait queue,
// turns between clients, several sequences taken at once for one request, and batch requests
// served in idle capacity (`SequencePool`).
import type { LlamaContext, LlamaContextSequence, Token } from "node-llama-cpp";
import { cancelled, invalidArgument, overloaded, queueTimeout } from "../engine-errors.js";
import { BATCH_QUEUE_LIMIT, BatchHolds, type BatchClaim } from "./idle-capacity.js";

interface Waiter {
  readonly prompt: readonly Token[];
  /** Who the request is for (GenerateRequest.client_id): clients take turns. */
  readonly client: string;
  /** How many sequences it needs (GenerateRequest.n), and those it holds so far. */
  readonly count: number;
  readonly held: LlamaContextSequence[];
  /** A PRIORITY_BATCH request's claim; undefined for an interactive request. */
  readonly batch: BatchClaim | undefined;
  readonly resolve: (sequences: LlamaContextSequence[]) => void;
  readonly reject: (error: unknown) => void;
  readonly cleanup: () => void;
}

export interface PoolOptions {
  readonly maxQueue: number;
  readonly queueTimeoutMs: number;
  /**
   * Whether a saved state already holds everything `sequence` holds (the KV cache tier,
   * kv-tier.ts): taking such a sequence over loses nothing and costs no save.
   */
  readonly kept?: (sequence: LlamaContextSequence) => boolean;
  /**
   * Whether a sequence holding `held` tokens is saved first when a prompt sharing `shared` of them takes it (the KV
   * cache tier, kv-tier.ts `savedWhenTaken`): what it held is then a copy away, not lost, and counts SAVED_LOSS_SHARE
   * of its tokens.
   */
  readonly saves?: (held: number, shared: number) => boolean;
  /**
   * The sequence's id in its context (llama-internals.ts, `sequenceIdOf`): the pool keeps the
   * busy ids adjacent (`RUN_COST_TOKENS`). Without it, ids play no part in the choice.
   */
  readonly idOf?: (sequence: LlamaContextSequence) => number;
  /** Called with each sequence given back, before it goes to the next request (its blocks reported: kv-blocks.ts). */
  readonly released?: (sequence: LlamaContextSequence) => void;
}

/**
 * What a sequence that starts a new run of busy ids costs, in prompt tokens: llama.cpp evaluates a
 * batch of sequences with their own KV caches one run of consecutive ids at a time, each run a
 * pass over the weights. Measured on a 2-core CPU, one more run costs a decode step about what 5
 * prompt tokens cost (850M-class model: 4 streams' steps 92 ms on ids 0–3, 138 on 0, 1, 6, 7,
 * 206 on 0, 2, 4, 6), so over a reply of ~50 tokens about 256 tokens. docs/decisions.md, "One
 * context, many sequences".
 */
export const RUN_COST_TOKENS = 256;

/**
 * What a token a sequence loses to a prompt counts when the KV tier saves it first, against a token the prompt shares:
 * it comes back later by a copy (tens of microseconds a token on the 850M-class model, on a CPU) where a shared token
 * spares a decode now (~3.5 ms a token there). An eighth still keeps a sequence holding a long conversation from
 * being taken over for a chat template's header while an empty one is free; a prompt that shares most of a short one
 * takes it (the same line asked again with another ending: llama-server reuses such a slot too).
 */
export const SAVED_LOSS_SHARE = 1 / 8;

/**
 * The sequences of one context. A request takes the free sequence whose cached tokens share the
 * longest prefix with its prompt; when none is free it waits in a bounded queue, and is refused at
 * once when that queue is full. A freed sequence goes to the waiting client served least often
 * since the pool was last not saturated (in arrival order among equals): clients take turns, and
 * each client's own requests keep their order. A request for several sequences (`acquireMany`)
 * takes them all at once or waits; once it is the next waiter served it collects every sequence
 * freed until it has them all (one collects at a time, so two cannot starve each other).
 *
 * A batch request (a `BatchClaim`: proto GenerateRequest.priority) is served only when no
 * interactive request waits, and waits outside `maxQueue` and the queue timeout (at most
 * BATCH_QUEUE_LIMIT of them). An interactive request that finds every sequence busy preempts
 * batch requests holding sequences, the one that took its sequence last first, and a batch
 * request collecting sequences gives back those it holds (idle-capacity.ts).
 */
export class SequencePool {
  readonly #free: LlamaContextSequence[] = [];
  readonly #busy = new Set<LlamaContextSequence>();
  readonly #queue: Waiter[] = [];
  /** The waiter for several sequences now collecting them; it holds some, no other waiter is served. */
  #collector: Waiter | undefined;
  /** Sequences handed to each client since a sequence was last freed with nobody waiting. */
  readonly #turns = new Map<string, number>();
  /** The batch requests holding sequences. */
  readonly #batch = new BatchHolds();
  readonly #options: PoolOptions;
  readonly size: number;

  constructor(context: LlamaContext, options: PoolOptions) {
    this.#options = options;
    while (context.sequencesLeft > 0) this.#free.push(context.getSequence());
    this.size = this.#free.length;
  }

  get busy(): number {
    return this.size - this.#free.length;
  }

  /** KV-cache cells that sequences in use hold (their evaluated tokens). */
  heldTokens(): number {
    let held = 0;
    for (const sequence of this.#busy) held += sequence.nextTokenIndex;
    return held;
  }

  /** Whether a request holds `sequence` now. */
  isBusy(sequence: LlamaContextSequence): boolean {
    return this.#busy.has(sequence);
  }

  /** Every sequence, free or busy. */
  all(): LlamaContextSequence[] {
    return [...this.#free, ...this.#busy];
  }

  /** The queue's limits, as configured. */
  get limits(): PoolOptions {
    return this.#options;
  }

  /** Interactive requests waiting for sequences. */
  get queued(): number {
    return this.#waiting(false);
  }

  /** Batch requests waiting for sequences. */
  get queuedBatch(): number {
    return this.#waiting(true);
  }

  /** Batch requests holding sequences, and the sequences they hold. */
  get batchRunning(): { readonly requests: number; readonly sequences: number } {
    return { requests: this.#batch.running, sequences: this.#batch.sequences };
  }

  #waiting(batch: boolean): number {
    const queued = this.#queue.filter((waiter) => (waiter.batch !== undefined) === batch).length;
    return queued + (this.#collector !== undefined && (this.#collector.batch !== undefined) === batch ? 1 : 0);
  }

  /** One sequence; `batch` for a PRIORITY_BATCH request (served in idle capacity, preempted by an interactive one). */
  acquire(
    prompt: readonly Token[],
    signal: AbortSignal,
    client = "",
    batch?: BatchClaim,
  ): Promise<LlamaContextSequence> {
    if (signal.aborted) return Promise.reject(cancelled());
    if (this.#free.length > 0) {
      this.#countTurn(client);
      return Promise.resolve(this.#held(batch, [this.#take(prompt)])[0] as LlamaContextSequence);
    }
    return this.#wait(prompt, signal, client, 1, batch).then(([sequence]) => sequence as LlamaContextSequence);
  }

  /**
   * `count` sequences for one request, all at once (the first holds the longest shared prefix);
   * the request waits while fewer are free. More than the pool has is INVALID_ARGUMENT.
   */
  acquireMany(
    prompt: readonly Token[],
    signal: AbortSignal,
    client: string,
    count: number,
    batch?: BatchClaim,
  ): Promise<LlamaContextSequence[]> {
    if (signal.aborted) return Promise.reject(cancelled());
    if (count > this.size)
      return Promise.reject(invalidArgument(`${count} choices need ${count} sequences; the model has ${this.size}`));
    if (this.#free.length >= count) {
      this.#countTurn(client);
      return Promise.resolve(
        this.#held(
          batch,
          Array.from({ length: count }, () => this.#take(prompt)),
        ),
      );
    }
    return this.#wait(prompt, signal, client, count, batch);
  }

  /** Sequences a request takes; a batch request's are counted as its (idle-capacity.ts). */
  #held(batch: BatchClaim | undefined, sequences: LlamaContextSequence[]): LlamaContextSequence[] {
    if (batch !== undefined) this.#batch.add(batch, sequences);
    return sequences;
  }

  #wait(
    prompt: readonly Token[],
    signal: AbortSignal,
    client: string,
    count: number,
    batch: BatchClaim | undefined,
  ): Promise<LlamaContextSequence[]> {
    const waiting = batch === undefined ? this.queued : this.queuedBatch;
    if (waiting >= (batch === undefined ? this.#options.maxQueue : BATCH_QUEUE_LIMIT)) {
      const what = batch === undefined ? "requests are" : "batch requests are";
      return Promise.reject(overloaded(`all ${this.size} sequences are busy and ${waiting} ${what} waiting`));
    }
    const waiter = this.#enqueue(prompt, signal, client, count, batch);
    if (batch === undefined) this.#makeRoom();
    return waiter;
  }

  #enqueue(
    prompt: readonly Token[],
    signal: AbortSignal,
    client: string,
    count: number,
    batch: BatchClaim | undefined,
  ): Promise<LlamaContextSequence[]> {
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        this.#remove(waiter);
        reject(cancelled());
      };
      // A batch request waits as long as its caller lets it: it is served in idle capacity.
      const timer =
        batch === undefined
          ? setTimeout(() => {
              this.#remove(waiter);
              reject(queueTimeout(`no sequence became free within ${this.#options.queueTimeoutMs} ms`));
            }, this.#options.queueTimeoutMs)
          : undefined;
      const waiter: Waiter = {
        prompt,
        client,
        count,
        held: [],
        batch,
        resolve: (sequences) => resolve(this.#held(batch, sequences)),
        reject,
        cleanup: () => {
          clearTimeout(timer);
          signal.removeEventListener("abort", onAbort);
        },
      };
      signal.addEventListener("abort", onAbort, { once: true });
      // Some sequences free but too few (several asked for): it collects from now on.
      if (this.#free.length > 0) {
        this.#countTurn(client);
        while (this.#free.length > 0) waiter.held.push(this.#take(prompt));
        this.#collector = waiter;
      } else this.#queue.push(waiter);
    });
  }

  /**
   * An interactive request waits: a batch request collecting sequences gives them back, and batch
   * requests holding sequences are preempted until those they are about to free cover what
   * interactive requests wait for.
   */
  #makeRoom(): void {
    const collector = this.#collector;
    if (collector?.batch !== undefined) {
      this.#collector = undefined;
      this.#queue.unshift(collector);
      for (const sequence of collector.held.splice(0)) this.release(sequence);
    }
    let needed = 0;
    for (const waiter of this.#queue) if (waiter.batch === undefined) needed += waiter.count;
    if (this.#collector !== undefined && this.#collector.batch === undefined)
      needed += this.#collector.count - this.#collector.held.length;
    this.#batch.preemptFor(needed);
  }

  release(sequence: LlamaContextSequence): void {
    this.#options.released?.(sequence);
    this.#batch.release(sequence);
    const next = this.#collector ?? this.#nextWaiter();
    if (next) {
      next.held.push(sequence);
      if (next.held.length < next.count) {
        this.#collector = next;
        return;
      }
      this.#collector = undefined;
      next.cleanup();
      next.resolve(next.held);
      return;
    }
    // Nobody waits: the pool is not saturated, and turns start over.
    this.#turns.clear();
    this.#busy.delete(sequence);
    this.#free.push(sequence);
  }

  #countTurn(client: string): void {
    this.#turns.set(client, (this.#turns.get(client) ?? 0) + 1);
  }

  /**
   * Takes the first waiter of the client with the fewest turns, and counts its turn: among
   * interactive waiters, and among batch waiters only when no interactive one waits.
   */
  #nextWaiter(): Waiter | undefined {
    const batch = this.#queue.every((waiter) => waiter.batch !== undefined);
    let best = -1;
    let bestTurns = Number.POSITIVE_INFINITY;
    for (const [i, waiter] of this.#queue.entries()) {
      if ((waiter.batch !== undefined) !== batch) continue;
      const turns = this.#turns.get(waiter.client) ?? 0;
      if (turns < bestTurns) [best, bestTurns] = [i, turns];
    }
    const [waiter] = best === -1 ? [] : this.#queue.splice(best, 1);
    if (waiter !== undefined) this.#countTurn(waiter.client);
    return waiter;
  }

  /** Refuses everything waiting (used when draining). */
  rejectWaiting(error: unknown): void {
    for (const waiter of this.#queue.splice(0)) {
      waiter.cleanup();
      waiter.reject(error);
    }
    if (this.#collector !== undefined) this.#remove(this.#collector, error);
  }

  /** Takes `waiter` out of the queue (rejected with `error` when given); what it collected is freed. */
  #remove(waiter: Waiter, error?: unknown): void {
    waiter.cleanup();
    const at = this.#queue.indexOf(waiter);
    if (at !== -1) this.#queue.splice(at, 1);
    if (waiter === this.#collector) {
      this.#collector = undefined;
      if (error !== undefined) waiter.reject(error);
      for (const sequence of waiter.held.splice(0)) this.release(sequence);
    }
  }

  #take(prompt: readonly Token[]): LlamaContextSequence {
    // Each free sequence scores the prompt tokens it already holds (its shared prefix) minus the cached
    // tokens the prompt would throw away (the rest of what it holds; SAVED_LOSS_SHARE of them where the
    // KV tier saves them first): a sequence holding another conversation is not overwritten for a few
    // shared tokens (a chat template's header) while an empty one is free. A prefix of one token (the
    // BOS) is no reuse; among equals the sequence free the longest is taken, so recent caches survive
    // for their owners. A sequence whose tokens a saved state holds (the KV cache tier) loses nothing
    // when taken over, nor does one that holds the whole prompt (all but its last token): the prompt
    // is asked again, and what follows it there is that same conversation's earlier reply. One beside
    // the busy sequences' ids is worth RUN_COST_TOKENS more than one apart from them.
    let best = 0;
    let bestScore = Number.NEGATIVE_INFINITY;
    const busyIds = this.#busyIds();
    for (let i = 0; i < this.#free.length; i++) {
      const candidate = this.#free[i];
      if (candidate === undefined) continue;
      let shared = candidate.compareContextTokens(prompt as Token[]).firstDifferentIndex;
      if (shared <= 1) shared = 0;
      const askedAgain = shared > 0 && shared >= prompt.length - 1;
      const held = candidate.nextTokenIndex;
      const saved = this.#options.saves?.(held, shared) === true;
      const lost =
        askedAgain || this.#options.kept?.(candidate) === true
          ? 0
          : Math.max(0, held - shared) * (saved ? SAVED_LOSS_SHARE : 1);
      const score = shared - lost - RUN_COST_TOKENS * this.#runsAdded(candidate, busyIds);
      if (score > bestScore) {
        best = i;
        bestScore = score;
      }
    }
    const [sequence] = this.#free.splice(best, 1);
    if (sequence === undefined) throw new Error("sequence pool is empty");
    this.#busy.add(sequence);
    return sequence;
  }

  /** The ids of the busy sequences; empty without `idOf`. */
  #busyIds(): Set<number> {
    const idOf = this.#options.idOf;
    return new Set(idOf === undefined ? [] : [...this.#busy].map(idOf));
  }

  /**
   * How many runs of consecutive busy ids taking `candidate` adds: 1 beside none, 0 beside one,
   * -1 between two (it joins them); 0 while nothing is busy.
   */
  #runsAdded(candidate: LlamaContextSequence, busyIds: ReadonlySet<number>): number {
    const idOf = this.#options.idOf;
    if (idOf === undefined || busyIds.size === 0) return 0;
    const id = idOf(candidate);
    return 1 - Number(busyIds.has(id - 1)) - Number(busyIds.has(id + 1));
  }
}
