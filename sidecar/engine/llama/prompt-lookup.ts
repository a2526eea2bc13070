// Speculative decoding by prompt lookup: while a reply repeats text its prompt holds (an edited
// file, a quoted passage, code read back) or its own earlier text, the tokens that followed there
// are drafted and checked in the same decode as the next token: several tokens for one read of
// the weights.
import { TokenPredictor, type LlamaContextSequence, type Token } from "node-llama-cpp";
import { DraftCounts, type DraftOptions, type Drafter, type Drafting } from "./drafting.js";
import { pairKey, ReplyPool } from "./reply-pool.js";
import { draftWorth, StepCost, type StepTimes } from "./step-cost.js";

/** The tokens one step drafts at most by default (`--spec-lookup`); docs/decisions.md, "Speculative decoding". */
export const DEFAULT_LOOKUP_DRAFT = 16;

/**
 * The fewest tokens that must match behind a draft: the pair and the token before it. A pair alone
 * recurs by chance in text the prompt does not hold (a reply quoting words of its question drafts
 * what followed them there, and is refused nearly every step: measured on the chat workload, 0.94×
 * the rate without drafts); three in a row seldom do.
 */
const MIN_MATCH = 3;

/** Prompt tokens kept before a reply in the pool, so that its first tokens can match a reply given again. */
const POOLED_PROMPT_TOKENS = 8;

/**
 * A match this long behind a draft is a passage repeated, not chance: it drafts a token at least where the measured
 * cost says drafts do not pay, so a reply that starts repeating is seen to.
 */
const REPEAT_MATCH = 8;

/**
 * How often drafted tokens are taken (the one before taken), counted over the drafts checked: each draft adds the
 * tokens taken, and a miss when it was not taken whole. Older drafts count less (`DECAY` per draft).
 */
export class Acceptance {
  static readonly DECAY = 0.9;
  /** What a count starts from: one token taken, one miss (a rate of one half). */
  constructor(
    public taken = 1,
    public missed = 1,
  ) {}

  add(taken: number, missed: boolean): void {
    this.taken = this.taken * Acceptance.DECAY + taken;
    this.missed = this.missed * Acceptance.DECAY + Number(missed);
  }

  get rate(): number {
    return this.taken / (this.taken + this.missed);
  }
}

/**
 * What a reply's drafts may cost: tokens worth drafting at an acceptance rate (undefined: no draft this step, not even
 * behind a repeated passage), and the model's rate so far.
 */
export interface DraftBudget {
  worth(acceptance: number): number | undefined;
  readonly model: Acceptance;
}

