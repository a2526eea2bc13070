// A KV cache tier in host memory (`KvTier`): a sequence's state is saved (in memory, or to a file)
// before the sequence is taken over by another prompt, and restored when a prompt shares a longer
// prefix with a saved state than with its sequence. docs/decisions.md, "A KV cache tier in host
// memory".
import { randomUUID } from "node:crypto";
import { statSync } from "node:fs";
import { mkdtemp, readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { LlamaContextSequence, Token } from "node-llama-cpp";
import { errorText } from "../engine-errors.js";
import { claim, modelFolder, OWNER_FILE, ramFolder } from "./kv-folder.js";
import type { HeldState, SequenceStates } from "./llama-internals.js";
import type { KvBlocks } from "./kv-blocks.js";
import {
  evictionOrder,
  keptUntil,
  liveMarks,
  marksFrom,
  readMarks,
  type KvMark,
  type MarkRequest,
} from "./kv-marks.js";

/**
 * The fewest tokens worth a state: a sequence holding fewer is not saved, and a state is restored
 * only when it gives at least this many tokens more than the sequence already holds.
 */
export const MIN_STATE_TOKENS = 64;

/**
 * Whether a sequence holding `held` tokens is saved before a prompt sharing `live` of them takes it: taken over (the
 * prompt keeps at most half of what it holds), with enough to save. A marked prefix lost is saved too (`prepare`).
 */
export function savedWhenTaken(held: number, live: number): boolean {
  return held >= MIN_STATE_TOKENS && live <= held / 2;
}
/** `--cache-ram auto`: llama-server's 8 GiB, capped by half of the host's free memory at start. */
export const DEFAULT_CACHE_RAM_MIB = 8192;
/**
 * How long after a takeover the tier saves a sequence as soon as it is left idle (`saveAhead`): while
 * sessions outnumber sequences, the state would be saved at the next takeover anyway, on that
 * request's path.
 */
export const PRESSURE_MS = 5 * 60_000;
const INDEX_FILE = "index.json";
const INDEX_VERSION = 1;

/** Runs work on a sequence between two decode steps (batch-scheduling.ts's `between`). */
export type Between = <T>(sequence: LlamaContextSequence, work: () => Promise<T>) => Promise<T>;

export interface KvTierOptions {
  /** The most the saved states may take, in bytes. */
  readonly budgetBytes: number;
  /**
   * A folder that keeps the states and their index across restarts; none: a private RAM-backed folder, removed at stop.
   */
  readonly dir?: string | undefined;
  /**
   * Keeps the states in memory instead of the private folder's files (one copy less each way;
   * llama-internals.ts, `sequenceStates`). Not with `dir`, whose states are files by purpose.
   */
  readonly states?: SequenceStates | undefined;
  /** The model and context a state belongs to (`modelIdentity`); a state of another is never loaded. */
  readonly identity: string;
  readonly between: Between;
  readonly log?: (line: string) => void;
  /** The blocks its states hold are reported here, medium CPU (kv-blocks.ts); unset: not reported. */
  readonly blocks?: KvBlocks | undefined;
  /** The wall clock in ms (marks' expiry, kv-marks.ts); `Date.now` unless a test injects one. */
  readonly now?: () => number;
}

interface Entry {
  /** The state's file name, or with `states` its key in memory. */
  readonly file: string;
  readonly tokens: readonly Token[];
  readonly bytes: number;
  readonly model: string;
  /** Marked prefixes of the state that keep it ahead of unmarked ones (kv-marks.ts). */
  marks?: KvMark[] | undefined;
  /** When it was last saved or restored (ms since the epoch; the Slots RPC shows it). */
  usedAt?: number | undefined;
}

/** A state the tier keeps, as the Slots RPC shows it. */
export interface SavedStateView {
  readonly tokens: number;
  readonly bytes: number;
  /** When it was last saved or restored, in ms since the epoch (0: before this run, unknown). */
  readonly usedAt: number;
}

/** What the tier holds and did, read by /metrics. */
export interface KvTierStats {
  readonly states: number;
  /** Of `states`, those a mark in force keeps ahead of the rest. */
  readonly marked: number;
  readonly bytes: number;
  readonly hits: number;
  readonly misses: number;
  readonly saves: number;
  readonly evictions: number;
  readonly dropped: number;
  readonly restoreSeconds: number;
}

/** `--cache-ram` in MiB: a number, or "auto" (min(8 GiB, half the free memory now)). */
export function cacheRamMiB(setting: number | "auto"): number {
  if (setting !== "auto") return setting;
  return Math.min(DEFAULT_CACHE_RAM_MIB, Math.floor(os.freemem() / 2 / 2 ** 20));
}

/** The model file (path, size, modification time) and the sequence's context size; a LoRA adapter's file and scale. */
export function modelIdentity(
  modelPath: string,
  contextSize: number,
  adapter?: { readonly path: string; readonly scale: number },
): string {
  const file = statSync(modelPath);
  const identity = { model: path.resolve(modelPath), size: file.size, mtimeMs: file.mtimeMs, contextSize };
  if (adapter === undefined) return JSON.stringify(identity);
  // A LoRA adapter's states are its own, at its scale: another adapter's (or the base's, or another scale's) never
  // match them.
  const lora = statSync(adapter.path);
  return JSON.stringify({
    ...identity,
    lora: path.resolve(adapter.path),
    loraSize: lora.size,
    loraMtimeMs: lora.mtimeMs,
    loraScale: adapter.scale,
  });
}

/** How many leading tokens `a` and `b` share. */
export function sharedPrefix(a: readonly Token[], b: readonly Token[]): number {
  const end = Math.min(a.length, b.length);
  let i = 0;
  while (i < end && a[i] === b[i]) i++;
  return i;
}

const startsWith = (tokens: readonly Token[], prefix: readonly Token[]): boolean =>
  tokens.length >= prefix.length && sharedPrefix(tokens, prefix) === prefix.length;

/**
 * How many tokens a new state of `tokens` shares with `entry` when it makes `entry` worth nothing
 * (else undefined): it holds all of `entry` but fewer than MIN_STATE_TOKENS at its end, and every
 * marked prefix of it in force. Then no prompt gets MIN_STATE_TOKENS more from `entry` than from
 * it — the usual case is a session's previous turn, whose reply the client sends back re-rendered
 * (its tokens differ from those generated at the end).
 */
function supersedes(tokens: readonly Token[], entry: Entry, now: number): number | undefined {
  const shared = sharedPrefix(tokens, entry.tokens);
  if (entry.tokens.length - shared >= MIN_STATE_TOKENS) return undefined;
  if ((entry.marks ?? []).some((mark) => mark.expiresAt > now && mark.tokens > shared)) return undefined;
  return shared;
}

/**
 * Saved sequence states within a byte budget, least recently used first out. `prepare` runs before
 * a request decides what to evaluate: it saves what the sequence would lose (once: not when a state
 * holds the same tokens or more), and loads the state sharing the longest prefix with the prompt
 * when that beats the sequence's own. Calls run one at a time.
 */
export class KvTier {
  /** Insertion order is recency: the first entry is the least recently used. */
  readonly #entries = new Map<string, Entry>();
  readonly #options: KvTierOptions;
  readonly #log: (line: string) => void;
  #bytes = 0;
  /** Bytes per token of the last state saved: a state that would not fit the budget is not saved. */
  #bytesPerToken = 0;
  #turn: Promise<unknown> = Promise.resolve();
  /** Files of states no longer held, removed after the request that let them go has its sequence. */
  #doomed: string[] = [];
  /** With `states`: the states in memory, by entry. */
  readonly #held = new Map<string, HeldState>();
  /** The marks in force for what each sequence holds (its last prompt's, and those it kept). */
  readonly #marks = new WeakMap<LlamaContextSequence, KvMark[]>();
  readonly #now: () => number;
  /** When a request last took over a sequence holding a state worth saving (`PRESSURE_MS`). */
  #takenOverAt = Number.NEGATIVE_INFINITY;
  #counts = { hits: 0, misses: 0, saves: 0, evictions: 0, dropped: 0, restoreSeconds: 0 };

  private constructor(
    readonly dir: string,
    options: KvTierOptions,
  ) {
    this.#options = options;
    this.#log = options.log ?? ((line) => process.stderr.write(`${line}\n`));
    this.#now = options.now ?? Date.now;
  }

  /**
   * Opens the folder: with `dir`, this model's own subfolder of it and the states a previous run
   * left there, unless another running sidecar uses that subfolder (then, with a log line, a
   * private folder as without `dir`).
   */
  static async open(options: KvTierOptions): Promise<KvTier> {
    const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
    if (options.dir !== undefined) {
      const folder = modelFolder(options.dir, options.identity);
      const owner = await claim(folder);
      if (owner === undefined) {
        const tier = new KvTier(folder, { ...options, states: undefined });
        await tier.#readIndex();
        return tier;
      }
      log(
        `kv tier: ${folder} is in use by process ${owner}; this sidecar keeps its states in a private folder until ` +
          `it stops`,
      );
    }
    if (options.states !== undefined) return new KvTier("", { ...options, dir: undefined });
    const folder = await mkdtemp(path.join(ramFolder(options.budgetBytes), "sidecar-kv-"));
    return new KvTier(folder, { ...options, dir: undefined, states: undefined });
  }

  /** The tokens each saved state holds, least recently used first. */
  heldTokens(): (readonly Token[])[] {
    return [...this.#entries.values()].map((entry) => entry.tokens);
  }

  get stats(): KvTierStats {
    const now = this.#now();
    const marked = [...this.#entries.values()].filter((entry) => keptUntil(entry.marks, now) > 0).length;
    return { states: this.#entries.size, marked, bytes: this.#bytes, ...this.#counts };
  }

  /** The states kept, most recently used first. */
  saved(): SavedStateView[] {
    return [...this.#entries.values()]
      .reverse()
      .map((entry) => ({ tokens: entry.tokens.length, bytes: entry.bytes, usedAt: entry.usedAt ?? 0 }));
  }

  /**
   * Whether taking `sequence` over would lose nothing: a saved state holds all it holds, or it holds too little to
   * save.
   */
  keeps(sequence: LlamaContextSequence): boolean {
    const tokens = sequence.contextTokens;
    if (tokens.length < MIN_STATE_TOKENS) return true;
    for (const entry of this.#entries.values()) if (startsWith(entry.tokens, tokens)) return true;
    return false;
  }

  /**
   * Saves what `sequence` would lose to `prompt`, then restores a better prefix when `restore`;
   * the prompt's `marks` (prefix lengths and how long they are kept) go with the sequence's state.
   */
  prepare(
    sequence: LlamaContextSequence,
    prompt: readonly Token[],
    restore: boolean,
    marks: readonly MarkRequest[] = [],
  ): Promise<void> {
    const run = this.#turn.then(() => this.#prepare(sequence, prompt, restore, marks));
    // Files let go of are removed after the request is on its way (freeing a large file takes
    // milliseconds), before the next call.
    this.#turn = run.catch(() => undefined).then(() => this.#sweep());
    return run;
  }

  /**
   * Saves `sequence` now, off any request's path, when sequences were taken over within the last
   * `PRESSURE_MS` (it would likely be saved at its takeover otherwise); the caller calls it when no
   * other sequence is decoding, since a save holds their steps. Returns whether a save was queued.
   */
  saveAhead(sequence: LlamaContextSequence): boolean {
    if (this.#now() - this.#takenOverAt > PRESSURE_MS || this.keeps(sequence)) return false;
    this.#turn = this.#turn
      .then(() => this.#save(sequence))
      .catch(() => undefined)
      .then(() => this.#sweep());
    return true;
  }

  /** Resolves when the calls queued so far are done. */
  async settled(): Promise<void> {
    await this.#turn;
  }

  /**
   * Lets every saved state go, after the calls queued so far: their cells were computed under what no longer holds
   * (a LoRA adapter's scale changed).
   */
  forget(): Promise<void> {
    const run = this.#turn.then(async () => {
      for (const file of [...this.#entries.keys()]) this.#remove(file);
      await this.#sweep();
      await this.#writeIndex();
    });
    this.#turn = run.catch(() => undefined);
    return run;
  }

  async #prepare(
    sequence: LlamaContextSequence,
    prompt: readonly Token[],
    restore: boolean,
    marks: readonly MarkRequest[],
  ): Promise<void> {
    const live = sharedPrefix(sequence.contextTokens, prompt);
    const held = sequence.nextTokenIndex;
    const now = this.#now();
    const lost = this.#marks.get(sequence)?.some((mark) => mark.expiresAt > now && mark.tokens > live) === true;
    if (savedWhenTaken(held, live) || (held >= MIN_STATE_TOKENS && lost)) {
      this.#takenOverAt = now;
      await this.#save(sequence);
    }
    let kept = liveMarks(this.#marks.get(sequence) ?? [], now, live);
    const best = restore ? this.#best(prompt) : undefined;
    if (best !== undefined && best.shared >= live + MIN_STATE_TOKENS) {
      const restored = await this.#restore(sequence, best.file);
      kept = liveMarks(restored?.marks ?? [], now, restored === undefined ? 0 : best.shared);
    } else if (restore && prompt.length >= MIN_STATE_TOKENS && live <= prompt.length / 2) this.#counts.misses++;
    this.#marks.set(sequence, liveMarks([...kept, ...marksFrom(marks, now)], now, prompt.length));
  }

  /** The entry sharing the longest prefix with the prompt. */
  #best(prompt: readonly Token[]): { file: string; shared: number } | undefined {
    let best: { file: string; shared: number } | undefined;
    for (const [file, entry] of this.#entries) {
      const shared = sharedPrefix(entry.tokens, prompt);
      if (shared > (best?.shared ?? 0)) best = { file, shared };
    }
    return best;
  }

  async #save(sequence: LlamaContextSequence): Promise<void> {
    const tokens = sequence.contextTokens.slice();
    const now = this.#now();
    const marks = liveMarks(this.#marks.get(sequence) ?? [], now, tokens.length);
    for (const entry of this.#entries.values()) {
      if (!startsWith(entry.tokens, tokens)) continue;
      // Saved already: the state that holds it takes its marks.
      if (marks.length === 0) return;
      entry.marks = liveMarks([...(entry.marks ?? []), ...marks], now, entry.tokens.length);
      return this.#writeIndex();
    }
    if (tokens.length * this.#bytesPerToken > this.#options.budgetBytes) return;
    // States this one (nearly) extends are superseded (the same session, turns ago); it takes their marks.
    const superseded = [...this.#entries.values()].flatMap((entry) => {
      const shared = supersedes(tokens, entry, now);
      return shared === undefined ? [] : [{ entry, shared }];
    });
    const file = `${randomUUID()}.kv`;
    let bytes: number;
    try {
      bytes = await this.#write(
        sequence,
        file,
        superseded.map(({ entry }) => entry),
      );
    } catch (error) {
      this.#log(`kv tier: a ${tokens.length}-token state could not be saved (${errorText(error)})`);
      if (this.#options.states === undefined) await rm(path.join(this.dir, file), { force: true });
      return;
    }
    const inherited: KvMark[] = [];
    for (const { entry, shared } of superseded) {
      if (!this.#entries.has(entry.file)) continue;
      inherited.push(...liveMarks(entry.marks ?? [], now, shared));
      this.#remove(entry.file);
    }
    const kept = liveMarks([...marks, ...inherited], now, tokens.length);
    this.#options.blocks?.hold(file, "CPU", tokens);
    this.#entries.set(file, {
      file,
      tokens,
      bytes,
      model: this.#options.identity,
      ...(kept.length > 0 ? { marks: kept } : {}),
      usedAt: now,
    });
    this.#bytes += bytes;
    this.#bytesPerToken = bytes / Math.max(1, tokens.length);
    this.#counts.saves++;
    this.#evict();
    await this.#writeIndex();
  }

  /**
   * Saves what `sequence` holds as `file` (in memory with `states`, into the buffer of a state it
   * supersedes when there is one); returns its bytes.
   */
  async #write(sequence: LlamaContextSequence, file: string, superseded: readonly Entry[]): Promise<number> {
    const states = this.#options.states;
    if (states === undefined)
      return (await this.#options.between(sequence, () => sequence.saveStateToFile(path.join(this.dir, file))))
        .fileSize;
    const old = superseded.find((entry) => this.#held.has(entry.file))?.file;
    const reuse = old === undefined ? undefined : this.#held.get(old);
    // Its buffer is written over: the entry goes with this save (or now, if the save fails).
    if (old !== undefined) this.#held.delete(old);
    try {
      const state = await this.#options.between(sequence, () => states.capture(sequence, reuse));
      this.#held.set(file, state);
      return state.bytes;
    } catch (error) {
      if (old !== undefined) this.#remove(old);
      throw error;
    }
  }

  /**
   * Removes states until the rest fit the budget: unmarked ones by recency, then marked ones by expiry (kv-marks.ts).
   */
  #evict(): void {
    for (const oldest of evictionOrder(this.#entries, this.#now())) {
      if (this.#bytes <= this.#options.budgetBytes) return;
      this.#remove(oldest);
      this.#counts.evictions++;
    }
  }

  /** Loads the entry into the sequence; returns it, or undefined when it did not load. */
  async #restore(sequence: LlamaContextSequence, file: string): Promise<Entry | undefined> {
    const entry = this.#entries.get(file);
    if (entry === undefined) return undefined;
    // Most recently used: last in the map.
    this.#entries.delete(file);
    this.#entries.set(file, entry);
    entry.usedAt = this.#now();
    const started = performance.now();
    try {
      await this.#load(sequence, entry);
      this.#counts.hits++;
      this.#counts.restoreSeconds += (performance.now() - started) / 1000;
      return entry;
    } catch (error) {
      this.#log(
        `kv tier: dropped a ${entry.tokens.length}-token state that did not load (${errorText(error)}); the prompt ` +
          `is evaluated cold`,
      );
      this.#counts.dropped++;
      this.#counts.misses++;
      this.#remove(file);
      await this.#writeIndex();
      const end = sequence.nextTokenIndex;
      if (end > 0) await this.#options.between(sequence, () => sequence.eraseContextTokenRanges([{ start: 0, end }]));
      return undefined;
    }
  }

  /** Empties the sequence, loads the entry's state into it and checks the tokens it holds then. */
  async #load(sequence: LlamaContextSequence, entry: Entry): Promise<void> {
    if (entry.model !== this.#options.identity) throw new Error("a state of another model");
    const states = this.#options.states;
    if (states !== undefined) {
      const state = this.#held.get(entry.file);
      if (state === undefined) throw new Error("its state is gone");
      await this.#options.between(sequence, () => states.restore(sequence, state, entry.tokens));
    } else {
      const filePath = path.join(this.dir, entry.file);
      if ((await stat(filePath)).size !== entry.bytes) throw new Error("its file changed size");
      await this.#options.between(sequence, async () => {
        const end = sequence.nextTokenIndex;
        if (end > 0) await sequence.eraseContextTokenRanges([{ start: 0, end }]);
        await sequence.loadStateFromFile(filePath, { acceptRisk: true });
      });
    }
    const restored = sequence.contextTokens;
    if (restored.length !== entry.tokens.length || !startsWith(restored, entry.tokens))
      throw new Error("it held other tokens");
  }

  /** Lets the state go: it is no longer held or counted; its file or memory goes at the next `#sweep`. */
  #remove(file: string): void {
    const entry = this.#entries.get(file);
    if (entry === undefined) return;
    this.#options.blocks?.drop(file);
    this.#entries.delete(file);
    this.#bytes -= entry.bytes;
    this.#doomed.push(file);
  }

  /** Frees the states let go of: their memory, or their files. */
  async #sweep(): Promise<void> {
    for (const file of this.#doomed.splice(0)) {
      const state = this.#held.get(file);
      this.#held.delete(file);
      if (state !== undefined) state.dispose();
      else if (this.#options.states === undefined) await rm(path.join(this.dir, file), { force: true });
    }
  }

  /** `--cache-dir`: the entries, least recently used first, written whole and renamed into place. */
  async #writeIndex(): Promise<void> {
    if (this.#options.dir === undefined) return;
    const index = { version: INDEX_VERSION, entries: [...this.#entries.values()] };
    const temporary = path.join(this.dir, `${INDEX_FILE}.${process.pid}.tmp`);
    try {
      await writeFile(temporary, JSON.stringify(index));
      await rename(temporary, path.join(this.dir, INDEX_FILE));
    } catch (error) {
      this.#log(`kv tier: the index in ${this.dir} could not be written (${errorText(error)})`);
    }
  }

  /**
   * Takes the previous run's states of this model whose files are whole; removes the rest, and
   * state files no index names (a run that stopped before removing them).
   */
  async #readIndex(): Promise<void> {
    let entries: Entry[] = [];
    try {
      const index = JSON.parse(await readFile(path.join(this.dir, INDEX_FILE), "utf8")) as {
        version?: number;
        entries?: Entry[];
      };
      if (index.version === INDEX_VERSION && Array.isArray(index.entries)) entries = index.entries;
    } catch {
      // no index: no states
    }
    for (const entry of entries) {
      if (path.basename(entry.file) !== entry.file || !entry.file.endsWith(".kv")) continue;
      const size = await stat(path.join(this.dir, entry.file)).then(
        (s) => s.size,
        () => -1,
      );
      if (entry.model !== this.#options.identity || size !== entry.bytes) continue;
      this.#entries.set(entry.file, { ...entry, marks: readMarks(entry.marks) });
      this.#options.blocks?.hold(entry.file, "CPU", entry.tokens);
      this.#bytes += entry.bytes;
    }
    for (const file of await readdir(this.dir))
      if (file.endsWith(".kv") && !this.#entries.has(file)) this.#doomed.push(file);
    this.#evict();
    await this.#sweep();
    await this.#writeIndex();
  }

  /**
   * Waits for the call in progress; frees the states in memory and removes the private folder. A
   * `--cache-dir` stays, and gets the states `sequences` still hold (a restarted sidecar finds its
   * sessions).
   */
  async dispose(sequences: readonly LlamaContextSequence[] = []): Promise<void> {
    await this.#turn;
    for (const state of this.#held.values()) state.dispose();
    this.#held.clear();
    if (this.#options.states !== undefined) return;
    if (this.#options.dir === undefined) {
      await rm(this.dir, { recursive: true, force: true });
      return;
    }
    for (const sequence of sequences) if (sequence.nextTokenIndex >= MIN_STATE_TOKENS) await this.#save(sequence);
    await this.#sweep();
    await rm(path.join(this.dir, OWNER_FILE), { force: true });
  }
}
