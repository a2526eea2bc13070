// `encrypted_content` of reasoning items: how a stateless client (store: false, include
// ["reasoning.encrypted_content"]) carries the model's reasoning to the next turn. It is not
// secret — it holds the same text the item's reasoning_text shows — only opaque, as clients
// expect: a versioned prefix and the text's UTF-8 bytes in base64url (sealed-text.ts).
import { openText, sealText } from "./sealed-text.js";

const PREFIX = "llm-edge.r1.";

/** Whether the request asked for reasoning items' encrypted_content. */
export function wantsEncryptedReasoning(include: readonly string[] | null | undefined): boolean {
  return include?.includes("reasoning.encrypted_content") === true;
}

export function sealReasoning(text: string): string {
  return sealText(PREFIX, text);
}

/** The reasoning text an encrypted_content of this server's holds; undefined for anyone else's. */
export function openReasoning(sealed: string): string | undefined {
  return openText(PREFIX, sealed);
}
