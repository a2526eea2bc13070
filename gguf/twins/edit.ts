// The speculation workloads' model: the scripted model widened to the 850M class (random-850m's
// shape and vocabulary size, F16, so each decode step reads 1.7 GB as a real model's does) with
// layers that change nothing, scripted to do what an agent's edit does and what a chat does.
// - edit: the prompt holds a 1,500-word file and ends in " Fix:"; the reply is the file again with
//   two words changed, then `</s>` (a reply that repeats its prompt: prompt lookup drafts it).
// - chat: the prompt ends in " Explain:"; the reply is 500 words the file does not hold; its prompt
//   quotes pairs of them out of order, so lookups find matches whose drafts are wrong, as a chat's
//   reply shares phrases with its question.
import { CHATML_TEMPLATE } from "../llama.js";
import { mulberry32, RANDOM_850M } from "../random.js";
import type { ScriptedSpec } from "../scripted.js";

/** Words of the edit's file. */
export const EDIT_FILE_WORDS = 1500;
/** Words of the chat's reply. */
export const CHAT_REPLY_WORDS = 500;
/** Which of the file's words the edit changes, and what to: both within the first 300 tokens a benchmark reads. */
const CHANGES: ReadonlyArray<readonly [number, string]> = [
  [100, " fixedvalue"],
  [200, " patchedcall"],
];

export interface SpeculationWorkloads {
  /** The edit's completion prompt (the file, then " Fix:") and its reply (the file changed; then `</s>`). */
  readonly edit: { readonly prompt: string; readonly reply: string };
  /** The chat's completion prompt (quoted pairs of its reply, then " Explain:") and its reply. */
  readonly chat: { readonly prompt: string; readonly reply: string };
}

/** Distinct lowercase words of 5 to 9 letters, each with its leading space, the same every run. */
function words(count: number): string[] {
  const next = mulberry32(1500);
  const out = new Set<string>();
  while (out.size < count) {
    const length = 5 + (next() % 5);
    let word = " ";
    for (let i = 0; i < length; i++) word += String.fromCharCode(97 + (next() % 26));
    out.add(word);
  }
  return [...out];
}

/** The two workloads' prompts and replies. */
export function speculationWorkloads(): SpeculationWorkloads {
  const all = words(EDIT_FILE_WORDS + CHAT_REPLY_WORDS);
  const file = all.slice(0, EDIT_FILE_WORDS);
  const edited = file.slice();
  for (const [at, word] of CHANGES) edited[at] = word;
  const answer = all.slice(EDIT_FILE_WORDS);
  // Every tenth pair of the answer, quoted last to first.
  const quoted: string[] = [];
  for (let i = answer.length - 2; i >= 0; i -= 10) quoted.push(`${answer[i]}${answer[i + 1]}`);
  return {
    edit: { prompt: `${file.join("")} Fix:`, reply: edited.join("") },
    chat: { prompt: `${quoted.join("")} Explain:`, reply: answer.join("") },
  };
}

/**
 * The draft model's shape: as wide as the script needs (a token with a successor a dimension), one block: about
 * a sixth of edit-850m's bytes a step, nearly all of them the vocabulary's two matrices.
 */
const DRAFT_SHAPE = { ...RANDOM_850M.shape, blocks: 1, feedForward: 2048 };

/**
 * The `edit-850m` model, or with `draft` its draft model `edit-draft`: the same script and vocabulary in one
 * block (a draft model that guesses every token right: what a draft model's machinery costs and gains at best,
 * here and in llama-server).
 */
export function editTwinSpec(draft = false): ScriptedSpec {
  const { edit, chat } = speculationWorkloads();
  return {
    name: draft ? "edit-draft" : "edit-850m",
    chatTemplate: CHATML_TEMPLATE,
    contextLength: 8192,
    scripts: [
      { after: " Fix:", reply: edit.reply, end: "eos" },
      { after: " Explain:", reply: chat.reply, end: "eos" },
    ],
    wide: { shape: draft ? DRAFT_SHAPE : RANDOM_850M.shape, vocabSize: RANDOM_850M.vocabSize },
  };
}
