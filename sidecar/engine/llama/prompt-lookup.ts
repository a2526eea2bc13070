// Speculative decoding by prompt lookup: while a reply repeats text its prompt holds (an edited
// file, a quoted passage, code read back) or its own earlier text, the tokens that followed there
// are drafted and checked in the same decode as the next token: several tokens for one read of
// the weights.
import { TokenPredictor, type LlamaContextSequence, type Token } from "node-llama-cpp";
import { DraftCounts, type Drafter, type Drafting } from "./drafting.js";

/** The tokens one step drafts at most by default (`--spec-lookup`); docs/decisions.md, "Speculative decoding". */
export const DEFAULT_LOOKUP_DRAFT = 16;

/**
 * The fewest tokens that must match behind a draft: the pair and the token before it. A pair alone
 * recurs by chance in text the prompt does not hold (a reply quoting words of its question drafts
 * what followed them there, and is refused nearly every step: measured on the chat workload, 0.94×
 * the rate without drafts); three in a row seldom do.
 */
const MIN_MATCH = 3;

/** A pair of tokens as one map key (token ids stay below 2^21). */
const pairKey = (first: Token, second: Token): number => first * 0x200000 + second;

/**
 * Drafts from an index of the token pairs the sequence holds (prompt and reply so far): where the
 * last two tokens occurred before, with at least the token before them matching too, the tokens
 * after that occurrence. A draft is at most as long as the match behind it and as the last draft's accepted run allows
 * (doubling after a draft taken
 * whole, up to `draftMax`), so a pair shared by chance or text the reply words differently costs a
 * token or two checked, and a long repeated passage drafts the most.
 */
export class PairLookup extends TokenPredictor {
  #tokens: Token[] = [];
  /** Pair key → the position of the pair's second token (its latest occurrence with a token after it). */
  readonly #pairs = new Map<number, number>();
  /** The last draft and where it went in `#tokens`. */
  #draft: Token[] = [];
  #draftAt = 0;
  #limit: number;

  constructor(readonly draftMax: number) {
    super();
    this.#limit = draftMax;
  }

  override reset({ stateTokens }: { stateTokens: Token[] }): void {
    this.#tokens = [];
    this.#pairs.clear();
    this.#draft = [];
    this.pushTokens(stateTokens);
  }

  override pushTokens(tokens: Token[]): void {
    for (const token of tokens) {
      const n = this.#tokens.length;
      // The pair ending before this token now has a successor.
      if (n >= 2) this.#pairs.set(pairKey(this.#tokens[n - 2] as Token, this.#tokens[n - 1] as Token), n - 1);
      this.#tokens.push(token);
    }
  }

  override predictTokens(): Token[] {
    this.#learn();
    const tokens = this.#tokens;
    const n = tokens.length;
    const at = n < 3 ? undefined : this.#pairs.get(pairKey(tokens[n - 2] as Token, tokens[n - 1] as Token));
    if (at === undefined) return [];
    let matched = 2;
    const enough = Math.max(this.#limit, MIN_MATCH);
    while (matched < enough && at - matched >= 0 && tokens[at - matched] === tokens[n - 1 - matched]) matched++;
    if (matched < MIN_MATCH) return [];
    // Copied forward: past the end, the draft goes on with itself (a loop drafts its next turns).
    const draft: Token[] = [];
    const length = Math.min(matched, this.#limit);
    for (let i = at + 1; draft.length < length; i++) draft.push((i < n ? tokens[i] : draft[i - n]) as Token);
    this.#draft = draft;
    this.#draftAt = n;
    return draft;
  }

  /**
   * The last draft's outcome sets the next one's length: doubled when the reply took it whole, else the run it took.
   */
  #learn(): void {
    const draft = this.#draft;
    if (draft.length === 0) return;
    let taken = 0;
    while (taken < draft.length && this.#tokens[this.#draftAt + taken] === draft[taken]) taken++;
    this.#limit = taken === draft.length ? Math.min(this.draftMax, this.#limit * 2) : Math.max(1, taken);
    this.#draft = [];
  }

  override dispose(): void {
    this.#tokens = [];
    this.#pairs.clear();
  }
}

/**
 * Prompt lookup for one model: a PairLookup given to a sequence for one reply. node-llama-cpp
 * evaluates its draft after the next token, samples every position with the reply's sampler, and
 * keeps the drafted tokens up to the first that differs from the token sampled before it: the
 * reply is the one the model gives without drafts, each token sampled from the model's own
 * distribution.
 */
export class PromptLookup extends DraftCounts implements Drafter {
  readonly kind = "lookup";

  constructor(readonly draftMax: number) {
    super();
  }

  start(sequence: LlamaContextSequence): Drafting {
    return this.attach(sequence, new PairLookup(this.draftMax));
  }

  async dispose(): Promise<void> {}
}
