// Generated tokens decoded into whole UTF-8 characters (`TokenTextDecoder`).
import type { LlamaModel, Token } from "node-llama-cpp";

/** Tokens decoded together before a broken character is let through as U+FFFD. */
const MAX_PENDING = 4;
/** Preceding tokens given to the detokenizer so word pieces keep their spacing. */
const CONTEXT_TOKENS = 8;

/**
 * Decodes generated tokens into whole UTF-8 characters: a token that ends mid-character
 * yields nothing until the tokens that complete the character arrive.
 */
export class TokenTextDecoder {
  readonly #model: LlamaModel;
  #pending: Token[] = [];
  #recent: Token[] = [];

  constructor(model: LlamaModel) {
    this.#model = model;
  }

  push(token: Token): string {
    this.#pending.push(token);
    const text = this.#model.detokenize(this.#pending, false, this.#recent);
    if (text.endsWith("\uFFFD") && this.#pending.length < MAX_PENDING) return "";
    this.#commit();
    return text;
  }

  /** Whatever is still pending when generation ends (a truly broken character stays U+FFFD). */
  flush(): string {
    if (this.#pending.length === 0) return "";
    const text = this.#model.detokenize(this.#pending, false, this.#recent);
    this.#commit();
    return text;
  }

  #commit(): void {
    this.#recent = [...this.#recent, ...this.#pending].slice(-CONTEXT_TOKENS);
    this.#pending = [];
  }
}
