// The one place that reaches into node-llama-cpp's private parts (members whose names start with
// `_`). Its public API has no sequence ids on queued decodes, no thread count per batch, no way to
// feed text to a grammar state, no vocabulary text reader, and no sequence state kept in memory;
// the engine needs all five.
// Everything here is checked at start-up (`checkLlamaInternals`), so an upgrade that moves them
// fails loudly when the model loads, never quietly mid-generation — and an upgrade touches this
// file alone.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import {
  LlamaContextSequence,
  LlamaGrammarEvaluationState,
  LlamaRankingContext,
  type Llama,
  type LlamaContext,
  type LlamaModel,
  type Token,
  type TokenPredictor,
} from "node-llama-cpp";

/** The node-llama-cpp version whose internals this module was written against. */
export const SUPPORTED_NODE_LLAMA_CPP = "3.21.1";

/** A decode waiting in a context's queue. */
export interface QueuedDecode {
  readonly sequenceId: number;
  /** The tokens it evaluates: one for a stream's next step. */
  readonly tokens?: readonly unknown[];
  /** Which of them are sampled (`true`). */
  readonly logits?: readonly (true | undefined)[];
  /** Awaited by node-llama-cpp's batch loop after the batch, before it looks for the next one. */
  readonly afterBatchAction?: (sequenceLength: number) => unknown;
}

type DecodeTokens = (...args: unknown[]) => Promise<unknown>;

/** A context's decode queue: the method every decode step goes through, and the pending decodes. */
export interface DecodeQueue {
  readonly decodeTokens: DecodeTokens;
  /** The pending decodes (node-llama-cpp's own array). */
  readonly queued: QueuedDecode[];
  /** Puts `wrapper` in place of the context's queueing method. */
  replace(wrapper: DecodeTokens): void;
}

/** The native sampler functions that step a grammar state by hand. */
export interface GrammarStepper {
  canBeNext(state: LlamaGrammarEvaluationState, token: Token): boolean;
  accept(state: LlamaGrammarEvaluationState, token: Token): void;
}

interface ContextInternals {
  _decodeTokens?: unknown;
  _queuedDecodes?: unknown;
  _ctx?: { initBatch?: unknown; setThreads?: unknown };
}
interface SamplerBindings {
  canBeNextTokenForGrammarEvaluationState?: unknown;
  acceptGrammarEvaluationStateToken?: unknown;
}
interface LlamaInternals {
  _bindings?: { AddonSampler?: SamplerBindings };
}
interface ModelInternals {
  _model?: { getTokenString?: unknown };
}

function fail(what: string): never {
  throw new Error(
    `node-llama-cpp internals changed: ${what} is missing (llm-edge reads it as of node-llama-cpp ` +
      `${SUPPORTED_NODE_LLAMA_CPP}; see sidecar/engine/llama/llama-internals.ts)`,
  );
}

/** The context's decode queue. */
export function decodeQueue(context: LlamaContext): DecodeQueue {
  const internals = context as unknown as ContextInternals;
  const decodeTokens = internals._decodeTokens;
  const queued = internals._queuedDecodes;
  if (typeof decodeTokens !== "function") fail("LlamaContext._decodeTokens");
  if (!Array.isArray(queued)) fail("LlamaContext._queuedDecodes");
  return {
    decodeTokens: decodeTokens as DecodeTokens,
    // Read each time: the context owns the array.
    get queued() {
      return Array.isArray(internals._queuedDecodes) ? (internals._queuedDecodes as QueuedDecode[]) : [];
    },
    replace(wrapper) {
      internals._decodeTokens = wrapper;
    },
  };
}

/** A native method of a context's `_ctx`, bound, or a wrapper put in its place. */
export type NativeCall = (...args: unknown[]) => unknown;

/** The `_ctx` methods the engine wraps. */
export type ContextMethod = "initBatch" | "setThreads" | "addToBatch" | "decodeBatch" | "sampleToken";

