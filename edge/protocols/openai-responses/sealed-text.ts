// Opaque text this server hands a client to send back (reasoning items' and compaction items'
// `encrypted_content`): a versioned prefix naming what it holds and the text's UTF-8 bytes in
// base64url. Not secret, only opaque; opened only with its own prefix, so one kind is never read
// as another and anyone else's content is not taken (docs/contract.md, "Compaction").

/** `prefix` and the text's UTF-8 bytes in base64url. */
export function sealText(prefix: string, text: string): string {
  let binary = "";
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte);
  return prefix + btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** The text a sealed string of this prefix holds; undefined for another prefix, bad base64 or bad UTF-8. */
export function openText(prefix: string, sealed: string): string | undefined {
  if (!sealed.startsWith(prefix)) return undefined;
  const body = sealed.slice(prefix.length);
  if (!/^[A-Za-z0-9_-]*$/.test(body)) return undefined;
  try {
    const binary = atob(body.replace(/-/g, "+").replace(/_/g, "/"));
    return new TextDecoder("utf-8", { fatal: true }).decode(Uint8Array.from(binary, (c) => c.charCodeAt(0)));
  } catch {
    return undefined;
  }
}
