// What one more token in a stream's decode step costs, measured on the context's own steps (`StepCost`), and how many
// drafted tokens are worth that cost (`draftWorth`). docs/decisions.md, "Speculative decoding".

/** A decode step's time as `fixedMs + perTokenMs × tokens`. */
export interface StepTimes {
  readonly fixedMs: number;
  readonly perTokenMs: number;
}

/** Steps timed: a lone sequence's batches of at most this many tokens (its next token and a draft). */
export const MAX_TIMED_TOKENS = 64;

/** The steps of one size kept: their median is the size's time, and how many there are its weight in the fit. */
const KEPT_PER_SIZE = 16;

/**
 * The median time of a lone stream's last decode steps per size (tokens, every one sampled: its next token and its
 * draft), and the line through them weighted by how many steps of each size are kept. A median, because a step the
 * host preempted takes several times as long and would pull a mean (under a loaded test run, a mean had the scripted
 * model's steps look like a token cost most of a step). Undefined until two sizes were timed: a stream that never
 * drafted tells nothing of what one more token costs.
 */
export class StepCost {
  /** Per size: its last steps' times and their median, worked out when a step of that size comes. */
  readonly #sizes = new Map<number, { kept: number[]; median: number }>();
  #fit: StepTimes | undefined;

  /** A step of `tokens` tokens took `ms`. */
  observe(tokens: number, ms: number): void {
    if (tokens < 1 || tokens > MAX_TIMED_TOKENS || !(ms >= 0)) return;
    const size = this.#sizes.get(tokens) ?? { kept: [], median: ms };
    size.kept.push(ms);
    if (size.kept.length > KEPT_PER_SIZE) size.kept.shift();
    size.median = median(size.kept);
    this.#sizes.set(tokens, size);
    this.#fit = fitLine(this.#sizes);
  }

  get times(): StepTimes | undefined {
    return this.#fit;
  }
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

type Sizes = ReadonlyMap<number, { readonly kept: readonly number[]; readonly median: number }>;

function fitLine(sizes: Sizes): StepTimes | undefined {
  if (sizes.size < 2) return undefined;
  let [w, sx, sy, sxx, sxy] = [0, 0, 0, 0, 0];
  for (const [x, { kept, median: y }] of sizes) {
    const seen = kept.length;
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
