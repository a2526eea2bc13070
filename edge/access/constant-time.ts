// Comparing secrets without leaking where they differ. Keys are hashed first (SHA-256), so the
// compared values always have the same length and nothing of a key's own length shows.

interface SubtleWithTimingSafeEqual {
  timingSafeEqual?: (a: ArrayBufferView | ArrayBuffer, b: ArrayBufferView | ArrayBuffer) => boolean;
}

/** SHA-256 of a string's UTF-8 bytes. */
export async function sha256(text: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
}

/**
 * True when `a` and `b` hold the same bytes, in time that depends only on their length.
 * Workers have `crypto.subtle.timingSafeEqual`; elsewhere every byte is visited and the
 * differences are OR-ed together, with no early exit.
 */
export function timingSafeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.byteLength !== b.byteLength) return false;
  const native = (crypto.subtle as unknown as SubtleWithTimingSafeEqual).timingSafeEqual;
  if (typeof native === "function") return native.call(crypto.subtle, a, b);
  let difference = 0;
  for (let i = 0; i < a.byteLength; i++) difference |= (a[i] ?? 0) ^ (b[i] ?? 0);
  return difference === 0;
}

export function toHex(bytes: Uint8Array): string {
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
}

export function fromHex(hex: string): Uint8Array | undefined {
  if (!/^(?:[0-9a-fA-F]{2})+$/.test(hex)) return undefined;
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}
