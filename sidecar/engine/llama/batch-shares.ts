// How a batch's token slots are shared: every stream's next token first, a joining prompt 128
// tokens a batch, the prompts closest to done first (on a CPU and a large model, a second prompt
// only while the prompts stay small: `cpuPromptBatchTokens`); batch requests' tokens beside no
// interactive prompt, and their prompts 16 tokens a batch beside interactive streams (`shareBatchOf`).
import type {
  BatchItem,
  CustomBatchingPrioritizationStrategy,
  EvaluationPriority,
  PrioritizedBatchItem,
} from "node-llama-cpp";

/**
 * The evaluation priority of a PRIORITY_BATCH request's tokens (proto: GenerateRequest.priority);
 * an interactive request's are node-llama-cpp's default, 5.
 */
export const BATCH_EVALUATION_PRIORITY: EvaluationPriority = 1;
export const INTERACTIVE_EVALUATION_PRIORITY: EvaluationPriority = 5;

/**
 * Tokens a batch request's prompt may take in a batch beside interactive streams' steps (after
 * its first): enough to go on, few enough to leave their steps nearly as short as alone.
 */
export const BATCH_PROMPT_TOKENS = 16;

const isBatch = (item: BatchItem): boolean => item.evaluationPriority === BATCH_EVALUATION_PRIORITY;

/** The most tokens a stream's step checks: its next token and a draft (prompt-lookup.ts's `--spec-lookup` at most). */
export const MAX_STEP_TOKENS = 33;

/**
 * Whether a queued decode is a stream's step: one token, or its next token and a draft, every one
 * of them sampled (logits from the first). A prompt wants logits only at its end.
 */
export const isStep = (item: { readonly tokens: readonly unknown[]; readonly logits: BatchItem["logits"] }): boolean =>
  item.tokens.length === 1 || (item.logits[0] === true && item.tokens.length <= MAX_STEP_TOKENS);

/**
 * The items that may take slots in this batch, and the slots batch requests' prompts may take
 * beyond their first token. A batch request's items wait while an interactive request's prompt is
 * evaluated (its first token comes as soon as alone); beside interactive streams' steps a batch
 * request's step goes too, and its prompt BATCH_PROMPT_TOKENS a batch. Never empty when `items`
 * is not: an interactive item is always eligible.
 */
function eligible(items: readonly BatchItem[]): { items: readonly BatchItem[]; batchTokens: number } {
  const interactive = items.filter((item) => !isBatch(item));
  if (interactive.length === 0) return { items, batchTokens: Number.POSITIVE_INFINITY };
  if (interactive.some((item) => !isStep(item))) return { items: interactive, batchTokens: 0 };
  return { items, batchTokens: BATCH_PROMPT_TOKENS };
}

/**
 * Tokens in a batch while streams are decoding: a prompt joining them is evaluated this many
 * tokens at a time. Measured (60M model, 1 thread, two streams decoding while a 1,526-token prompt
 * joins): their longest wait for a token 96–117 ms at 128, 173–180 ms at 256, 370–375 ms at the
 * full 512; the prompt's evaluation 0.93–1.09 s, 0.86–0.89 s and 0.89–0.95 s (0.79–0.91 s alone,
 * in full batches).
 */
export const STREAMING_BATCH_TOKENS = 128;

/**
 * On a CPU, the prompt work (tokens × model bytes) a batch holds once it has one prompt: another
 * prompt joins it only whole and within this, 64 tokens of the 850M-class model (1,706 MB). A CPU
 * evaluates a large model's prompt tokens at nearly the same rate one prompt at a time as together
 * (the 850M-class model: ~10 against 8.4 ms a token), so a batch of every prompt that arrived
 * together gives all of them their first token when the last one's would come; a few at a time, the
 * fewest tokens first, most first tokens come earlier. A small model's batch of many tokens is
 * still much faster than its parts (random-60m: 0.56 against 0.73 ms a token), and there every
 * prompt goes in one batch. Measured, four prompts of 24–29 tokens at once: docs/decisions.md,
 * "Prompts on a CPU, a few at a time". A GPU evaluates many prompt tokens for the price of a few:
 * there the batch always takes all.
 */