/** `context._ctx[name]` as it is now (the last wrapper put in place, else the native method), bound to `_ctx`. */
function contextMethod(context: LlamaContext, name: ContextMethod | "decodeBatchAndSample"): NativeCall {
  const target = (context as unknown as ContextInternals)._ctx as Record<string, unknown> | undefined;
  const method = target?.[name];
  if (typeof method !== "function") fail(`LlamaContext._ctx.${name}`);
  return method.bind(target) as NativeCall;
}

/**
 * Puts `wrap(current)` in place of `context._ctx[name]`, `current` being what was there (a wrapper put in place
 * before, else the native method). The native object's methods are read-only on its prototype; an own property
 * shadows them.
 */
export function wrapContextMethod(
  context: LlamaContext,
  name: ContextMethod,
  wrap: (current: NativeCall) => NativeCall,
): void {
  shadow((context as unknown as ContextInternals)._ctx as object, name, wrap(contextMethod(context, name)));
}

/** An own property `name` of a native object in place of its prototype's read-only method. */
function shadow(target: object, name: string, value: NativeCall): void {
  Object.defineProperty(target, name, { configurable: true, value });
}

/**
 * Runs each batch of `context` on `threadsFor(tokens in the batch)` threads. node-llama-cpp sets one
 * thread count for every batch (`_ctx.setThreads`, just before each decode); the count for a batch
 * is chosen when the batch starts (`_ctx.initBatch`), and node-llama-cpp's own count is replaced.
 */
export function threadsPerBatch(context: LlamaContext, threadsFor: (tokens: number) => number): void {
  const setThreads = contextMethod(context, "setThreads");
  let applied: number | undefined;
  let wanted: number | undefined;
  const apply = (threads: number): void => {
    if (threads === applied) return;
    setThreads(threads);
    applied = threads;
  };
  wrapContextMethod(context, "initBatch", (init) => (tokens) => {
    wanted = threadsFor(tokens as number);
    apply(wanted);
    return init(tokens);
  });
  wrapContextMethod(context, "setThreads", () => (threads) => apply(wanted ?? (threads as number)));
}

/** Calls `started()` as each batch of `context` starts (`_ctx.initBatch`), then the wrapper in place before it. */
export function onBatchStart(context: LlamaContext, started: () => void): void {
  wrapContextMethod(context, "initBatch", (init) => (tokens) => {
    started();
    return init(tokens);
  });
}

/**
 * Calls `observe(tokens, sequences, ms)` after each decode of `context` whose every token is sampled (streams' steps
 * and their drafts, not a prompt's), with the decode's wall time: `_ctx.initBatch`, `_ctx.addToBatch` (once per
 * sequence; its last argument the sampled tokens' indexes) and `_ctx.decodeBatch`, wrapped over whatever is in place
 * (`threadsPerBatch`'s).
 */
export function timeBatches(
  context: LlamaContext,
  observe: (tokens: number, sequences: number, ms: number) => void,
): void {
  let [tokens, unsampled, sequences] = [0, 0, 0];
  wrapContextMethod(context, "initBatch", (init) => (...args) => {
    [tokens, unsampled, sequences] = [0, 0, 0];
    return init(...args);
  });
  wrapContextMethod(context, "addToBatch", (add) => (...args) => {
    const [count, sampled] = [(args[2] as ArrayLike<number>).length, (args[3] as ArrayLike<number>).length];
    tokens += count;
    unsampled += count - sampled;
    sequences++;
    return add(...args);
  });
  wrapContextMethod(context, "decodeBatch", (decode) => async (...args) => {
    const [size, whole, parts, start] = [tokens, unsampled === 0, sequences, performance.now()];
    const done = await decode(...args);
    if (whole && size > 0) observe(size, parts, performance.now() - start);
    return done;
  });
}

