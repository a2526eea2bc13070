// A batch ended (docs/decisions.md, "Batches"): once no line is pending, its output and error files
// (OpenAI) or its results (Anthropic) are written from the stored results in input order, under ids
// made from the batch's own, so writing them again after a crash writes the same files; then the
// batch takes its final status.
import { anthropicLine, openAiLine, suffixOf } from "./encoder.js";
import type { BatchRecord, BatchStatus, BatchStore, FileStore } from "./store.js";

/** Lines read at a time while the files are written. */
const PAGE = 500;

/** Where an Anthropic batch's results are kept in the file store. */
export const resultsKey = (batchId: string): string => `results/${batchId}`;

/** The files of an ended batch: OpenAI's output and error JSONL, or Anthropic's results. */
async function writeFiles(
  batch: BatchRecord,
  store: BatchStore,
  files: FileStore,
  now: number,
): Promise<{ output: string | null; error: string | null }> {
  const output: string[] = [];
  const errors: string[] = [];
  for (let from = 0; from < batch.total; from += PAGE) {
    for (const line of await store.lines(batch.id, from, from + PAGE)) {
      if (batch.api === "anthropic") output.push(anthropicLine(line));
      else {
        const written = openAiLine(batch.id, line);
        (written.file === "output" ? output : errors).push(written.text);
      }
    }
  }
  if (batch.api === "anthropic") {
    await files.put(resultsKey(batch.id), output.map((line) => `${line}\n`).join(""));
    return { output: null, error: null };
  }
  const put = async (lines: string[], kind: "output" | "error"): Promise<string | null> => {
    if (lines.length === 0) return null;
    const id = `file-${suffixOf(batch.id)}${kind === "output" ? "o" : "e"}`;
    const bytes = new TextEncoder().encode(lines.map((line) => `${line}\n`).join(""));
    await files.put(id, bytes);
    await store.putFile({
      id,
      owner: batch.owner,
      createdAt: now,
      filename: `${batch.id}_${kind}.jsonl`,
      purpose: "batch_output",
      bytes: bytes.length,
    });
    return id;
  };
  return { output: await put(output, "output"), error: await put(errors, "error") };
}

/** Ends the batch if no line is pending: its files, then its final status. */
export async function finalize(
  batch: BatchRecord,
  store: BatchStore,
  files: FileStore,
  now: () => number,
): Promise<void> {
  const counts = await store.counts(batch.id);
  if (counts.pending > 0) return;
  const final: BatchStatus =
    counts.expired > 0 ? "expired" : batch.status === "cancelling" || counts.cancelled > 0 ? "cancelled" : "completed";
  if (final === "completed") await store.moveBatch(batch.id, ["in_progress"], "finalizing", now());
  const written = await writeFiles(batch, store, files, now());
  await store.moveBatch(batch.id, ["in_progress", "finalizing", "cancelling"], final, now(), written);
}
