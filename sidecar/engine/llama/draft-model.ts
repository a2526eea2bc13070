// Speculative decoding with a draft model (`--model-draft`, `draft` in presets): a small model of
// the same vocabulary guesses the next tokens on a sequence of its own, one per sequence of the
// served model, and the served model checks the guess in its step's own decode. docs/decisions.md,
// "Speculative decoding".
import {
  TokenPredictor,
  type Llama,
  type LlamaContext,
  type LlamaContextSequence,
  type LlamaModel,
  type Token,
} from "node-llama-cpp";
import { DraftCounts, type Drafter, type Drafting } from "./drafting.js";
import { checkDraftCompatible } from "./llama-internals.js";

/** Tokens a draft model guesses at most per step (llama-server's `--draft-max` default). */
export const DRAFT_MODEL_MAX = 16;
/**
 * A guess ends at its first token the draft model gives less than this probability (`--draft-p-min`;
 * node-llama-cpp's default): a step checks what the draft model is sure of, not tokens it would refuse anyway.
 */
export const DRAFT_MIN_P = 0.6;

export interface DraftModelOptions {
  readonly path: string;
  /** The served model's context: the draft's holds as many tokens per sequence, and as many sequences. */
  readonly target: LlamaContext;
  readonly gpuLayers: number | "auto" | "max";
  readonly flashAttention: boolean;
  /** `--draft-p-min`; default DRAFT_MIN_P. */
  readonly minP?: number | undefined;
  readonly signal?: AbortSignal | undefined;
}

/**
 * One reply's guesses from the draft sequence, made when the step asks and awaited whole: the draft
 * sequence is brought to the reply's tokens (the cells of a refused guess erased), then the draft model
 * decodes greedily until `draftMax` tokens or its first token below `minP`. node-llama-cpp's own draft
 * predictor guesses beside the step and hands over what it has when asked, so a guess's length would
 * depend on timing, and with it how many positions a seeded reply's sampler draws: the reply would not repeat.
 */
export class DraftGuesses extends TokenPredictor {
  #tokens: Token[] = [];
  #first = true;

  constructor(
    private readonly lane: DraftLane,
    private readonly draftMax: number,
    private readonly minP: number,
  ) {
    super();
  }

  override reset({ stateTokens }: { stateTokens: Token[] }): void {
    this.#tokens = stateTokens.slice();
  }

  override pushTokens(tokens: Token[]): void {
    this.#tokens.push(...tokens);
  }

  override async predictTokens(): Promise<Token[]> {
    const tokens = this.#tokens;
    const draft = this.lane.sequence;
    if (tokens.length === 0 || tokens.length >= draft.contextSize) return [];
    await this.lane.pending;
    if (this.#first) {
      // A reply's first step guesses nothing, whatever the draft sequence holds (so a seeded reply does not depend
      // on it): the draft model reads the prompt meanwhile, and the first token does not wait for it.
      this.#first = false;
      this.lane.pending = catchUp(draft, tokens.slice(0, -1)).catch(() => undefined);
      return [];
    }
    try {
      // The last token is evaluated again when the sequence holds it already: its logits start the guess.
      await draft.adaptStateToTokens(tokens.slice(0, -1), false);
      const guess: Token[] = [];
      const room = Math.min(this.draftMax, draft.contextSize - tokens.length);
      const steps = draft.evaluateWithMetadata(
        tokens.slice(draft.nextTokenIndex),
        { confidence: true },
        { temperature: 0 },
      );
      for await (const { token, confidence } of steps) {
        if (confidence < this.minP) break;
        guess.push(token);
        if (guess.length >= room) break;
      }
      return guess;
    } catch {
      // A guess that fails (a full context, a disposed model) is no guess; the reply goes on without one.
      return [];
    }
  }
}

/** A draft sequence and the work on it still running (a prompt read), which the next guess waits for. */
interface DraftLane {
  readonly sequence: LlamaContextSequence;
  pending: Promise<void>;
}

/** Brings `sequence` to hold `tokens`: the cells after their common start erased, the rest evaluated. */
async function catchUp(sequence: LlamaContextSequence, tokens: Token[]): Promise<void> {
  await sequence.adaptStateToTokens(tokens, false);
  const rest = tokens.slice(sequence.nextTokenIndex);
  if (rest.length > 0) await sequence.evaluateWithoutGeneratingNewTokens(rest);
}

/** The draft model for one served model: a draft sequence for each of its sequences. */
export class DraftModel extends DraftCounts implements Drafter {
  readonly kind = "draft";
  readonly draftMax = DRAFT_MODEL_MAX;
  readonly #lanes = new Map<LlamaContextSequence, DraftLane>();

  constructor(
    readonly path: string,
    private readonly model: LlamaModel,
    private readonly context: LlamaContext,
    readonly minP: number,
  ) {
    super();
  }

  start(sequence: LlamaContextSequence): Drafting {
    let lane = this.#lanes.get(sequence);
    if (lane === undefined) {
      lane = { sequence: this.context.getSequence(), pending: Promise.resolve() };
      this.#lanes.set(sequence, lane);
    }
    return this.attach(sequence, new DraftGuesses(lane, this.draftMax, this.minP));
  }

  async dispose(): Promise<void> {
    await Promise.all([...this.#lanes.values()].map((lane) => lane.pending));
    await this.context.dispose();
    await this.model.dispose();
  }
}

/** Loads the draft model beside `options.target`; one whose vocabulary differs is refused, saying why. */
export async function loadDraftModel(llama: Llama, options: DraftModelOptions): Promise<DraftModel> {
  const model = await llama.loadModel({
    modelPath: options.path,
    gpuLayers: options.gpuLayers,
    ...(options.signal ? { loadSignal: options.signal } : {}),
  });
  try {
    const context = await model.createContext({
      contextSize: options.target.contextSize,
      sequences: options.target.totalSequences,
      // One thread: its steps are one token on a small model, and with two threads beside the served model's
      // (2-core host, 850M-class model and its draft) the process died in glibc's mutex priority code within a
      // few replies, a race not chased further (docs/decisions.md, "Speculative decoding").
      threads: 1,
      flashAttention: options.flashAttention,
      failedCreationRemedy: false,
    });
    try {
      checkDraftCompatible(options.target, context);
    } catch (error) {
      await context.dispose();
      throw error;
    }
    return new DraftModel(options.path, model, context, options.minP ?? DRAFT_MIN_P);
  } catch (error) {
    await model.dispose();
    const why = error instanceof Error ? error.message : String(error);
    throw new Error(
      `the draft model ${options.path} cannot draft for ${options.target.model.filename ?? "it"}: ${why}`,
    );
  }
}