/**
 * The presample patch's `_ctx.decodeBatchAndSample(logitIndexes, samplers)`: the batch's decode, then each logit index
 * sampled with its native sampler, the tokens returned (-2: not sampled). Undefined on a library without the patch
 * (the prebuilt one).
 */
export function decodeAndSampleCall(
  context: LlamaContext,
): ((logitIndexes: Uint32Array, samplers: object[]) => Promise<Int32Array>) | undefined {
  const target = (context as unknown as ContextInternals)._ctx as Record<string, unknown> | undefined;
  if (typeof target?.decodeBatchAndSample !== "function") return undefined;
  return contextMethod(context, "decodeBatchAndSample") as (
    indexes: Uint32Array,
    samplers: object[],
  ) => Promise<Int32Array>;
}

/**
 * Watches a native sampler (`LlamaSampler._sampler`, as `_ctx.sampleToken` receives it): `configured` sees each config
 * node-llama-cpp applies before a sampling, and `disposing` gets the sampler's disposal to run now or later.
 */
export function watchNativeSampler(
  sampler: object,
  configured: (config: Readonly<Record<string, unknown>>) => void,
  disposing: (dispose: () => void) => void,
): void {
  const native = sampler as Record<string, unknown>;
  const [apply, dispose] = [native.applyConfig, native.dispose];
  if (typeof apply !== "function") fail("AddonSampler.applyConfig");
  if (typeof dispose !== "function") fail("AddonSampler.dispose");
  shadow(sampler, "applyConfig", (config) => {
    const result = apply.call(sampler, config);
    configured(config as Record<string, unknown>);
    return result;
  });
  shadow(sampler, "dispose", () => disposing(() => dispose.call(sampler)));
}

/** The sequence's id in its context (the id its queued decodes carry). */
export function sequenceIdOf(sequence: LlamaContextSequence): number {
  const id = (sequence as unknown as { _sequenceId?: unknown })._sequenceId;
  if (typeof id !== "number") fail("LlamaContextSequence._sequenceId");
  return id;
}

/** Steps grammar states of `llama` by hand, token by token. */
export function grammarStepper(llama: Llama): GrammarStepper {
  const sampler = (llama as unknown as LlamaInternals)._bindings?.AddonSampler;
  const canBeNext = sampler?.canBeNextTokenForGrammarEvaluationState;
  const accept = sampler?.acceptGrammarEvaluationStateToken;
  if (typeof canBeNext !== "function") fail("Llama._bindings.AddonSampler.canBeNextTokenForGrammarEvaluationState");
  if (typeof accept !== "function") fail("Llama._bindings.AddonSampler.acceptGrammarEvaluationStateToken");
  return {
    canBeNext: (state, token) => Boolean(canBeNext(nativeState(state), token)),
    accept: (state, token) => void accept(nativeState(state), token),
  };
}

function nativeState(state: LlamaGrammarEvaluationState): unknown {
  const native = (state as unknown as { _state?: unknown })._state;
  if (native === undefined || native === null) fail("LlamaGrammarEvaluationState._state");
  return native;
}

/** The vocabulary entry of `token` as the model file writes it (`<0xF0>`, `Ġthe`). */
export function vocabularyEntry(model: LlamaModel, token: Token): string | undefined {
  const native = (model as unknown as ModelInternals)._model;
  const read = native?.getTokenString;
  if (typeof read !== "function") fail("LlamaModel._model.getTokenString");
  const entry: unknown = read.call(native, token);
  return typeof entry === "string" ? entry : undefined;
}

/** A sequence's KV cells held in memory by the addon (its checkpoint object). */
export interface HeldState {
  /** The bytes it holds. */
  readonly bytes: number;
  /** Frees its memory. */
  dispose(): void;
}

