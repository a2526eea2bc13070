// One sequence's KV cells copied into others (`copySequence`): a prompt evaluated once serves
// every choice of a request (GenerateRequest.n). docs/decisions.md, "Several choices share one
// prompt evaluation".
import { mkdtemp, rm } from "node:fs/promises";
import path from "node:path";
import type { LlamaContext, LlamaContextSequence } from "node-llama-cpp";
import { ramFolder } from "./kv-folder.js";
import type { Between } from "./kv-tier.js";
import type { SequenceStates } from "./llama-internals.js";

/**
 * Copies what `from` holds (its cells and its tokens) into each of `to`, replacing what they held.
 * node-llama-cpp 3.21.1 binds no `llama_memory_seq_cp`, so the copy goes through sequence states
 * (`llama_state_seq_get_data` / `set_data`): in memory with `states`, else its public state files
 * in a private RAM-backed folder. The cells' bytes are copied, as `llama_memory_seq_cp` copies them
 * between the per-sequence caches node-llama-cpp makes (no unified KV cache). It runs between
 * decode steps (`between`), like the KV cache tier's saves; the copy is freed after.
 */
export async function copySequence(
  context: LlamaContext,
  between: Between,
  from: LlamaContextSequence,
  to: readonly LlamaContextSequence[],
  states?: SequenceStates,
): Promise<void> {
  if (to.length === 0) return;
  if (states !== undefined) {
    await between(from, async () => {
      const tokens = from.contextTokens.slice();
      const state = await states.capture(from);
      try {
        for (const sequence of to) await states.restore(sequence, state, tokens);
      } finally {
        state.dispose();
      }
    });
    return;
  }
  // At most one whole sequence's state: /dev/shm when it has that much room, else the temp folder.
  const folder = await mkdtemp(
    path.join(ramFolder(context.stateSize / Math.max(1, context.totalSequences)), "sidecar-copy-"),
  );
  const file = path.join(folder, "state.kv");
  try {
    await between(from, async () => {
      await from.saveStateToFile(file);
      for (const sequence of to) await sequence.loadStateFromFile(file, { acceptRisk: true });
    });
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}
