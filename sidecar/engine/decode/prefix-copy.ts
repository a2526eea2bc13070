// A prompt's prefix that another sequence holds, copied instead of evaluated (`copyLongerPrefix`):
// a subagent's system prompt and tools that its parent's sequence already holds, a conversation
// whose cache sits on a sequence another request now needs. docs/decisions.md, "One context, many
// sequences".
import type { LlamaContextSequence, Token } from "node-llama-cpp";
import { errorText } from "../engine-errors.js";
import type { EngineMetrics } from "../engine-metrics.js";
import { RANDOM_60M_BYTES } from "../llama/batch-threads.js";
import { type Between, MIN_STATE_TOKENS } from "../llama/kv-tier.js";
import type { LoadedModel } from "../llama/model.js";
import { copySequence } from "../llama/sequence-copy.js";

/**
 * The most tokens a copy may move per prompt token it saves evaluating (a copy moves every cell the
 * source holds). Measured (local build, states in memory): a copy costs 0.015 ms a token held on
 * random-60m, whose prompt tokens cost 1.03 ms each (a 68th), and 0.02–0.035 ms on the 850M-class
 * model against 9.2 ms (a 260th–460th); 32 leaves a margin.
 */
export const COPY_TOKENS_PER_GAIN = 32;

/** The prompt work (tokens × model bytes) a copy must spare: MIN_STATE_TOKENS tokens of the 60M test model. */
const MIN_COPY_WORK_BYTES = MIN_STATE_TOKENS * RANDOM_60M_BYTES;
/** The fewest prompt tokens a copy must spare on any model. */
export const MIN_COPY_TOKENS = 8;

/**
 * The fewest prompt tokens a copy must spare on a model of `modelBytes`: MIN_STATE_TOKENS on a model as small as the
 * 60M test model (a copy there costs about what a few prompt tokens do), down to MIN_COPY_TOKENS from ~1 GB up. A
 * large model's prompt token costs milliseconds on a CPU (the 850M-class model: ~9 ms against a copy's 0.02–0.035 ms
 * a token held): four requests sending one line with other endings, one of them on the sequence that holds it, had
 * the other three evaluate its 33 tokens cold, one batch after another (first tokens 419, 830 and 1,231 ms against
 * llama-server's ~110, which restores them from its prompt cache).
 */
export function minCopyGain(modelBytes: number): number {
  const tokens = Math.ceil(MIN_COPY_WORK_BYTES / Math.max(1, modelBytes));
  return Math.max(MIN_COPY_TOKENS, Math.min(MIN_STATE_TOKENS, tokens));
}

/** The sequence other than `sequence` sharing the longest prefix of `prompt` (within `limit`), and how long. */
function longestHolder(loaded: LoadedModel, sequence: LlamaContextSequence, prompt: readonly Token[], limit: number) {
  let best: { source: LlamaContextSequence; shared: number } | undefined;
  for (const other of loaded.pool.all()) {
    if (other === sequence) continue;
    const shared = Math.min(other.compareContextTokens(prompt as Token[]).firstDifferentIndex, limit);
    if (shared > (best?.shared ?? 0)) best = { source: other, shared };
  }
  return best;
}

/**
 * Copies into `sequence` the cells of the sequence (free or busy) that holds the longest prefix of
 * `prompt` up to `limit`, when it holds at least `minCopyGain` more of it than `sequence` does
 * and the copy moves at most COPY_TOKENS_PER_GAIN tokens per token gained. The copy runs between
 * decode steps (a busy source's steps wait for it; sequence-copy.ts); the caller then trims what
 * does not match the prompt. A copy that fails is logged (no prompt text) and leaves the sequence
 * empty. Returns the tokens the copy added to the shared prefix (0: no copy).
 */
export async function copyLongerPrefix(
  loaded: LoadedModel,
  sequence: LlamaContextSequence,
  prompt: readonly Token[],
  limit: number,
  metrics: EngineMetrics,
): Promise<number> {
  const own = Math.min(sequence.compareContextTokens(prompt as Token[]).firstDifferentIndex, limit);
  const best = longestHolder(loaded, sequence, prompt, limit);
  if (best === undefined) return 0;
  const gain = best.shared - own;
  if (gain < minCopyGain(loaded.model.size) || best.source.nextTokenIndex > gain * COPY_TOKENS_PER_GAIN) return 0;
  const between: Between = (from, work) => loaded.scheduler.between(from, work);
  try {
    await copySequence(loaded.context, between, best.source, [sequence], loaded.states);
  } catch (error) {
    // What the sequence holds is not known after a failed copy: it is emptied, the prompt evaluated.
    process.stderr.write(
      `prefix copy: a ${best.source.nextTokenIndex}-token sequence could not be copied (${errorText(error)}); the ` +
        `prompt is evaluated\n`,
    );
    await between(sequence, () => sequence.clearHistory());
    return 0;
  }
  const gained = Math.max(
    0,
    Math.min(sequence.compareContextTokens(prompt as Token[]).firstDifferentIndex, limit) - own,
  );
  metrics.prefixCopies++;
  metrics.prefixCopiedTokens += gained;
  return gained;
}
