// A stream's next token sampled on the thread that decoded it (docs/decisions.md, "Sampling on the decoding thread").
// node-llama-cpp decodes a batch on a worker thread, returns to JavaScript, then sends each sequence's sampling to a
// worker thread again: two hand-offs between threads a step, one of them on every token's critical path. With the
// engine's presample patch the batch's decode also samples every plain step (one token, one logit) whose sampler it
// knows, with the config that sampler had; node-llama-cpp's `sampleToken` then finds the token there.
import type { LlamaContext } from "node-llama-cpp";
import { decodeAndSampleCall, type NativeCall, watchNativeSampler, wrapContextMethod } from "./llama-internals.js";

/** Config fields that change from one token to the next (grammar, penalties' history): never presampled. */
const PER_TOKEN_FIELDS = ["grammarEvaluationState", "repeatPenaltyTokens", "dryRepeatPenaltyStrength"];

/** What presampling did, for tests. */
export interface PresampleCounts {
  /** Tokens sampled with their step's decode and taken by node-llama-cpp's sampling call. */
  taken: number;
  /** Sampled but set aside: the sampler's config changed before its call (it then samples as usual). */
  setAside: number;
}

interface Step {
  readonly sequence: number;
  readonly plain: boolean;
}

interface Watched {
  /** The config applied before the sampler's last sampling. */
  config: Readonly<Record<string, unknown>> | undefined;
  inFlight: boolean;
  disposed: boolean;
  disposeLater: (() => void) | undefined;
}

/**
 * Samples plain steps of `context` with their decode (the presample patch); returns the counts, or undefined when the
 * library lacks the patch and every sampling goes as node-llama-cpp sends it.
 */
export function presampleSteps(context: LlamaContext): PresampleCounts | undefined {
  const decodeAndSample = decodeAndSampleCall(context);
  if (decodeAndSample === undefined) return undefined;
  const presampler = new Presampler(decodeAndSample);
  wrapContextMethod(
    context,
    "addToBatch",
    (add) =>
      (...args) =>
        presampler.add(add, args),
  );
  wrapContextMethod(context, "decodeBatch", (decode) => () => presampler.decode(decode));
  wrapContextMethod(
    context,
    "sampleToken",
    (sample) =>
      (...args) =>
        presampler.sample(sample, args),
  );
  return presampler.counts;
}

interface Ready {
  readonly sampler: object;
  readonly token: number;
  readonly config: Readonly<Record<string, unknown>>;
}

/** The context's native calls, wrapped: what a batch holds, its decode with samplings, the samplings answered. */
class Presampler {
  readonly counts: PresampleCounts = { taken: 0, setAside: 0 };
  readonly #watched = new WeakMap<object, Watched>();
  /** The sampler of each sequence's last sampled step. */
  readonly #samplerOf = new Map<number, object>();
  /**
   * The batch being built, then the batch decoded: each sequence's one sampled logit by its index → the sequence's id,
   * and whether it is a plain step (a prompt's last token is not, but names its sequence's sampler).
   */
  #building = new Map<number, Step>();
  #decoded = new Map<number, Step>();
  /** The tokens sampled with the last decode, by logit index. */
  #ready = new Map<number, Ready>();

  constructor(private readonly decodeAndSample: (indexes: Uint32Array, samplers: object[]) => Promise<Int32Array>) {}

  add(add: NativeCall, args: unknown[]): ArrayLike<number> {
    const indexes = add(...args) as ArrayLike<number>;
    const tokens = args[2] as ArrayLike<number>;
    if (indexes.length === 1)
      this.#building.set(indexes[0] as number, { sequence: args[0] as number, plain: tokens.length === 1 });
    return indexes;
  }

