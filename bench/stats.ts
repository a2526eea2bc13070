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
