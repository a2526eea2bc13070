// Scripted llama models: real GGUF files whose output llama.cpp computes, but whose every next
// token is fixed by a script, so tests can assert exact text.
//
// How: one layer whose weights are all 0 and whose norms are 1, so the residual stream is just the
// token's embedding. Embeddings are one-hot. Every token that starts a step of a script (it has a
// chosen successor) gets its own embedding dimension; every other token shares the newline's
// dimension (dimension 0), so a prompt ending in a token the scripts do not know continues like
// one ending in "\n". The output matrix puts a logit of +80 on each dimension's successor and 0
// everywhere else, which wins at any temperature and with the usual penalties.
import {
  baseVocab,
  byteTokenPiece,
  EOS_ID,
  escapeSpaces,
  IM_END_ID,
  llamaMetadata,
  llamaTensorSlots,
  NEWLINE_ID,
  onesTensor,
  sizeOf,
  TOKEN_TYPE,
  unescapeSpaces,
  type LlamaShape,
  type VocabEntry,
} from "./llama.js";
import type { GgufFile, Tensor } from "./writer.js";

export type ScriptEnd = "eos" | "im_end" | "loop";

export interface Script {
  /**
   * What triggers the script: a text whose last piece (as `splitPieces` cuts it) is the trigger
   * token, e.g. "Once upon a time" (trigger " time") or "\n" (the newline that ends a ChatML
   * prompt; the newline's script is also what any unknown last token continues with).
   */
  readonly after: string;
  /** The reply: a text cut by `splitPieces`, or the pieces themselves (non-ASCII still as bytes). */
  readonly reply: string | readonly string[];
  /** After the reply: `</s>`, `<|im_end|>`, or the reply again, forever. */
  readonly end: ScriptEnd;
}

export interface ScriptedSpec {
  readonly name: string;
  readonly chatTemplate: string;
  readonly scripts: readonly Script[];
  /** `llama.context_length`; 4096 unless given. */
  readonly contextLength?: number;
}

export interface BuiltScript {
  readonly after: string;
  /** The trigger token's text (bytes shown as `<0xNN>`). */
  readonly trigger: string;
  /** The reply's tokens, as text (bytes shown as `<0xNN>`), then the end. */
  readonly pieces: readonly string[];
  readonly tokenIds: readonly number[];
  readonly end: ScriptEnd;
}

export interface ScriptedModel {
  readonly file: GgufFile;
  readonly vocab: readonly VocabEntry[];
  readonly scripts: readonly BuiltScript[];
  readonly shape: LlamaShape;
  readonly parameters: number;
}

/** The logit a token's chosen successor gets. */
export const SCRIPT_LOGIT = 80;

/** A token as the vocabulary stores it: text with "▁" for spaces, or a byte as `<0xNN>`. */
type Piece = string;

const RESERVED = new Set(["<unk>", "<s>", "</s>", "<|im_start|>", "<|im_end|>"]);
const PUNCT = "!-\\/:-@\\[-`{-~";
/** A word (optionally after a space) with trailing punctuation; a punctuation run; a lone space. */
const ASCII_PIECE = new RegExp(`^( ?[A-Za-z0-9]+[${PUNCT}]*| ?[${PUNCT}]+| )`);

const isPrintableAscii = (ch: string): boolean => ch >= " " && ch <= "~";

function bytePieces(ch: string): Piece[] {
  return [...new TextEncoder().encode(ch)].map(byteTokenPiece);
}

/**
 * Cuts a text into the pieces a scripted model emits: word pieces with their leading space and
 * trailing punctuation (" there", " Tokyo,", "C."), punctuation runs (" (", ")."), a lone space
 * before a non-ASCII character, and every character outside printable ASCII (newline included)
 * as its UTF-8 byte tokens. Returns vocabulary pieces ("▁there", "<0xF0>").
 */
export function splitPieces(text: string): Piece[] {
  const out: Piece[] = [];
  let rest = text;
  while (rest.length > 0) {
    const ch = String.fromCodePoint(rest.codePointAt(0) ?? 0);
    if (!isPrintableAscii(ch)) {
      out.push(...bytePieces(ch));
      rest = rest.slice(ch.length);
      continue;
    }
    const m = ASCII_PIECE.exec(rest);
    const piece = m?.[0] ?? ch;
    out.push(escapeSpaces(piece));
    rest = rest.slice(piece.length);
  }
  return out;
}

/** Explicit pieces are kept as given, except that non-ASCII and control characters become bytes. */
function explicitPieces(pieces: readonly string[]): Piece[] {
  const out: Piece[] = [];
  for (const p of pieces) {
    if (p.length === 0) throw new Error("a reply piece is empty");
    let text = "";
    for (const ch of p) {
      if (isPrintableAscii(ch)) {
        text += ch;
        continue;
      }
      if (text) out.push(escapeSpaces(text));
      text = "";
      out.push(...bytePieces(ch));
    }
    if (text) out.push(escapeSpaces(text));
  }
  return out;
}

const isBytePiece = (p: Piece): boolean => /^<0x[0-9A-F]{2}>$/.test(p);
const show = (p: Piece): string => (isBytePiece(p) ? p : unescapeSpaces(p));
const quote = (p: Piece): string => JSON.stringify(show(p));

/** The vocabulary under construction: the fixed part, then text pieces with all their prefixes. */
class VocabBuilder {
  readonly entries = baseVocab();
  private readonly ids = new Map<Piece, number>(this.entries.map((e, i) => [e.piece, i]));

  constructor() {
    // Without a "▁" piece, llama.cpp tokenizes a space as the bytes of U+2581 and decodes it as "▁".
    this.addText(escapeSpaces(" "));
  }

