// Compaction (docs/contract.md, "Compaction"; docs/decisions.md, "Compaction by the served model"):
// the prompt the served model summarises a conversation with, the compaction item's sealed
// `encrypted_content` (a summary this server wrote; sealed-text.ts), and the text that stands for
// the summary in a later prompt.
import { openText, sealText } from "../sealed-text.js";

const PREFIX = "llm-edge.c1.";

/** The last user turn of a compaction pass: what the served model is asked to write. */
export const COMPACTION_PROMPT = [
  "CONTEXT CHECKPOINT. Stop here and write a handoff summary of this conversation so far, to replace it: the " +
    "conversation will continue from",
  "your summary alone, so whoever reads it must be able to carry on the work without the rest.",
  "Write plain text, no preamble, with these parts:",
  "1. Task: what the user asked for, with every requirement and constraint they gave.",
  "2. Done: what has been done so far (files read or changed, commands run, tool results that matter), with exact",
  "names, paths, values and errors.",
  "3. State: what is true now, and decisions made with their reasons.",
  "4. Next: what remains to be done, in order.",
  "Do not call tools. Do not invent anything that is not in the conversation.",
].join("\n");

/** The opening of the user message a compaction item becomes in a prompt. */
export const SUMMARY_OPENING = "A summary of the conversation so far (it was compacted to fit the context window):\n\n";

export function sealCompaction(summary: string): string {
  return sealText(PREFIX, summary);
}

/** The summary a compaction item of this server holds; undefined for anyone else's or a malformed one. */
export function openCompaction(sealed: string): string | undefined {
  return openText(PREFIX, sealed);
}

/** The text that stands for a compaction item's summary in the prompt (a user message). */
export function summaryMessage(summary: string): string {
  return SUMMARY_OPENING + summary;
}
