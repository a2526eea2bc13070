// `encrypted_content` of reasoning items: how a stateless client (store: false, include
// ["reasoning.encrypted_content"]) carries the model's reasoning to the next turn. It is not
// secret — it holds the same text the item's reasoning_text shows — only opaque, as clients
// expect: a versioned prefix and the text's UTF-8 bytes in base64url.

const PREFIX = "llm-edge.r1.";

/** Whether the request asked for reasoning items' encrypted_content. */
export function wantsEncryptedReasoning(include: readonly string[] | null | undefined): boolean {
  return include?.includes("reasoning.encrypted_content") === true;
}

export function sealReasoning(text: string): string {
  let binary = "";
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte);
  return PREFIX + btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** The reasoning text an encrypted_content of this server's holds; undefined for anyone else's. */
export function openReasoning(sealed: string): string | undefined {
  if (!sealed.startsWith(PREFIX)) return undefined;
  try {
    const binary = atob(sealed.slice(PREFIX.length).replace(/-/g, "+").replace(/_/g, "/"));
    return new TextDecoder("utf-8", { fatal: true }).decode(Uint8Array.from(binary, (c) => c.charCodeAt(0)));
  } catch {
    return undefined;
  }
}
