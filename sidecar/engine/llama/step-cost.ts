// What one more token in a stream's decode step costs, measured on the context's own steps (`StepCost`), and how many
// drafted tokens are worth that cost (`draftWorth`). docs/decisions.md, "Speculative decoding".

/** A decode step's time as `fixedMs + perTokenMs × tokens`. */
export interface StepTimes {
  readonly fixedMs: number;
  readonly perTokenMs: number;
}

/** Steps timed: a lone sequence's batches of at most this many tokens (its next token and a draft). */
export const MAX_TIMED_TOKENS = 64;

/** Weight of a step's time in its size's running mean. */
const SMOOTHING = 0.2;
/** The most weight one size has in the fit (so the size seen most does not alone decide the slope). */
const MAX_SIZE_WEIGHT = 16;

/**
 * The running mean time of a lone stream's decode steps per size (tokens, every one sampled: its next token and its
 * draft), and the line through them weighted by how often each size was seen. Undefined until two sizes were timed:
 * a stream that never drafted tells nothing of what one more token costs.
 */
export class StepCost {
  readonly #sizes = new Map<number, { meanMs: number; seen: number }>();
  #fit: StepTimes | undefined;

  /** A step of `tokens` tokens took `ms`. */
  observe(tokens: number, ms: number): void {
    if (tokens < 1 || tokens > MAX_TIMED_TOKENS || !(ms >= 0)) return;
    const size = this.#sizes.get(tokens);
    if (size === undefined) this.#sizes.set(tokens, { meanMs: ms, seen: 1 });
    else {
      size.meanMs += SMOOTHING * (ms - size.meanMs);
      size.seen = Math.min(MAX_SIZE_WEIGHT, size.seen + 1);
    }
    this.#fit = fitLine(this.#sizes);
  }

  get times(): StepTimes | undefined {
    return this.#fit;
  }
}

function fitLine(sizes: ReadonlyMap<number, { meanMs: number; seen: number }>): StepTimes | undefined {
  if (sizes.size < 2) return undefined;
  let [w, sx, sy, sxx, sxy] = [0, 0, 0, 0, 0];
  for (const [x, { meanMs: y, seen }] of sizes) {
    w += seen;
    sx += seen * x;
    sy += seen * y;
    sxx += seen * x * x;
    sxy += seen * x * y;
  }
  const variance = sxx / w - (sx / w) ** 2;
  const slope = (sxy / w - (sx / w) * (sy / w)) / variance;
  const perTokenMs = Math.max(0, slope);
  return { fixedMs: Math.max(0, sy / w - perTokenMs * (sx / w)), perTokenMs };
}

/**
 * How many drafted tokens are worth checking in a lone stream's step, for a reply that takes each drafted token with
 * probability `acceptance` (the one before taken). The d-th drafted token costs one token's time and is taken with
 * probability acceptance^d, sparing a step of one token: it pays while acceptance^d ≥ perToken / step(1). Where one
 * more token costs little against the step (a GPU, a large model read from memory) nearly any draft pays; where it
 * costs much (a CPU multiplying quantized weights) only a reply that repeats text. `max` without measured times.
 */
export function draftWorth(times: StepTimes | undefined, acceptance: number, max: number): number {
  if (times === undefined || times.perTokenMs <= 0 || acceptance >= 1) return max;
  if (acceptance <= 0) return 0;
  const threshold = times.perTokenMs / (times.fixedMs + times.perTokenMs);
  return Math.max(0, Math.min(max, Math.floor(Math.log(threshold) / Math.log(acceptance) + 1e-9)));
}