const CPU_PROMPT_BATCH_WORK_BYTES = 64 * 1_705_912_096;

/** The most prompt tokens a CPU batch holds once it has one prompt, for a model of `modelBytes`. */
export function cpuPromptBatchTokens(modelBytes: number): number {
  return Math.floor(CPU_PROMPT_BATCH_WORK_BYTES / Math.max(1, modelBytes));
}

/**
 * How one batch's token slots are shared among the queued decodes (node-llama-cpp's
 * `itemPrioritizationStrategy`), a prompt joining another's batch only while the batch's prompt
 * tokens stay within `promptTokens` (`cpuPromptBatchTokens` on a CPU; unbounded, the default, on a
 * GPU). Every decode first gets one token: a generating stream needs just one, so it advances at
 * every batch. The slots left go to the decodes that want more (prompts),
 * the one with the fewest tokens left first, so a long prompt is evaluated a batch at a time
 * beside the streams already decoding, not ahead of them (while streams decode, a batch holds at
 * most STREAMING_BATCH_TOKENS), and of prompts that arrive together as many as fit finish in the
 * first batch: split evenly, every one of them waited for the last batch (docs/decisions.md,
 * "Batch scheduling"). Items keep their order (batch-scheduling.ts sorts them by sequence);
 * evaluation priorities tell batch requests' items from interactive ones (`eligible`).
 *
 * node-llama-cpp's own "maximumParallelism" hands out more slots than the batch holds (its extra
 * passes never count down what is left), and the batch is then filled in queue order: a long
 * prompt on a lower sequence took whole batches, and every stream stood still for its entire
 * evaluation (measured: two streams waited 0.9 s while a 1,500-token prompt was evaluated).
 */
export const shareBatchOf =
  (promptTokens = Number.POSITIVE_INFINITY): CustomBatchingPrioritizationStrategy =>
  ({ items: queued, size }) => {
    const { items, batchTokens } = eligible(queued);
    let batchLeft = batchTokens;
    const wants = items.map((item) => item.tokens.length);
    const amounts = wants.map(() => 0);
    const steps = items.map(isStep);
    const streaming = steps.some(Boolean);
    const bounded = promptTokens !== Number.POSITIVE_INFINITY;
    let left = streaming ? Math.min(size, STREAMING_BATCH_TOKENS) : size;
    for (let i = 0; i < wants.length && left > 0; i++) {
      // A step goes whole (a draft with its token); bounded, a prompt gets no token ahead of its turn below.
      const first = steps[i] === true ? Math.min(wants[i] ?? 0, left) : bounded ? 0 : Math.min(1, wants[i] ?? 0);
      amounts[i] = first;
      left -= first;
    }
    // Then the prompts closest to done, each as much as it still wants.
    const open = wants.flatMap((want, i) => (want > (amounts[i] ?? 0) ? [i] : []));
    open.sort((a, b) => (wants[a] ?? 0) - (amounts[a] ?? 0) - ((wants[b] ?? 0) - (amounts[b] ?? 0)));
    let prompts = 0;
    for (const i of open) {
      const wanted = (wants[i] ?? 0) - (amounts[i] ?? 0);
      // Bounded, a prompt after the first joins only whole.
      if (left === 0 || (prompts > 0 && (prompts + wanted > promptTokens || (bounded && wanted > left)))) break;
      const batch = isBatch(items[i] as BatchItem);
      const add = Math.min(wanted, left, batch ? batchLeft : left);
      amounts[i] = (amounts[i] ?? 0) + add;
      prompts += add;
      left -= add;
      if (batch) batchLeft -= add;
    }
    return items.flatMap((item: BatchItem, i): PrioritizedBatchItem[] => {
      const processAmount = amounts[i] ?? 0;
      return processAmount > 0 ? [{ item, processAmount }] : [];
    });
  };
