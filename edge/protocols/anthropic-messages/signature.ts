// The deterministic `signature` of an Anthropic thinking block.
/**
 * The `signature` of a thinking block: opaque to clients, deterministic from the block's text
 * (FNV-1a and the length, base64), so a client can send the block back unchanged. This server
 * does not verify signatures it receives: they carry no secret.
 */
export function thinkingSignature(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return btoa(`local-thinking:v1:${hash.toString(16).padStart(8, "0")}:${text.length}`);
}
