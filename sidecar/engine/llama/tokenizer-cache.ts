// Tokenizations of long texts kept for the requests that send them again (`cachedTokenizer`). A
// session's every turn sends its system prompt, tools and earlier messages again, and the chat
// template renders each between its special tokens as a text of its own; tokenizing a
// 6,000-token text took 3 ms here, on every turn (docs/decisions.md, "A KV cache tier in host
// memory").
import type { Token, Tokenizer } from "node-llama-cpp";

/** Shorter texts are tokenized each time: cheaper than keeping them. */
export const CACHED_MIN_CHARS = 1024;
/** The most characters the kept texts hold together, least recently used out first (~16 MiB of strings). */
export const CACHED_MAX_CHARS = 8 * 2 ** 20;

/** `tokenizer`, answering a long text it tokenized before from memory (the same tokens, a copy). */
export function cachedTokenizer(tokenizer: Tokenizer, maxChars = CACHED_MAX_CHARS): Tokenizer {
  const kept = new Map<string, readonly Token[]>();
  let chars = 0;
  const tokenize = (text: string, specialTokens?: boolean | "builtin", options?: "trimLeadingSpace"): Token[] => {
    const call = tokenizer as (
      text: string,
      specialTokens?: boolean | "builtin",
      options?: "trimLeadingSpace",
    ) => Token[];
    if (specialTokens === "builtin" || text.length < CACHED_MIN_CHARS) return call(text, specialTokens, options);
    // How it is tokenized is part of the key: with special tokens or as text, leading space trimmed or not.
    const key = `${specialTokens === true ? "s" : "t"}${options === "trimLeadingSpace" ? "l" : "-"}${text}`;
    const hit = kept.get(key);
    if (hit !== undefined) {
      kept.delete(key);
      kept.set(key, hit);
      return hit.slice();
    }
    const tokens = call(text, specialTokens, options);
    kept.set(key, tokens.slice());
    chars += key.length;
    for (const [old] of kept) {
      if (chars <= maxChars) break;
      kept.delete(old);
      chars -= old.length;
    }
    return tokens;
  };
  return Object.freeze(
    Object.assign(tokenize, {
      detokenize: tokenizer.detokenize,
      isSpecialToken: tokenizer.isSpecialToken,
      isEogToken: tokenizer.isEogToken,
    }),
  ) as Tokenizer;
}