  async decode(decode: NativeCall): Promise<unknown> {
    [this.#decoded, this.#building, this.#ready] = [this.#building, new Map(), new Map()];
    const picked = pick(this.#decoded, this.#samplerOf, this.#watched);
    if (picked.length === 0) return decode();
    for (const { state } of picked) state.inFlight = true;
    try {
      const tokens = await this.decodeAndSample(
        Uint32Array.from(picked, ({ index }) => index),
        picked.map(({ sampler }) => sampler),
      );
      picked.forEach(({ index, sampler, config }, i) => {
        const token = tokens[i] as number;
        if (token !== -2) this.#ready.set(index, { sampler, token, config });
      });
    } finally {
      for (const { state } of picked) settle(state);
    }
    return undefined;
  }

  sample(sampleToken: NativeCall, args: unknown[]): unknown {
    const [index, sampler] = args as [number, object];
    const hit = this.#ready.get(index);
    if (hit !== undefined) {
      this.#ready.delete(index);
      const config = this.#watched.get(sampler)?.config;
      if (hit.sampler === sampler && args.length === 2 && config !== undefined && sameConfig(config, hit.config)) {
        this.counts.taken++;
        return Promise.resolve(hit.token);
      }
      this.counts.setAside++;
    }
    const step = this.#decoded.get(index);
    if (step !== undefined && args.length === 2) this.#learn(step.sequence, sampler);
    return sampleToken(...args);
  }

  #learn(sequence: number, sampler: object): void {
    this.#samplerOf.set(sequence, sampler);
    if (this.#watched.has(sampler)) return;
    const state: Watched = { config: undefined, inFlight: false, disposed: false, disposeLater: undefined };
    this.#watched.set(sampler, state);
    const configured = (config: Readonly<Record<string, unknown>>): void => {
      state.config = config;
    };
    watchNativeSampler(sampler, configured, (dispose) => {
      state.disposed = true;
      for (const [id, known] of this.#samplerOf) if (known === sampler) this.#samplerOf.delete(id);
      if (state.inFlight) state.disposeLater = dispose;
      else dispose();
    });
  }
}

/** A plain step to sample with the decode: its logit, its sequence's sampler and the config the sampler is on. */
interface Picked {
  readonly index: number;
  readonly sampler: object;
  readonly state: Watched;
  readonly config: Readonly<Record<string, unknown>>;
}

/** The plain steps whose sampler is known, live and on a config that cannot change between tokens. */
function pick(
  steps: ReadonlyMap<number, Step>,
  samplerOf: ReadonlyMap<number, object>,
  watched: WeakMap<object, Watched>,
): Picked[] {
  const picked: Picked[] = [];
  for (const [index, { sequence, plain }] of steps) {
    const sampler = plain ? samplerOf.get(sequence) : undefined;
    const state = sampler === undefined ? undefined : watched.get(sampler);
    const config = state?.config;
    if (sampler === undefined || state === undefined || config === undefined || state.disposed || !steady(config))
      continue;
    picked.push({ index, sampler, state, config });
  }
  return picked;
}

/**
 * Whether a sampler on `config` samples the next token with it unchanged: no per-token fields, and either greedy
 * (nothing in its chain draws a random number, so a token set aside leaves no trace) or without a token bias (the
 * one field a caller's function may change mid-reply: a tool call's arguments).
 */
function steady(config: Readonly<Record<string, unknown>>): boolean {
  if (PER_TOKEN_FIELDS.some((field) => config[field] !== undefined)) return false;
  const greedy = typeof config.temperature === "number" && config.temperature <= 0;
  return greedy || config.tokenBiasKeys === undefined;
}

function settle(state: Watched): void {
  state.inFlight = false;
  const dispose = state.disposeLater;
  state.disposeLater = undefined;
  dispose?.();
}

/** Whether two sampler configs hold the same values (typed arrays compared element by element). */
export function sameConfig(a: Readonly<Record<string, unknown>>, b: Readonly<Record<string, unknown>>): boolean {
  if (a === b) return true;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((key) => {
    const [x, y] = [a[key], b[key]];
    if (x === y) return true;
    if (!ArrayBuffer.isView(x) || !ArrayBuffer.isView(y)) return false;
    const [u, v] = [x as unknown as ArrayLike<unknown>, y as unknown as ArrayLike<unknown>];
    if (u.length !== v.length) return false;
    for (let i = 0; i < u.length; i++) if (u[i] !== v[i]) return false;
    return true;
  });
}
