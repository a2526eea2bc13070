// The log-probability of every prompt token (`GenerateRequest.prompt_logprobs`), evaluated in
// chunks before the reply.
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { ControlledEvaluateInputItem, LlamaContextSequence, Token } from "node-llama-cpp";
import type { TokenSchema } from "../../../proto/gen/inference/v1/inference_pb.js";
import type { LoadedModel } from "../llama/model.js";
import { TokenTextDecoder } from "./token-text.js";
import { logOf, topAlternatives } from "./token-steps.js";

type PromptToken = MessageInitShape<typeof TokenSchema>;

/**
 * Prompt tokens scored per evaluation: each keeps the next token's whole distribution until its
 * chunk is read, so chunks stay small.
 */
const SCORE_CHUNK_TOKENS = 64;

/** The model's plain distribution: no temperature change, nothing cut off. */
const PLAIN = { temperature: 1, topK: 0, topP: 1, minP: 0 };

/**
 * Evaluates the prompt's tokens but the last (which the generation evaluates: its logits pick the
 * first reply token) into an empty sequence, reading after each the distribution of the next one:
 * every prompt token with its log-probability given those before it (`GenerateRequest.
 * prompt_logprobs`). A beginning-of-sequence token the model adds is scored from but not listed;
 * the first token listed has no log-probability. Stops between chunks once `signal` aborts.
 */
export async function scorePrompt(
  loaded: LoadedModel,
  sequence: LlamaContextSequence,
  tokens: readonly Token[],
  topLogprobs: number,
  signal: AbortSignal,
): Promise<PromptToken[]> {
  const decoder = new TokenTextDecoder(loaded.model);
  const entry = (id: Token, probabilities?: ReadonlyMap<Token, number>): PromptToken => ({
    id,
    text: decoder.push(id),
    piece: loaded.tokenBytes.of(id),
    ...(probabilities !== undefined
      ? { logprob: logOf(probabilities.get(id) ?? 0), topLogprobs: topAlternatives(loaded, probabilities, topLogprobs) }
      : {}),
  });
  const first = tokens[0];
  const listed: PromptToken[] = first === undefined || first === loaded.model.tokens.bos ? [] : [entry(first)];
  for (let start = 0; start < tokens.length - 1 && !signal.aborted; start += SCORE_CHUNK_TOKENS) {
    const chunk = tokens.slice(start, Math.min(start + SCORE_CHUNK_TOKENS, tokens.length - 1));
    const input = chunk.map(
      (token): ControlledEvaluateInputItem => [token, { generateNext: { probabilities: true, options: PLAIN } }],
    );
    const results = await sequence.controlledEvaluate(input);
    chunk.forEach((_, i) => {
      const next = tokens[start + i + 1] as Token;
      listed.push(entry(next, results[i]?.next.probabilities as ReadonlyMap<Token, number> | undefined));
    });
  }
  const tail = decoder.flush();
  const last = listed.at(-1);
  if (last !== undefined && tail !== "") last.text = `${last.text ?? ""}${tail}`;
  return listed;
}
