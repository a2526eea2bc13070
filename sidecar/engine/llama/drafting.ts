// What both drafters share (prompt-lookup.ts, draft-model.ts): a predictor given to a sequence for
// one reply and taken back after it, with the drafted and accepted tokens counted per model.
import type { LlamaContextSequence, TokenPredictor } from "node-llama-cpp";
import { dropDraftedTokens, setTokenPredictor } from "./llama-internals.js";

/** Drafted and accepted tokens of a model's replies. */
export interface SpeculationStats {
  /** Tokens drafted and checked. */
  readonly drafted: number;
  /** Of those, tokens the model's own choice confirmed and the reply took. */
  readonly accepted: number;
}

/**
 * One reply's drafting on its sequence; `end` takes the drafter back and counts. Drafted cells the
 * reply did not take are dropped through `between` (the scheduler's turn between decode steps),
 * which is taken only when there are some.
 */
export interface Drafting {
  end(between: (work: () => Promise<void>) => Promise<void>): Promise<void>;
}

/** What a drafter may know of the reply it drafts for. */
export interface DraftOptions {
  /**
   * Sampled at temperature 0: its tokens do not depend on its drafts, so prompt lookup may draft from the model's
   * other replies too (a seeded reply's sampler draws once a drafted position: its drafts come from itself alone).
   */
  readonly greedy?: boolean;
  /**
   * Sampled above temperature 0 with the caller's seed: its sampler draws once a drafted position, so what it drafts
   * must hang on its own tokens alone for the reply to repeat (no timing, no other stream).
   */
  readonly seeded?: boolean;
  /** How many sequences of its context are in use now (its own included): they share each step. */
  readonly streams?: () => number;
}

/** A model's source of drafts: prompt lookup (`--spec-lookup`) or a draft model (`--model-draft`). */
export interface Drafter extends SpeculationStats {
  readonly kind: "lookup" | "draft";
  /** Tokens one step drafts at most. */
  readonly draftMax: number;
  /** Gives `sequence` a predictor for its next reply; the caller ends it after the reply. */
  start(sequence: LlamaContextSequence, options?: DraftOptions): Drafting;
  dispose(): Promise<void>;
}

/** Counts of a drafter's replies, added to as each reply ends. */
export class DraftCounts implements SpeculationStats {
  drafted = 0;
  accepted = 0;

  /** `predictor` on `sequence` for one reply, counted into these totals when it ends. */
  attach(sequence: LlamaContextSequence, predictor: TokenPredictor): Drafting {
    setTokenPredictor(sequence, predictor);
    const before = sequence.tokenPredictions;
    return {
      end: async (between) => {
        try {
          // Drafts checked but not taken stay in the cells for a next step that will not come.
          if (sequence.nextTokenIndex !== sequence.contextTokens.length)
            await between(() => dropDraftedTokens(sequence));
        } finally {
          setTokenPredictor(sequence, undefined);
          predictor.dispose();
          const after = sequence.tokenPredictions;
          this.drafted += after.validated - before.validated + after.refuted - before.refuted;
          this.accepted += after.used - before.used;
        }
      },
    };
  }
}