  id(piece: Piece): number {
    const id = this.ids.get(piece);
    if (id === undefined) throw new Error(`internal: piece ${quote(piece)} is not in the vocabulary`);
    return id;
  }

  /** llama.cpp's SentencePiece tokenizer only reaches a piece if all its prefixes are pieces too. */
  addText(piece: Piece): void {
    if (isBytePiece(piece)) return;
    if (RESERVED.has(piece) || /^<0x[0-9A-Fa-f]{2}>$/.test(piece)) {
      throw new Error(`the piece ${quote(piece)} would collide with a special or byte token`);
    }
    const chars = [...piece];
    for (let n = 1; n <= chars.length; n++) {
      const prefix = chars.slice(0, n).join("");
      if (this.ids.has(prefix)) continue;
      this.ids.set(prefix, this.entries.length);
      // Longer pieces score higher, so merges grow words from their start.
      this.entries.push({ piece: prefix, score: n, type: TOKEN_TYPE.normal });
    }
  }
}

interface Step {
  readonly next: number;
  readonly origin: string;
}

/** Builds the scripted model; throws if a token would need two different successors. */
export function buildScriptedModel(spec: ScriptedSpec): ScriptedModel {
  const fail = (message: string): never => {
    throw new Error(`scripted model "${spec.name}": ${message}`);
  };
  const vocab = new VocabBuilder();
  const parsed = spec.scripts.map((script, index) => {
    const label = `script ${index + 1} (after ${JSON.stringify(script.after)})`;
    let reply: Piece[] = [];
    let after: Piece[] = [];
    try {
      after = splitPieces(script.after);
      reply = typeof script.reply === "string" ? splitPieces(script.reply) : explicitPieces(script.reply);
      for (const p of [...after, ...reply]) vocab.addText(p);
    } catch (e) {
      fail(`${label}: ${(e as Error).message}`);
    }
    const trigger = after.at(-1) ?? fail(`${label}: "after" is empty`);
    if (reply.length === 0 && script.end === "loop") fail(`${label}: a loop needs a reply`);
    return { script, label, trigger, reply };
  });

  // Successor of every token that starts a step.
  const steps = new Map<number, Step>();
  const link = (from: Piece, next: number, nextShown: string, origin: string): void => {
    const fromId = vocab.id(from);
    const known = steps.get(fromId);
    if (known && known.next !== next) {
      fail(
        `token ${quote(from)} would need two successors: ${quote(vocab.entries[known.next]?.piece ?? "?")} ` +
          `(${known.origin}) and ${nextShown} (${origin})`,
      );
    }
    if (!known) steps.set(fromId, { next, origin });
  };
  const built: BuiltScript[] = parsed.map(({ script, label, trigger, reply }) => {
    const endId = script.end === "eos" ? EOS_ID : script.end === "im_end" ? IM_END_ID : undefined;
    const chain = [trigger, ...reply];
    for (let i = 0; i + 1 < chain.length; i++) {
      const next = chain[i + 1] as Piece;
      link(chain[i] as Piece, vocab.id(next), quote(next), label);
    }
    const last = chain.at(-1) as Piece;
    if (endId !== undefined) link(last, endId, endId === EOS_ID ? '"</s>"' : '"<|im_end|>"', label);
    else link(last, vocab.id(reply[0] as Piece), quote(reply[0] as Piece), label);
    const pieces = reply.map(show);
    if (endId !== undefined) pieces.push(endId === EOS_ID ? "</s>" : "<|im_end|>");
    return {
      after: script.after,
      trigger: show(trigger),
      pieces,
      tokenIds: [...reply.map((p) => vocab.id(p)), ...(endId !== undefined ? [endId] : [])],
      end: script.end,
    };
  });

  // Dimension 0 belongs to the newline (and to every token without a step of its own).
  const dimOf = new Map<number, number>([[NEWLINE_ID, 0]]);
  for (const id of steps.keys()) if (!dimOf.has(id)) dimOf.set(id, dimOf.size);
  const d = Math.max(16, Math.ceil(dimOf.size / 16) * 16);
  const shape: LlamaShape = {
    contextLength: spec.contextLength ?? 4096,
    embedding: d,
    blocks: 1,
    feedForward: d,
    heads: 1,
    headsKv: 1,
    rmsEpsilon: 1e-5,
  };
  const n = vocab.entries.length;
  const embedding = new Float32Array(d * n);
  for (let id = 0; id < n; id++) embedding[id * d + (dimOf.get(id) ?? 0)] = 1;
  // The final RMS norm scales a one-hot vector of 1 to 1/sqrt(1/d + eps).
  const weight = SCRIPT_LOGIT * Math.sqrt(1 / d + shape.rmsEpsilon);
  const output = new Float32Array(d * n);
  for (const [id, step] of steps) output[step.next * d + (dimOf.get(id) ?? 0)] = weight;

  const tensors: Tensor[] = llamaTensorSlots(shape, n).map((slot) => {
    switch (slot.role) {
      case "embedding": return { name: slot.name, shape: slot.shape, type: "F32", data: embedding };
      case "output": return { name: slot.name, shape: slot.shape, type: "F32", data: output };
      case "norm": return onesTensor(slot);
      case "matrix": return { name: slot.name, shape: slot.shape, type: "F32", data: new Float32Array(sizeOf(slot.shape)) };
    }
  });
  const parameters = tensors.reduce((sum, t) => sum + t.data.length, 0);
  const metadata = llamaMetadata(spec.name, shape, vocab.entries, spec.chatTemplate, "F32");
  return { file: { metadata, tensors }, vocab: vocab.entries, scripts: built, shape, parameters };
}
