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
import { meta, type GgufFile, type Tensor } from "./writer.js";

export type ScriptEnd = "eos" | "im_end" | "loop";

export interface Script {
  /**
   * What triggers the script: a text whose last piece (as `splitPieces` cuts it) is the trigger
   * token, e.g. "Once upon a time" (trigger " time") or "\n" (the newline that ends a ChatML
   * prompt; the newline's script is also what any unknown last token continues with).
   */
  readonly after: string | readonly string[];
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
  /** A reply that depends on the context, not only on the last token (see ContextSwitch). */
  readonly contextSwitch?: ContextSwitch;
}

/**
 * What makes a model's first reply step depend on the whole prompt. An attention head with a
 * constant query looks only at trigger tokens (their keys are the only non-zero ones) and writes
 * the average of their values into a "mode" dimension; a feed-forward unit fires when the mode is
 * above 0.5 and the current token has no step of its own (the newline that ends a chat prompt),
 * and puts `next` ahead of the newline's script. RoPE is made inert for that head's dimensions
 * (a huge frequency base).
 */
export interface ContextSwitch {
  /** Pieces that are single USER_DEFINED tokens (matched in any prompt, decoded as text). */
  readonly userDefined: readonly string[];
  /** Tokens whose presence sets the mode: the average of the values of those present. */
  readonly triggers: readonly { readonly piece: string; readonly value: number }[];
  /** The token that follows a newline when the mode is on (a user-defined piece). */
  readonly next: string;
  /**
   * Text pieces preferred where the scripts have no say: when a grammar forbids the scripted
   * token, the sampler takes one of these over other allowed tokens.
   */
  readonly preferred: readonly string[];
}

/** Logits of the context switch's parts (after the final norm). */
const SWITCH_LOGIT = 150;
const PREFERRED_LOGIT = 25;
/** Attention score of a trigger token, against 0 for every other token. */
const TRIGGER_SCORE = 30;
/** Scale of the feed-forward unit's gate. */
const GATE_SCALE = 4;