/** Sequence states kept in memory: captured from one sequence, restored into any of the same context. */
export interface SequenceStates {
  /**
   * What `sequence` holds now, copied into memory; into `reuse`'s buffer when given (a state let go
   * of, which is no longer to be used or disposed): a new buffer costs more to fill than the copy.
   */
  capture(sequence: LlamaContextSequence, reuse?: HeldState): Promise<HeldState>;
  /**
   * Replaces what `sequence` holds with `state`, whose cells hold `tokens`; throws (the sequence left empty) when it
   * did not restore.
   */
  restore(sequence: LlamaContextSequence, state: HeldState, tokens: readonly Token[]): Promise<void>;
}

interface NativeCheckpoint {
  /** `reuse` (the engine patch's third argument): capture into this checkpoint's buffer. */
  init(context: unknown, sequenceId: number, reuse?: boolean): Promise<void>;
  dispose(): void;
  readonly size: number;
  readonly maxPos: number;
}
interface StateContextInternals {
  _ctx?: { restoreCheckpointInto?: unknown; disposeSequence?: unknown };
}
interface StateSequenceInternals {
  _lock?: object;
  _contextTokens?: Token[];
  _nextTokenIndex?: number;
  _loadedTokenPredictions?: unknown[];
  _tokenPredictorOwner?: object;
  _abortTokenPredictor?: (skipClearingPredictionsFromState?: boolean) => Promise<void>;
}
type Locks = {
  acquireLock(scope: readonly unknown[]): Promise<{ dispose(): void }>;
  isLockActive(scope: readonly unknown[]): boolean;
};

/**
 * Sequence states in memory for `context`, or undefined where they cannot serve: an addon without
 * the project's `restoreCheckpointInto` (the prebuilt library: its checkpoints restore only into
 * the sequence they came from; sidecar/native/state-into.patch), or a model whose cache keeps only
 * part of a sequence in a checkpoint (sliding-window, recurrent or hybrid models). The copies go
 * through node-llama-cpp's checkpoint object (`llama_state_seq_get_data` / `set_data` on a buffer)
 * under the same sequence and context locks as its state files.
 */
export async function sequenceStates(
  llama: Llama,
  model: LlamaModel,
  context: LlamaContext,
): Promise<SequenceStates | undefined> {
  const native = (context as unknown as StateContextInternals)._ctx;
  const restoreInto = native?.restoreCheckpointInto;
  const Checkpoint = (llama as unknown as { _bindings?: { AddonContextSequenceCheckpoint?: unknown } })._bindings
    ?.AddonContextSequenceCheckpoint;
  const insights = model.fileInsights;
  if (typeof restoreInto !== "function" || insights.isHybrid || insights.isRecurrent || insights.swaSize !== undefined)
    return undefined;
  if (typeof Checkpoint !== "function") fail("Llama._bindings.AddonContextSequenceCheckpoint");
  const disposeSequence = native?.disposeSequence;
  if (typeof disposeSequence !== "function") fail("LlamaContext._ctx.disposeSequence");
  const { locked, lockedForCapture } = stateLocks(context, await llamaLocks());
  const held = new WeakMap<HeldState, NativeCheckpoint>();
  return {
    capture: (sequence, reuse) =>
      lockedForCapture(sequence, async (internals) => {
        const reused = reuse === undefined ? undefined : held.get(reuse);
        if (reuse !== undefined) held.delete(reuse);
        const checkpoint = reused ?? new (Checkpoint as new () => NativeCheckpoint)();
        await checkpoint.init(native, sequenceIdOf(sequence), reused !== undefined);
        if (checkpoint.maxPos !== (internals._nextTokenIndex ?? 0) - 1) {
          checkpoint.dispose();
          throw new Error(`the captured state ends at ${checkpoint.maxPos}, not at the sequence's last token`);
        }
        const state: HeldState = { bytes: checkpoint.size, dispose: () => checkpoint.dispose() };
        held.set(state, checkpoint);
        return state;
      }),
    restore: (sequence, state, tokens) =>
      locked(sequence, async (internals) => {
        const checkpoint = held.get(state);
        if (checkpoint === undefined) throw new Error("a state of another context");
        await forget(internals);
        const id = sequenceIdOf(sequence);
        const restored = (await restoreInto.call(native, checkpoint, tokens.length - 1, id)) === true;
        if (!restored) {
          disposeSequence.call(native, id);
          throw new Error("the addon did not restore it");
        }
        internals._contextTokens = tokens.slice();
        internals._nextTokenIndex = tokens.length;
      }),
  };
}

