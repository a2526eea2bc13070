// The workload every party gets: the same prompts, the same reply length, greedy sampling.

/** Tokens generated per stream. */
export const DEFAULT_MAX_TOKENS = 128;
/** Greedy decoding: every party produces the same tokens from the same prompt. */
export const TEMPERATURE = 0;
export const SEED = 42;

const STORY = "The old man climbed the stairs to light the lamp";

/**
 * The single-stream / sweep prompt: 27 tokens with the test model's tokenizer for a three-digit
 * `variant` (the single-stream runs), 29 for a five-digit one (the sweep). The variant comes early, so prompts of
 * different runs share only their first 5
 * tokens (BOS, "Story 1") in a KV cache, the same for every party, and each run evaluates the rest.
 */
export function streamPrompt(variant: number): string {
  return `Story ${variant}: ${STORY}`;
}

const WORDS = (
  "time year people way day man thing woman life child world school state family student group country " +
  "problem hand part place case week company system program question work government number night point " +
  "home water room mother area money story fact month lot right study book eye job word business issue " +
  "side kind head house service friend father power hour game line end member law car city community name " +
  "president team minute idea kid body information back parent face others level office door health person " +
  "art war history party result change morning reason research girl guy moment air teacher force education"
).split(" ");

/** Deterministic filler text of `words` words (a small LCG picks them). */
export function fillerText(words: number, seed: number): string {
  let state = (seed * 2654435761) >>> 0;
  const out: string[] = [];
  for (let i = 0; i < words; i++) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    out.push(WORDS[state % WORDS.length] ?? "word");
    if (i % 12 === 11) out.push(".");
  }
  return out.join(" ");
}

/** The prefix-reuse system prompt: `round` first, so each round starts cold. */
export function systemPrompt(round: number, words: number): string {
  return `Session ${round}. You are a helpful assistant. Background notes follow. ${fillerText(words, 7)}`;
}

export function userTurn(index: number): string {
  return `Question ${index}: what happened to the ${WORDS[index % WORDS.length] ?? "thing"} in the story?`;
}