export interface BuiltScript {
  readonly after: string | readonly string[];
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
/** llama.cpp's token type for added tokens that are not control tokens. */
const USER_DEFINED = 4;
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

/**
 * Explicit pieces are kept as given, except that non-ASCII and control characters become bytes;
 * user-defined tokens stay whole.
 */
function explicitPieces(pieces: readonly string[], special: ReadonlySet<string>): Piece[] {
  const out: Piece[] = [];
  for (const p of pieces) {
    if (p.length === 0) throw new Error("a reply piece is empty");
    if (special.has(p)) {
      out.push(p);
      continue;
    }
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

  /** A user-defined token: one token wherever its text appears. */
  addUserDefined(piece: Piece): void {
    if (this.ids.has(piece)) throw new Error(`the user-defined token ${quote(piece)} is already a piece`);
    this.ids.set(piece, this.entries.length);
    this.entries.push({ piece, score: 0, type: USER_DEFINED });
    this.special.add(piece);
  }

  readonly special = new Set<Piece>();

  id(piece: Piece): number {
    const id = this.ids.get(piece);
    if (id === undefined) throw new Error(`internal: piece ${quote(piece)} is not in the vocabulary`);
    return id;
  }

  /** llama.cpp's SentencePiece tokenizer only reaches a piece if all its prefixes are pieces too. */
  addText(piece: Piece): void {
    if (isBytePiece(piece) || this.special.has(piece)) return;
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
  const cs = spec.contextSwitch;
  for (const piece of cs?.userDefined ?? []) vocab.addUserDefined(piece);
  for (const text of cs?.preferred ?? []) vocab.addText(escapeSpaces(text));
  const parsed = spec.scripts.map((script, index) => {
    const label = `script ${index + 1} (after ${JSON.stringify(script.after)})`;
    let reply: Piece[] = [];
    let after: Piece[] = [];
    try {
      after = typeof script.after === "string" ? splitPieces(script.after) : explicitPieces(script.after, vocab.special);
      reply = typeof script.reply === "string" ? splitPieces(script.reply) : explicitPieces(script.reply, vocab.special);
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
  for (const trigger of cs?.triggers ?? []) {
    const id = vocab.id(trigger.piece);
    if (!dimOf.has(id)) dimOf.set(id, dimOf.size);
  }
  // The context switch's own dimensions: a constant 1 in every embedding, the mode, the switch.
  const constDim = dimOf.size;
  const modeDim = constDim + 1;
  const switchDim = constDim + 2;
  const used = dimOf.size + (cs === undefined ? 0 : 3);
  const d = Math.max(16, Math.ceil(used / 16) * 16);
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
  for (let id = 0; id < n; id++) {
    embedding[id * d + (dimOf.get(id) ?? 0)] = 1;
    if (cs !== undefined) embedding[id * d + constDim] = 1;
  }
  // The final RMS norm scales a one-hot vector of 1 to 1/sqrt(1/d + eps).
  const weight = SCRIPT_LOGIT * Math.sqrt(1 / d + shape.rmsEpsilon);
  const output = new Float32Array(d * n);
  for (const [id, step] of steps) output[step.next * d + (dimOf.get(id) ?? 0)] = weight;
  const layer = cs === undefined ? undefined : switchLayer(cs, vocab, dimOf, d, { constDim, modeDim, switchDim }, output);

  const tensors: Tensor[] = llamaTensorSlots(shape, n).map((slot) => {
    const layerData = layer?.get(slot.name.replace(/^blk\.0\./, ""));
    if (layerData !== undefined) return { name: slot.name, shape: slot.shape, type: "F32", data: layerData };
    switch (slot.role) {
      case "embedding": return { name: slot.name, shape: slot.shape, type: "F32", data: embedding };
      case "output": return { name: slot.name, shape: slot.shape, type: "F32", data: output };
      case "norm": return onesTensor(slot);
      case "matrix": return { name: slot.name, shape: slot.shape, type: "F32", data: new Float32Array(sizeOf(slot.shape)) };
    }
  });
  const parameters = tensors.reduce((sum, t) => sum + t.data.length, 0);
  const metadata = llamaMetadata(spec.name, shape, vocab.entries, spec.chatTemplate, "F32");
  // RoPE would turn the constant query with the position; a huge base leaves the last pair still.
  if (cs !== undefined) metadata.push(["llama.rope.freq_base", meta.f32(1e30)]);
  return { file: { metadata, tensors }, vocab: vocab.entries, scripts: built, shape, parameters };
}

/**
 * The layer weights of a context switch (ggml matrices: `data[out * in + in_index]`), and its
 * output logits written into `output`. Every embedding has two ones (its own dimension and the
 * constant), so the attention norm scales them to s0 = sqrt(d / 2).
 */
function switchLayer(
  cs: ContextSwitch,
  vocab: VocabBuilder,
  dimOf: ReadonlyMap<number, number>,
  d: number,
  dims: { constDim: number; modeDim: number; switchDim: number },
  output: Float32Array,
): Map<string, Float32Array> {
  const { constDim, modeDim, switchDim } = dims;
  const s0 = Math.sqrt(d / 2);
  const q = new Float32Array(d * d);
  const k = new Float32Array(d * d);
  const v = new Float32Array(d * d);
  const o = new Float32Array(d * d);
  // Query and keys use the last (still) RoPE pair; score = q·k / sqrt(d).
  const last = d - 1;
  q[last * d + constDim] = 1;
  for (const trigger of cs.triggers) {
    const dim = dimOf.get(vocab.id(trigger.piece)) as number;
    k[last * d + dim] = (TRIGGER_SCORE * Math.sqrt(d)) / (s0 * s0);
    v[0 * d + dim] = trigger.value;
  }
  o[modeDim * d + 0] = 1 / s0;
  // Feed-forward unit 0: gate = A·(newline + mode − 1.5·constant), up = constant, down → switch.
  const gate = new Float32Array(d * d);
  const up = new Float32Array(d * d);
  const down = new Float32Array(d * d);
  gate[0 * d + 0] = GATE_SCALE;
  gate[0 * d + modeDim] = GATE_SCALE;
  gate[0 * d + constDim] = -1.5 * GATE_SCALE;
  up[0 * d + constDim] = 1;
  down[switchDim * d + 0] = 1;
  // When the unit fires, the switch dimension dominates the final norm (≈ sqrt(d) after it).
  output[vocab.id(cs.next) * d + switchDim] = SWITCH_LOGIT / Math.sqrt(d);
  // Preferred both where the switch is off (the constant is ≈ s0 after the norm) and where it is
  // on (the switch dimension is ≈ sqrt(d)): grammar-forced stretches lie in both.
  for (const text of cs.preferred) {
    output[vocab.id(escapeSpaces(text)) * d + constDim] = PREFERRED_LOGIT / s0;
    output[vocab.id(escapeSpaces(text)) * d + switchDim] = PREFERRED_LOGIT / Math.sqrt(d);
  }
  return new Map([
    ["attn_q.weight", q],
    ["attn_k.weight", k],
    ["attn_v.weight", v],
    ["attn_output.weight", o],
    ["ffn_gate.weight", gate],
    ["ffn_up.weight", up],
    ["ffn_down.weight", down],
  ]);
}