type Locked = <T>(
  sequence: LlamaContextSequence,
  work: (internals: StateSequenceInternals) => Promise<T>,
) => Promise<T>;

/**
 * The locks a state's capture or restore runs under. `locked`: the sequence's and the context's, in the order
 * node-llama-cpp takes them for its state files. `lockedForCapture`: the context's alone when the sequence's next step
 * waits in the queue, not yet in a batch, and the context is free (else as `locked`). That step's evaluation holds the
 * sequence's lock until it is decoded, and an idle context's first batch waits for the requests on their way
 * (arrivals.ts) — the one copying from this sequence among them, which then waited the whole ARRIVAL_WAIT_MS and went
 * a batch later. The context's lock keeps the step out of a batch meanwhile, and until it is decoded the sequence
 * holds what its record says.
 */
function stateLocks(context: LlamaContext, locks: Locks): { locked: Locked; lockedForCapture: Locked } {
  const locked: Locked = async (sequence, work) => {
    const internals = sequence as unknown as StateSequenceInternals;
    if (internals._lock === undefined) fail("LlamaContextSequence._lock");
    const evaluator = await locks.acquireLock([internals._lock, "evaluate"]);
    const contextLock = await locks.acquireLock([context, "context"]).catch((error: unknown) => {
      evaluator.dispose();
      throw error;
    });
    try {
      return await work(internals);
    } finally {
      contextLock.dispose();
      evaluator.dispose();
    }
  };
  const decodes = decodeQueue(context);
  const lockedForCapture: Locked = async (sequence, work) => {
    const id = sequenceIdOf(sequence);
    const waiting = (): boolean => decodes.queued.some((decode) => decode.sequenceId === id);
    if (waiting() && !locks.isLockActive([context, "context"])) {
      const contextLock = await locks.acquireLock([context, "context"]);
      try {
        if (waiting()) return await work(sequence as unknown as StateSequenceInternals);
      } finally {
        contextLock.dispose();
      }
    }
    return locked(sequence, work);
  };
  return { locked, lockedForCapture };
}

/** Empties node-llama-cpp's record of what a sequence holds, as it does before loading a state file. */
async function forget(internals: StateSequenceInternals): Promise<void> {
  if (typeof internals._abortTokenPredictor !== "function") fail("LlamaContextSequence._abortTokenPredictor");
  if (!Array.isArray(internals._loadedTokenPredictions)) fail("LlamaContextSequence._loadedTokenPredictions");
  internals._tokenPredictorOwner = {};
  await internals._abortTokenPredictor(true);
  internals._loadedTokenPredictions.length = 0;
  internals._nextTokenIndex = 0;
  internals._contextTokens = [];
}

interface PredictorSlot {
  _tokenPredictor: TokenPredictor | undefined;
  _abortTokenPredictor(): Promise<void>;
}

/**
 * A sequence's token predictor, which node-llama-cpp sets only when the sequence is made: the
 * engine gives one to a reply that may use it and takes it back after (prompt-lookup.ts).
 */
function predictorSlot(sequence: LlamaContextSequence): PredictorSlot {
  const internals = sequence as unknown as Partial<PredictorSlot>;
  if (!("_tokenPredictor" in internals)) fail("LlamaContextSequence._tokenPredictor");
  if (typeof internals._abortTokenPredictor !== "function") fail("LlamaContextSequence._abortTokenPredictor");
  return internals as PredictorSlot;
}

