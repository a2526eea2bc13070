// Token pieces and log-probabilities as the OpenAI shapes want them.
// A piece is a token's raw bytes, and may be only part of a UTF-8 character. A piece that is whole
// UTF-8 is shown as its text; one that is not is shown as OpenAI's API shows it, `bytes:` and each
// byte as `\xNN` (e.g. `bytes:\xf0\x9f`), so no two different pieces share a text and none is
// shown as U+FFFD. Chat logprobs also carry the raw `bytes`.

const strict = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

function bytesText(piece: Uint8Array): string {
  return `bytes:${Array.from(piece, (byte) => `\\x${byte.toString(16).padStart(2, "0")}`).join("")}`;
}

/** The piece as text: its UTF-8 text when whole, else its bytes as `bytes:\xNN…`. */
export function pieceText(piece: Uint8Array): string {
  try {
    return strict.decode(piece);
  } catch {
    return bytesText(piece);
  }
}

export function pieceBytes(piece: Uint8Array): number[] {
  return Array.from(piece);
}

/**
 * Keys for legacy `top_logprobs` maps, distinct per token: a piece's text; when another token
 * already has that text (the same character as a word piece and as a byte token), its `bytes:`
 * form; when even that is taken (pieces with the same bytes), `token:<id>`.
 */
export function distinctKeys(alternatives: readonly { readonly id: number; readonly piece: Uint8Array }[]): string[] {
  const used = new Set<string>();
  return alternatives.map(({ id, piece }) => {
    const key =
      [pieceText(piece), bytesText(piece), `token:${id}`].find((candidate) => !used.has(candidate)) ?? `token:${id}`;
    used.add(key);
    return key;
  });
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
