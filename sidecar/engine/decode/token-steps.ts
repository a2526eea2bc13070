// Sampled tokens with their probabilities and most likely alternatives.
import type { LlamaContextSequence, SequenceEvaluateOptions, Token } from "node-llama-cpp";
import type { TokenAlternative } from "../../../proto/gen/inference/v1/inference_pb.js";
import type { LoadedModel } from "../llama/model.js";

/** One sampled token, with what the request asked to know about its choice. */
export interface Step {
  readonly token: Token;
  readonly probability: number;
  readonly alternatives: ReadonlyMap<Token, number> | undefined;
  /** The sidecar wrote the token, the model did not sample it. */
  readonly forced?: true;
}

/** A token the sidecar writes into the reply itself (probability 1, no alternatives). */
export const forcedStep = (token: Token): Step => ({ token, probability: 1, alternatives: undefined, forced: true });

/** The steps of a generation; `next(tokens)` evaluates `tokens` in place of the last sampled one. */
export async function* evaluate(
  sequence: LlamaContextSequence,
  input: Token[],
  sampling: SequenceEvaluateOptions,
  withLogprobs: boolean,
  withAlternatives: boolean,
): AsyncGenerator<Step, void, Token[] | undefined> {
  const options: SequenceEvaluateOptions = { ...sampling, contextShift: { strategy: "eraseBeginning" } };
  const metadata = sequence.evaluateWithMetadata(
    input,
    { confidence: withLogprobs, probabilities: withAlternatives },
    options,
  );
  try {
    let replacement: Token[] | undefined;
    for (let next = await metadata.next(); next.done !== true; next = await metadata.next(replacement)) {
      const out = next.value;
      const alternatives = "probabilities" in out ? (out.probabilities as ReadonlyMap<Token, number>) : undefined;
      const probability = withLogprobs ? ((out as { confidence?: number }).confidence ?? 1) : 1;
      replacement = yield { token: out.token, probability, alternatives };
    }
  } finally {
    await metadata.return(undefined as never);
  }
}

/** The smallest log-probability reported (a probability of 0 has none). */
const MIN_LOGPROB = -9999;

export function logOf(probability: number): number {
  return probability > 0 ? Math.max(Math.log(probability), MIN_LOGPROB) : MIN_LOGPROB;
}

type AlternativeInit = Pick<TokenAlternative, "id" | "piece" | "logprob">;

/** The `count` most likely alternatives of a step, best first. */
export function topAlternatives(
  loaded: LoadedModel,
  probabilities: ReadonlyMap<Token, number> | undefined,
  count: number,
): AlternativeInit[] {
  if (probabilities === undefined || count === 0) return [];
  const out: AlternativeInit[] = [];
  for (const [id, probability] of probabilities) {
    if (out.length >= count) break;
    out.push({ id, piece: loaded.tokenBytes.of(id), logprob: logOf(probability) });
  }
  return out;
}