/** Gives `sequence` the predictor its next evaluations draft with (undefined: none). */
export function setTokenPredictor(sequence: LlamaContextSequence, predictor: TokenPredictor | undefined): void {
  predictorSlot(sequence)._tokenPredictor = predictor;
}

type EraseRanges = (...args: unknown[]) => Promise<void>;

/**
 * Runs every removal of `sequence`'s cells through `wrap`: node-llama-cpp's own (a refuted draft's cells, a predictor
 * aborted, a history cleared) as well as the engine's, all of which take the context's lock.
 */
export function wrapCellRemovals(sequence: LlamaContextSequence, wrap: (remove: () => Promise<void>) => Promise<void>) {
  const internals = sequence as unknown as { _eraseContextTokenRanges?: EraseRanges };
  const original = internals._eraseContextTokenRanges;
  if (typeof original !== "function") fail("LlamaContextSequence._eraseContextTokenRanges");
  internals._eraseContextTokenRanges = function (this: unknown, ...args: unknown[]) {
    return wrap(() => original.apply(this, args));
  };
}

/**
 * Removes the drafted tokens a reply verified but did not use (node-llama-cpp keeps them in the
 * sequence's cells for its next step), so that the sequence holds what its token list says.
 */
export async function dropDraftedTokens(sequence: LlamaContextSequence): Promise<void> {
  await predictorSlot(sequence)._abortTokenPredictor();
}

/**
 * Refuses a draft model whose context cannot draft for `target`'s (node-llama-cpp's native check,
 * the one its draft predictor runs on each reply: the vocabulary's type, its special tokens, its
 * size within 128 and its tokens' texts), so that a mismatch stops the load instead of a reply.
 */
export function checkDraftCompatible(target: LlamaContext, draft: LlamaContext): void {
  type Native = { ensureDraftContextIsCompatibleForSpeculative?: (draft: unknown) => void };
  const native = (target as unknown as { _ctx?: Native })._ctx;
  const draftNative = (draft as unknown as { _ctx?: unknown })._ctx;
  if (typeof native?.ensureDraftContextIsCompatibleForSpeculative !== "function")
    fail("LlamaContext._ctx.ensureDraftContextIsCompatibleForSpeculative");
  native.ensureDraftContextIsCompatibleForSpeculative(draftNative);
}

/**
 * Whether node-llama-cpp checks a whole draft: patches/node-llama-cpp+3.21.1.patch, which the
 * postinstall applies (an install without scripts lacks it, and then keeps at most one drafted
 * token a step).
 */
export function draftsCheckedWhole(): boolean {
  const evaluate = (LlamaContextSequence.prototype as unknown as { _speculativeEvaluate?: unknown })
    ._speculativeEvaluate;
  return (
    typeof evaluate === "function" && evaluate.toString().includes("this._loadedTokenPredictions.at(-1)?.[1]?.[0]")
  );
}

/**
 * node-llama-cpp's own copy of lifecycle-utils: locks are that module's state, so they must come from the copy it
 * imports.
 */
async function llamaLocks(): Promise<Locks> {
  const fromLlama = createRequire(createRequire(import.meta.url).resolve("node-llama-cpp"));
  const locks = (await import(pathToFileURL(fromLlama.resolve("lifecycle-utils")).href)) as Partial<Locks>;
  if (typeof locks.acquireLock !== "function") fail("lifecycle-utils' acquireLock");
  if (typeof locks.isLockActive !== "function") fail("lifecycle-utils' isLockActive");
  return locks as Locks;
}

