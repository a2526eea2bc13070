// Order statistics over samples (NaN-free inputs; empty lists give NaN).

export function sorted(values: readonly number[]): number[] {
  return values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
}

/** The q-quantile (0..1) by linear interpolation between order statistics. */
export function quantile(values: readonly number[], q: number): number {
  const s = sorted(values);
  if (s.length === 0) return Number.NaN;
  const at = (s.length - 1) * q;
  const lo = Math.floor(at);
  const hi = Math.ceil(at);
  const a = s[lo] ?? Number.NaN;
  const b = s[hi] ?? Number.NaN;
  return a + (b - a) * (at - lo);
}

export const median = (values: readonly number[]): number => quantile(values, 0.5);

export function mean(values: readonly number[]): number {
  const s = sorted(values);
  return s.length === 0 ? Number.NaN : s.reduce((a, b) => a + b, 0) / s.length;
}

export function min(values: readonly number[]): number {
  const s = sorted(values);
  return s[0] ?? Number.NaN;
}

export function max(values: readonly number[]): number {
  const s = sorted(values);
  return s[s.length - 1] ?? Number.NaN;
}

/**
 * A distribution-free interval for the median of `values` (order statistics by the sign test),
 * holding it with at least `level` confidence; the whole range when there are too few values for
 * that (fewer than 6 at 95%).
 */
export function medianInterval(values: readonly number[], level = 0.95): [number, number] {
  const s = sorted(values);
  const n = s.length;
  if (n === 0) return [Number.NaN, Number.NaN];
  // k: the most values that may lie below the interval, P(Binomial(n, ½) < k) ≤ (1 − level) / 2.
  let [k, below, term] = [0, 0, 0.5 ** n];
  while (k < n / 2 && below + term <= (1 - level) / 2) {
    below += term;
    term = (term * (n - k)) / (k + 1);
    k++;
  }
  return k === 0 ? [s[0] ?? Number.NaN, s[n - 1] ?? Number.NaN] : [s[k - 1] ?? Number.NaN, s[n - k] ?? Number.NaN];
}
