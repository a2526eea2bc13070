// The replies a model gave last, for prompt lookup to draft from while a greedy reply repeats one (a request sent
// again, a retry, an agent's step repeated): its own sequence holds the prompt, not the answer it had before.
import type { Token } from "node-llama-cpp";

/** A pair of tokens as one map key (token ids stay below 2^21). */
export const pairKey = (first: Token, second: Token): number => first * 0x200000 + second;

/** Replies kept, and tokens kept of each (its end dropped past that). */
const MAX_REPLIES = 8;
const MAX_REPLY_TOKENS = 8192;

/** Where a pair occurred in a kept reply: the reply's tokens and the position of the pair's second token. */
export interface PoolMatch {
  readonly tokens: readonly Token[];
  readonly at: number;
}

/**
 * The last MAX_REPLIES replies of a model (each with a few tokens of its prompt before it, so a reply's first tokens
 * can match), indexed by token pair: the latest occurrence with a token after it.
 */
export class ReplyPool {
  readonly #replies: (readonly Token[])[] = [];
  readonly #pairs = new Map<number, PoolMatch>();

  add(reply: readonly Token[]): void {
    if (reply.length < 4) return;
    this.#replies.push(reply.slice(0, MAX_REPLY_TOKENS));
    if (this.#replies.length > MAX_REPLIES) this.#replies.shift();
    this.#pairs.clear();
    for (const tokens of this.#replies)
      for (let at = 1; at < tokens.length - 1; at++)
        this.#pairs.set(pairKey(tokens[at - 1] as Token, tokens[at] as Token), { tokens, at });
  }

  find(first: Token, second: Token): PoolMatch | undefined {
    return this.#pairs.get(pairKey(first, second));
  }

  get size(): number {
    return this.#replies.length;
  }
}