/** The installed node-llama-cpp's version, read from its package.json. */
export function installedVersion(): string {
  const entry = createRequire(import.meta.url).resolve("node-llama-cpp");
  let dir = path.dirname(entry);
  for (;;) {
    try {
      const pkg = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")) as {
        name?: unknown;
        version?: unknown;
      };
      if (pkg.name === "node-llama-cpp" && typeof pkg.version === "string") return pkg.version;
    } catch {
      // no package.json here: look one folder up
    }
    const parent = path.dirname(dir);
    if (parent === dir) return "unknown";
    dir = parent;
  }
}

type EvaluateRanking = (this: LlamaRankingContext, input: Token[]) => Promise<number>;

/** The ranking context's evaluation of input tokens as they are (its public calls build the input their own way). */
function rankingEvaluation(): EvaluateRanking {
  const evaluate = (LlamaRankingContext.prototype as unknown as { _evaluateRankingForInput?: unknown })
    ._evaluateRankingForInput;
  if (typeof evaluate !== "function")
    throw new Error("node-llama-cpp's LlamaRankingContext has no _evaluateRankingForInput");
  return evaluate as EvaluateRanking;
}

/** The score of `input` on `context`: the tokens evaluated as given, nothing added (rank-input.ts builds them). */
export function rankTokens(context: LlamaRankingContext, input: Token[]): Promise<number> {
  return rankingEvaluation().call(context, input);
}

/**
 * Fails with a clear message unless the installed node-llama-cpp is the version this module was
 * written against and every internal it reads is there. Run once per loaded model, at start-up.
 */
export async function checkLlamaInternals(
  loaded: { llama: Llama; model: LlamaModel; context: LlamaContext },
  version = installedVersion(),
): Promise<void> {
  if (version !== SUPPORTED_NODE_LLAMA_CPP) {
    throw new Error(
      `node-llama-cpp ${version} is installed, but llm-edge reads its internals as of ${SUPPORTED_NODE_LLAMA_CPP}: ` +
        `check them ` +
        `in sidecar/engine/llama/llama-internals.ts, then update SUPPORTED_NODE_LLAMA_CPP there`,
    );
  }
  decodeQueue(loaded.context);
  for (const name of ["initBatch", "setThreads", "addToBatch", "decodeBatch", "sampleToken"] as const)
    contextMethod(loaded.context, name);
  addonBindings(loaded.llama);
  nativeModel(loaded.model);
  nativeContext(loaded.context);
  preventDisposal(loaded.model, "_backendModelDisposeGuard").dispose();
  preventDisposal(loaded.context, "_backendContextDisposeGuard").dispose();
  vocabularyEntry(loaded.model, 0 as Token);
  grammarStepper(loaded.llama);
  rankingEvaluation();
  const grammar = await loaded.llama.createGrammar({ grammar: 'root ::= "a"' });
  nativeState(new LlamaGrammarEvaluationState({ model: loaded.model, grammar }));
  // A sequence taken and given back before any is handed out: its id returns to the context.
  const sequence = loaded.context.getSequence();
  try {
    sequenceIdOf(sequence);
    predictorSlot(sequence);
  } finally {
    await sequence.dispose();
  }
}

/** The addon's exports for `llama` (node-llama-cpp's bindings): the local build adds the engine patches' classes. */
export function addonBindings(llama: Llama): Readonly<Record<string, unknown>> {
  const bindings = (llama as unknown as { _bindings?: unknown })._bindings;
  if (typeof bindings !== "object" || bindings === null) fail("Llama._bindings");
  return bindings as Record<string, unknown>;
}

/** The addon's object behind `model` (an AddonModel). */
export function nativeModel(model: LlamaModel): object {
  const native = (model as unknown as ModelInternals)._model;
  if (typeof native !== "object" || native === null) fail("LlamaModel._model");
  return native;
}

/** The addon's object behind `context` (an AddonContext). */
export function nativeContext(context: LlamaContext): object {
  const native = (context as unknown as ContextInternals)._ctx;
  if (typeof native !== "object" || native === null) fail("LlamaContext._ctx");
  return native;
}

