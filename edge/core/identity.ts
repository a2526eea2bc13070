// The server's name and version, as /v1/info and traces report them (a test keeps the version
// equal to package.json's), and the default id generator and clock (createApp lets tests inject
// their own).

export const SERVER_NAME = "llm-edge";
export const SERVER_VERSION = "0.1.0";

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