/** How many tokens before position `at` of `source` (the pair's second token at `at`) equal the last of `tokens`. */
function matchLength(source: readonly Token[], at: number, tokens: readonly Token[], enough: number): number {
  const n = tokens.length;
  let matched = 2;
  while (matched < enough && at - matched >= 0 && source[at - matched] === tokens[n - 1 - matched]) matched++;
  return matched;
}

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
  /** Where the reply starts in `#tokens`: the length at the first draft asked for. */
  #replyFrom: number | undefined;
  /** Pair key → the position of the pair's second token (its latest occurrence with a token after it). */
  readonly #pairs = new Map<number, number>();
  /** The last draft and where it went in `#tokens`. */
  #draft: Token[] = [];
  #draftAt = 0;
  #limit: number;
  /** This reply's drafts, starting from the model's rate. */
  readonly #acceptance: Acceptance;

  /**
   * `pool`: earlier replies to draft from as well (a greedy reply's only: a seeded reply's drafts are its own);
   * `budget`: what drafts may cost (none: as long as the match and the last draft allow).
   */
  constructor(
    readonly draftMax: number,
    readonly pool?: ReplyPool,
    readonly budget?: DraftBudget,
  ) {
    super();
    this.#limit = draftMax;
    const model = budget?.model.rate ?? 0.5;
    this.#acceptance = new Acceptance(2 * model, 2 * (1 - model));
  }

  /** The reply so far, with a few prompt tokens before it (what the pool keeps). */
  reply(): Token[] {
    return this.#replyFrom === undefined ? [] : this.#tokens.slice(Math.max(0, this.#replyFrom - POOLED_PROMPT_TOKENS));
  }

  override reset({ stateTokens }: { stateTokens: Token[] }): void {
    this.#tokens = [];
    this.#pairs.clear();
    this.#draft = [];
    this.#replyFrom = undefined;
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
    this.#replyFrom ??= n;
    if (n < 3) return [];
    const [before, last] = [tokens[n - 2] as Token, tokens[n - 1] as Token];
    const enough = Math.max(this.#limit, REPEAT_MATCH);
    const own = this.#pairs.get(pairKey(before, last));
    const ownMatch = own === undefined ? 0 : matchLength(tokens, own, tokens, enough);
    // Not on the reply's first step: its first token would wait for a whole draft's decode.
    const pooled = n === this.#replyFrom ? undefined : this.pool?.find(before, last);
    const poolMatch = pooled === undefined ? 0 : matchLength(pooled.tokens, pooled.at, tokens, enough);
    // A reply given before goes on as it went where it matches as far back: past an edit the prompt's copy of the
    // text would not.
    const fromPool = pooled !== undefined && poolMatch >= Math.max(ownMatch, MIN_MATCH);
    const match = fromPool ? poolMatch : ownMatch;
    const length = match < MIN_MATCH ? 0 : Math.min(match, this.#limit, this.#worth(match));
    const draft =
      length <= 0
        ? []
        : fromPool && pooled !== undefined
          ? pooled.tokens.slice(pooled.at + 1, pooled.at + 1 + length)
          : this.#ownDraft(own as number, length);
    this.#draft = draft;
    this.#draftAt = n;
    return draft;
  }

  /** `length` tokens after position `at`, copied forward: past the end the draft goes on with itself (a loop). */
  #ownDraft(at: number, length: number): Token[] {
    const tokens = this.#tokens;
    const n = tokens.length;
    const draft: Token[] = [];
    for (let i = at + 1; draft.length < length; i++) draft.push((i < n ? tokens[i] : draft[i - n]) as Token);
    return draft;
  }

  /** Tokens worth drafting behind a match of `match` tokens: the budget's, and one at least for a repeated passage. */
  #worth(match: number): number {
    if (this.budget === undefined) return this.draftMax;
    const worth = this.budget.worth(this.#acceptance.rate);
    if (worth === undefined) return 0;
    return match >= REPEAT_MATCH ? Math.max(1, worth) : worth;
  }

  /**
   * The last draft's outcome sets the next one's length: doubled when the reply took it whole, else the run it took;
   * and it counts into the reply's acceptance rate and the model's.
   */
  #learn(): void {
    const draft = this.#draft;
    if (draft.length === 0) return;
    let taken = 0;
    while (taken < draft.length && this.#tokens[this.#draftAt + taken] === draft[taken]) taken++;
    this.#limit = taken === draft.length ? Math.min(this.draftMax, this.#limit * 2) : Math.max(1, taken);
    this.#acceptance.add(taken, taken < draft.length);
    this.budget?.model.add(taken, taken < draft.length);
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
 * distribution. A greedy reply (temperature 0) also drafts from the model's last replies: its tokens do not depend on
 * its drafts, where a seeded reply's sampler draws once a drafted position, so its drafts come from its own sequence
 * alone and it repeats whatever else the model answered meanwhile. A greedy or unseeded reply drafts only in a step
 * it has alone, as long as it is worth what checking it costs (step-cost.ts: the model's steps timed, and how often
 * the reply's drafts were taken); a seeded one as long as the match allows, whatever shares its steps.
 */
export class PromptLookup extends DraftCounts implements Drafter {
  readonly kind = "lookup";
  /** The model's last replies (every reply goes in; a greedy reply drafts from them). */
  readonly pool = new ReplyPool();
  /** The model's decode steps, timed (`timeBatches` in llama-internals.ts feeds it). */
  readonly steps = new StepCost();
  /** How often the model's drafted tokens were taken: where a reply's own count starts. */
  readonly acceptance = new Acceptance();

  /** `cost`: fixed step times in place of the measured ones, or "none" (`ModelOptions.draftCost`). */
  constructor(
    readonly draftMax: number,
    readonly cost?: StepTimes | "none",
  ) {
    super();
  }

  start(sequence: LlamaContextSequence, options: DraftOptions = {}): Drafting {
    const lookup = new PairLookup(
      this.draftMax,
      options.greedy === true ? this.pool : undefined,
      // A seeded reply drafts by its own tokens alone, as far as the match allows, so it repeats (DraftOptions.seeded).
      this.cost === "none" || options.seeded === true ? undefined : this.#budget(options.streams ?? (() => 1)),
    );
    const drafting = this.attach(sequence, lookup);
    return {
      end: async (between) => {
        const reply = lookup.reply();
        try {
          await drafting.end(between);
        } finally {
          this.pool.add(reply);
        }
      },
    };
  }

  /**
   * A draft goes only in a step its stream has alone: with a KV cache per sequence, llama.cpp splits a batch into
   * parts of as many tokens from each sequence, so a draft beside other streams' steps costs a pass over the weights
   * per drafted token (docs/decisions.md, "Speculative decoding").
   */
  #budget(streams: () => number): DraftBudget {
    const fixed = this.cost === "none" ? undefined : this.cost;
    return {
      worth: (rate) => (streams() > 1 ? undefined : draftWorth(fixed ?? this.steps.times, rate, this.draftMax)),
      model: this.acceptance,
    };
  }

  async dispose(): Promise<void> {}
}
