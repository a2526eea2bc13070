// How a batch's token slots are shared: every stream's next token first, a joining prompt 128
// tokens a batch, the prompts closest to done first (`shareBatch`).
import type { BatchItem, CustomBatchingPrioritizationStrategy, PrioritizedBatchItem } from "node-llama-cpp";

/**
 * Tokens in a batch while streams are decoding: a prompt joining them is evaluated this many
 * tokens at a time. Measured (60M model, 1 thread, two streams decoding while a 1,526-token prompt
 * joins): their longest wait for a token 96–117 ms at 128, 173–180 ms at 256, 370–375 ms at the
 * full 512; the prompt's evaluation 0.93–1.09 s, 0.86–0.89 s and 0.89–0.95 s (0.79–0.91 s alone,
 * in full batches).
 */
export const STREAMING_BATCH_TOKENS = 128;

/**
 * How one batch's token slots are shared among the queued decodes (node-llama-cpp's
 * `itemPrioritizationStrategy`). Every decode first gets one token: a generating stream needs just
 * one, so it advances at every batch. The slots left go to the decodes that want more (prompts),
 * the one with the fewest tokens left first, so a long prompt is evaluated a batch at a time
 * beside the streams already decoding, not ahead of them (while streams decode, a batch holds at
 * most STREAMING_BATCH_TOKENS), and of prompts that arrive together as many as fit finish in the
 * first batch: split evenly, every one of them waited for the last batch (docs/decisions.md,
 * "Batch scheduling"). Items keep their order (batch-scheduling.ts sorts them by sequence);
 * evaluation priorities are not used (the sidecar gives every request the same).
 *
 * node-llama-cpp's own "maximumParallelism" hands out more slots than the batch holds (its extra
 * passes never count down what is left), and the batch is then filled in queue order: a long
 * prompt on a lower sequence took whole batches, and every stream stood still for its entire
 * evaluation (measured: two streams waited 0.9 s while a 1,500-token prompt was evaluated).
 */
export const shareBatch: CustomBatchingPrioritizationStrategy = ({ items, size }) => {
  const wants = items.map((item) => item.tokens.length);
  const amounts = wants.map(() => 0);
  // A decode of one token is a stream's next step.
  const streaming = wants.some((want) => want === 1);
  let left = streaming ? Math.min(size, STREAMING_BATCH_TOKENS) : size;
  for (let i = 0; i < wants.length && left > 0; i++) {
    if ((wants[i] ?? 0) > 0) {
      amounts[i] = 1;
      left--;
    }
  }
  // Then the prompts closest to done, each as much as it still wants.
  const open = wants.flatMap((want, i) => (want > (amounts[i] ?? 0) ? [i] : []));
  open.sort((a, b) => (wants[a] ?? 0) - (amounts[a] ?? 0) - ((wants[b] ?? 0) - (amounts[b] ?? 0)));
  for (const i of open) {
    if (left === 0) break;
    const add = Math.min((wants[i] ?? 0) - (amounts[i] ?? 0), left);
    amounts[i] = (amounts[i] ?? 0) + add;
    left -= add;
  }
  return items.flatMap((item: BatchItem, i): PrioritizedBatchItem[] => {
    const processAmount = amounts[i] ?? 0;
    return processAmount > 0 ? [{ item, processAmount }] : [];
  });
};