interface DisposeGuardInternals {
  _backendModelDisposeGuard?: { createPreventDisposalHandle?: () => { dispose(): void } };
  _backendContextDisposeGuard?: { createPreventDisposalHandle?: () => { dispose(): void } };
}

function preventDisposal(owner: LlamaModel | LlamaContext, member: keyof DisposeGuardInternals): { dispose(): void } {
  const guard = (owner as unknown as DisposeGuardInternals)[member];
  if (typeof guard?.createPreventDisposalHandle !== "function") fail(`${member}.createPreventDisposalHandle`);
  return guard.createPreventDisposalHandle();
}

/** Runs `work` with `model` kept from being freed (its own dispose waits, as it does for a tokenization). */
export async function whileModelKept<T>(model: LlamaModel, work: () => Promise<T>): Promise<T> {
  const handle = preventDisposal(model, "_backendModelDisposeGuard");
  try {
    return await work();
  } finally {
    handle.dispose();
  }
}

/**
 * Runs `work` in the context's turn: node-llama-cpp runs every batch of the context under its lock
 * `[context, "context"]` (its batch loop, state files, sequence removals); `work` takes that lock, so
 * no batch decodes meanwhile and batches queued meanwhile go after it. The context (and its model)
 * cannot be freed during it. Its one exception: the lock it adds on Vulkan across contexts.
 */
export async function inContextTurn<T>(context: LlamaContext, work: () => Promise<T>): Promise<T> {
  const locks = await llamaLocks();
  const contextLock = await locks.acquireLock([context, "context"]);
  try {
    const handle = preventDisposal(context, "_backendContextDisposeGuard");
    try {
      return await work();
    } finally {
      handle.dispose();
    }
  } finally {
    contextLock.dispose();
  }
}

/**
 * Evaluates into `sequence` outside node-llama-cpp (media embeddings), then records what it added:
 * `work` gets the sequence's next position and returns the position after what it evaluated; the
 * positions between are recorded as `placeholder` tokens, so that the sequence's next evaluation
 * starts after them. Under the sequence's evaluation lock; refused while drafted tokens sit in it.
 */
export async function evaluateOutside(
  sequence: LlamaContextSequence,
  placeholder: Token | readonly Token[],
  work: (nextPosition: number) => Promise<number>,
): Promise<number> {
  const fill = typeof placeholder === "number" ? [placeholder] : placeholder;
  const internals = sequence as unknown as StateSequenceInternals;
  if (internals._lock === undefined) fail("LlamaContextSequence._lock");
  if (!Array.isArray(internals._loadedTokenPredictions)) fail("LlamaContextSequence._loadedTokenPredictions");
  const locks = await llamaLocks();
  const evaluator = await locks.acquireLock([internals._lock, "evaluate"]);
  try {
    if (internals._loadedTokenPredictions.length > 0) throw new Error("the sequence holds drafted tokens");
    const start = internals._nextTokenIndex ?? 0;
    const end = await work(start);
    internals._contextTokens = [
      ...(internals._contextTokens ?? []),
      ...Array.from({ length: end - start }, (_, i) => fill[i % fill.length] as Token),
    ];
    internals._nextTokenIndex = end;
    return end;
  } finally {
    evaluator.dispose();
  }
}

interface LoraContextInternals {
  _setLoras?: (loras: readonly { filePath: string; scale?: number }[]) => Promise<void>;
}

/**
 * Sets the scale of the LoRA adapter `filePath` on `context` (node-llama-cpp applies adapters only when it makes a
 * context): in the context's turn, so no batch decodes while llama.cpp's adapter set changes.
 */
export function setLoraScale(context: LlamaContext, filePath: string, scale: number): Promise<void> {
  const setLoras = (context as unknown as LoraContextInternals)._setLoras;
  if (typeof setLoras !== "function") fail("LlamaContext._setLoras");
  return inContextTurn(context, () => setLoras.call(context, [{ filePath, scale }]));
}
