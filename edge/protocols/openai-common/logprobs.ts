// Token pieces and log-probabilities as the OpenAI shapes want them.
// A piece is a token's raw bytes; it may be part of a UTF-8 character, so its text
// is decoded leniently (U+FFFD for an incomplete character) and the exact bytes are
// reported next to it.

const lenient = new TextDecoder("utf-8", { ignoreBOM: true });

export function pieceText(piece: Uint8Array): string {
  return lenient.decode(piece);
}

export function pieceBytes(piece: Uint8Array): number[] {
  return Array.from(piece);
}

/**
 * The proto carries float32 log-probabilities; printed as float64 they gain noise
 * digits (-0.1 → -0.10000000149011612). This returns the shortest decimal that is
 * the same float32. Null when the sidecar sent no value.
 */
export function logprobValue(value: number | undefined): number | null {
  if (value === undefined) return null;
  if (!Number.isFinite(value)) return value === -Infinity ? -9999 : null;
  for (let digits = 1; digits < 9; digits++) {
    const short = Number(value.toPrecision(digits));
    if (Math.fround(short) === value) return short;
  }
  return Number(value.toPrecision(9));
}
