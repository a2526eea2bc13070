// Default id generator and clock (createApp lets tests inject their own).

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** 24 random base-62 characters from the Web Crypto API. */
export function randomId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(24));
  let out = "";
  // 256 is not a multiple of 62, so a few characters are slightly likelier: harmless for ids.
  for (const byte of bytes) out += ALPHABET[byte % 62] ?? "0";
  return out;
}

export function systemClock(): number {
  return Date.now();
}
