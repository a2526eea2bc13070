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
  architectureMetadata,
  llamaMetadata,
  llamaTensorSlots,
  NEWLINE_ID,
  onesTensor,
  sizeOf,
  TOKEN_TYPE,
  unescapeSpaces,
  type Architecture,
  type LlamaShape,
  type VocabEntry,
} from "./llama.js";
import { type FamilyVocab, familyVocab, type FamilyVocabSpec, type ScriptVocab } from "./family-vocab.js";
import { meta, toFloat16Bits, type GgufFile, type Tensor } from "./writer.js";

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
  /**
   * Widened to a real model's size: its shape (one-hot dimensions up to its width) and vocabulary
   * size (padded with unused tokens), in F16, every layer's matrices zero — read like a real
   * model's, changing nothing.
   */
  readonly wide?: { readonly shape: LlamaShape; readonly vocabSize: number };
}

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
class VocabBuilder implements ScriptVocab {
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

  get size(): number {
    return this.entries.length;
  }

  pieces(text: string | readonly string[]): Piece[] {
    return typeof text === "string" ? splitPieces(text) : explicitPieces(text, this.special);
  }

  piece(text: string): Piece {
    return this.special.has(text) ? text : escapeSpaces(text);
  }

  endId(end: string): number {
    return end === "eos" ? EOS_ID : end === "im_end" ? IM_END_ID : this.id(end);
  }

  show(piece: Piece): string {
    return show(piece);
  }

  text(id: number): string {
    return this.entries[id]?.piece ?? "?";
  }

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

/** A script's trigger (the last piece of `after`) and reply pieces, added to the vocabulary. */
function scriptPieces(
  script: Pick<Script, "after" | "reply">,
  vocab: ScriptVocab,
  label: string,
  fail: (message: string) => never,
): { trigger: Piece; reply: Piece[] } {
  let after: Piece[] = [];
  let reply: Piece[] = [];
  try {
    after = vocab.pieces(script.after);
    reply = vocab.pieces(script.reply);
    for (const p of [...after, ...reply]) vocab.addText(p);
  } catch (e) {
    fail(`${label}: ${(e as Error).message}`);
  }
  return { trigger: after.at(-1) ?? fail(`${label}: "after" is empty`), reply };
}

interface Step {
  readonly next: number;
  readonly origin: string;
}

/** The scripts' chains of tokens, and the successor of every token that starts a step. */
function scriptedSteps(
  spec: ScriptedSpec,
  vocab: VocabBuilder,
  fail: (message: string) => never,
): { steps: Map<number, Step>; built: BuiltScript[] } {
  const parsed = spec.scripts.map((script, index) => {
    const label = `script ${index + 1} (after ${JSON.stringify(script.after)})`;
    const { trigger, reply } = scriptPieces(script, vocab, label, fail);
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
  return { steps, built };
}

/** Builds the scripted model; throws if a token would need two different successors. */
export function buildScriptedModel(spec: ScriptedSpec): ScriptedModel {
  const fail = (message: string): never => {
    throw new Error(`scripted model "${spec.name}": ${message}`);
  };
  const vocab = new VocabBuilder();
  const { steps, built } = scriptedSteps(spec, vocab, fail);

  // Dimension 0 belongs to the newline (and to every token without a step of its own).
  const dimOf = new Map<number, number>([[NEWLINE_ID, 0]]);
  for (const id of steps.keys()) if (!dimOf.has(id)) dimOf.set(id, dimOf.size);
  const shape = scriptedShape(spec, Math.max(16, Math.ceil(dimOf.size / 16) * 16));
  if (dimOf.size > shape.embedding)
    fail(`${dimOf.size} tokens with a successor do not fit in ${shape.embedding} dimensions`);
  if (spec.wide !== undefined) padVocab(vocab, spec.wide.vocabSize, fail);
  const d = shape.embedding;
  const n = vocab.entries.length;
  const embedding = new Float32Array(d * n);
  for (let id = 0; id < n; id++) {
    embedding[id * d + (dimOf.get(id) ?? 0)] = 1;
  }
  // The final RMS norm scales a one-hot vector of 1 to 1/sqrt(1/d + eps).
  const weight = SCRIPT_LOGIT * Math.sqrt(1 / d + shape.rmsEpsilon);
  const output = new Float32Array(d * n);
  for (const [id, step] of steps) output[step.next * d + (dimOf.get(id) ?? 0)] = weight;

  // Every block's matrices stay zero, so the output is the embedding's alone.
  const type = spec.wide === undefined ? "F32" : "F16";
  const tensors: Tensor[] = contextualTensors(shape, n, new Map(), embedding, output, type, type);
  const parameters = tensors.reduce((sum, t) => sum + t.data.length, 0);
  const metadata = llamaMetadata(spec.name, shape, vocab.entries, spec.chatTemplate, type);
  return { file: { metadata, tensors }, vocab: vocab.entries, scripts: built, shape, parameters };
}

/** One block of width `d`, or the widened shape. */
function scriptedShape(spec: ScriptedSpec, d: number): LlamaShape {
  const contextLength = spec.contextLength ?? 4096;
  if (spec.wide !== undefined) return { ...spec.wide.shape, contextLength };
  return { contextLength, embedding: d, blocks: 1, feedForward: d, heads: 1, headsKv: 1, rmsEpsilon: 1e-5 };
}

/** Unused control tokens up to `size` (a real vocabulary's size: the output matrix is read like its). */
function padVocab(vocab: VocabBuilder, size: number, fail: (message: string) => never): void {
  if (vocab.entries.length > size) fail(`the scripts need ${vocab.entries.length} tokens, more than ${size}`);
  for (let i = 0; vocab.entries.length < size; i++)
    vocab.entries.push({ piece: `<unused${i}>`, score: 0, type: TOKEN_TYPE.control });
}

// ---------------------------------------------------------------------------------------------
// Contextual scripted models: the successor of a token may also depend on the token before it and
// on the mode of the context (which trigger tokens the prompt holds), so that one model follows
// several scripts that share tokens, the newline above all.
//
// The residual stream (one layer) holds one-hot dimensions: the current token (tokens the scripts
// do not name share an "other" dimension), a constant 1, and, written by attention, the previous
// token and the mode:
// - head 0 looks at the previous position only: query and key are constant vectors that RoPE turns
//   with the position, on the pairs whose angles per position are 1, 1/2, …, 1/4096 radians (the
//   RoPE base is 2^(n_rot/2), so each pair turns half as fast as the one before), with the key set
//   one position ahead, so the score Σ cos((δ − 1)/2^i) peaks at distance δ = 1 and is at least
//   18 below the peak anywhere else in the context (`previousPairs`); its values are one-hot for the tokens
//   some rule needs as "previous token".
// - head 1 has a constant query on a pair RoPE leaves still (angle 2^-31 per position); only
//   mode trigger tokens have keys, higher for higher priority, so it averages over the
//   highest-priority trigger present and writes that mode's dimension (no trigger: all stay 0).
//   A trigger may be a token the model itself writes, so a mode can change within a reply (that
//   is how a script counts: the first call's `Tokyo"}` switches to the mode of the second call).
// A feed-forward (SwiGLU) unit per rule fires when its current token, previous token and mode
// dimensions are on (and the others it excludes are off) and writes its target's dimension, which
// the output matrix turns into a decisive logit. Where modes decide, one successor is the default
// (that of the scripts without a mode, else of the first script) for every mode not named, so a
// mode no script foresees there still gets one. Tokens with one successor in every context get it
// from their own dimension, like in the simple model.

/** A script of a contextual model: its reply follows `after` when the context is in `mode`. */
export interface ContextualScript {
  /**
   * The mode (see ContextualSpec.modes) in which the script runs; undefined: no trigger present
   * (and, where modes decide, any mode no script names there).
   */
  readonly mode?: string;
  readonly after: string | readonly string[];
  readonly reply: string | readonly string[];
  /**
   * After the reply: `</s>`, `<|im_end|>`, or "continue": the last piece's successor comes from
   * another script whose `after` ends with it (typically in the mode that piece triggers).
   */
  readonly end: "eos" | "im_end" | "continue" | (string & {});
}

export interface ContextualSpec {
  readonly name: string;
  readonly chatTemplate: string;
  readonly architecture: Architecture;
  /** A family's real tokenizer (family-vocab.ts); the project's own small one when not given. */
  readonly vocabulary?: FamilyVocabSpec;
  /** Pieces that are single USER_DEFINED tokens (matched in any text, decoded as text). */
  readonly userDefined: readonly string[];
  /**
   * Modes by increasing priority: the highest one whose trigger token is in the context wins. A
   * trigger is a user-defined token or a text piece (spaces as spaces, e.g. " cities"), which
   * then joins the vocabulary.
   */
  readonly modes: readonly { readonly name: string; readonly trigger: string }[];
  readonly scripts: readonly ContextualScript[];
  /**
   * Text pieces with a small logit everywhere, so that where a grammar forbids the scripted token
   * the sampler picks one of these over the other allowed tokens.
   */
  readonly preferred?: readonly string[];
  readonly contextLength?: number;
}

export interface BuiltContextualScript extends Omit<BuiltScript, "end"> {
  readonly mode: string | undefined;
  readonly end: ContextualScript["end"];
}

/** A successor decided by context: when `token` follows `previous` (undefined: none of the known ones) in `mode`. */
export interface ContextRule {
  readonly token: string;
  readonly previous: string | undefined;
  /** Undefined: any mode; a name: that mode; `except`: any mode but these (or none). */
  readonly mode: string | { readonly except: readonly string[] } | undefined;
  readonly next: string;
}

export interface ContextualModel extends Omit<ScriptedModel, "scripts"> {
  readonly scripts: readonly BuiltContextualScript[];
  readonly rules: readonly ContextRule[];
}

/** Per-pair amplitude of the previous-token head's score (gap to the runner-up ≥ 0.46 of it). */
const PREVIOUS_SCORE = 40;
/** Pairs of the previous-token head, at least: angles 1 … 2^-12 per position. */
const PREVIOUS_PAIRS = 13;

/**
 * Pairs of the previous-token head for a context: all the pairs line up again after 2π·2^(P−1)
 * positions (then a token that far back scores like the previous one), so the slowest pair's
 * period must exceed the context by half again; 13 pairs up to 4,096 positions, 16 up to 131,072.
 */
export function previousPairs(contextLength: number): number {
  let pairs = PREVIOUS_PAIRS;
  while (2 * Math.PI * 2 ** (pairs - 1) <= 1.5 * contextLength) pairs++;
  return pairs;
}
/** Score of the lowest-priority mode trigger, and the step between priorities. */
const MODE_SCORE = 20;
const MODE_SCORE_STEP = 15;
/** Scale of the rule units' gates, and the value a firing rule writes into its target dimension. */
const RULE_GATE = 4;
const RULE_VALUE = 12;
/** Logits: a direct successor (with two active dimensions), a rule's target, a preferred piece. */
const DIRECT_LOGIT = 100;
const RULE_LOGIT = 150;
const CONTEXT_PREFERRED_LOGIT = 25;
const HEAD_DIM = 64;

/** Where RoPE pair `i` of a head lives: NEOX (qwen2) pairs i with i + n/2, NORM (llama) 2i with 2i + 1. */
function ropePair(architecture: Architecture, i: number, n: number): [number, number] {
  return architecture === "qwen2" ? [i, i + n / 2] : [2 * i, 2 * i + 1];
}

type Transition = {
  readonly previous: number | undefined;
  readonly mode: string | undefined;
  readonly next: number;
  readonly origin: string;
};

type Fail = (message: string) => never;
type Rule = { token: number; previous: number | undefined; mode: ContextRule["mode"]; next: number };

/** The vocabulary before the scripts: user-defined tokens, preferred pieces, mode triggers. */
function contextualVocab(
  spec: ContextualSpec,
  fail: Fail,
): { vocab: ScriptVocab; modeNames: string[]; triggerPiece: (trigger: string) => Piece } {
  const vocab = spec.vocabulary === undefined ? new VocabBuilder() : familyVocab(spec.vocabulary);
  for (const piece of spec.userDefined) vocab.addUserDefined(piece);
  try {
    for (const text of spec.preferred ?? []) vocab.addText(vocab.piece(text));
  } catch (e) {
    fail(`a preferred piece: ${(e as Error).message}`);
  }
  const modeNames = spec.modes.map((m) => m.name);
  if (new Set(modeNames).size !== modeNames.length) fail("two modes have the same name");
  const triggerPiece = (trigger: string): Piece => vocab.piece(trigger);
  for (const m of spec.modes) {
    if (m.trigger.length === 0) fail(`the trigger of mode "${m.name}" is empty`);
    try {
      vocab.addText(triggerPiece(m.trigger));
    } catch (e) {
      fail(`the trigger of mode "${m.name}": ${(e as Error).message}`);
    }
  }
  return { vocab, modeNames, triggerPiece };
}

/** Every transition of every script, by current token, and the scripts as built. */
function scriptTransitions(
  spec: ContextualSpec,
  vocab: ScriptVocab,
  modeNames: readonly string[],
  fail: Fail,
): { transitions: Map<number, Transition[]>; built: BuiltContextualScript[] } {
  const transitions = new Map<number, Transition[]>();
  const built: BuiltContextualScript[] = spec.scripts.map((script, index) => {
    const label =
      `script ${index + 1} (after ` +
      `${JSON.stringify(script.after)}${script.mode === undefined ? "" : `, mode ${script.mode}`})`;
    if (script.mode !== undefined && !modeNames.includes(script.mode)) fail(`${label}: unknown mode`);
    const { trigger, reply } = scriptPieces(script, vocab, label, fail);
    let endId: number | undefined;
    try {
      endId = script.end === "continue" ? undefined : vocab.endId(script.end);
    } catch (e) {
      fail(`${label}: ${(e as Error).message}`);
    }
    if (endId === undefined && reply.length === 0) fail(`${label}: "continue" needs a reply`);
    const chain = [...[trigger, ...reply].map((p) => vocab.id(p)), ...(endId === undefined ? [] : [endId])];
    for (let i = 0; i + 1 < chain.length; i++) {
      const from = chain[i] as number;
      const list = transitions.get(from) ?? [];
      list.push({
        previous: i === 0 ? undefined : chain[i - 1],
        mode: script.mode,
        next: chain[i + 1] as number,
        origin: label,
      });
      transitions.set(from, list);
    }
    return {
      after: script.after,
      mode: script.mode,
      trigger: vocab.show(trigger),
      pieces: [...reply.map((p) => vocab.show(p)), ...(endId === undefined ? [] : [vocab.text(endId)])],
      tokenIds: chain.slice(1),
      end: script.end,
    };
  });
  return { transitions, built };
}

/**
 * The rules of `token` after `previous` when its successor differs by mode: one per mode whose
 * successor is not the default (that without a mode, else the first script's), then the default
 * for every other mode.
 */
function modeRules(
  token: number,
  previous: number | undefined,
  group: readonly Transition[],
  name: (id: number | undefined) => string,
  fail: Fail,
): Rule[] {
  const rules: Rule[] = [];
  const byMode = new Map<string | undefined, Transition>();
  for (const t of group) {
    const known = byMode.get(t.mode);
    if (known && known.next !== t.next) {
      fail(
        `token ${name(token)} after ${name(previous)} would need two successors: ${name(known.next)} ` +
          `(${known.origin}) ` +
          `and ${name(t.next)} (${t.origin})`,
      );
    }
    byMode.set(t.mode, t);
  }
  // The default: the successor without a mode, else the first script's.
  const fallback = (byMode.get(undefined) ?? group[0])?.next as number;
  const except: string[] = [];
  for (const [mode, t] of byMode) {
    if (mode === undefined || t.next === fallback) continue;
    except.push(mode);
    rules.push({ token, previous, mode, next: t.next });
  }
  rules.push({ token, previous, mode: { except }, next: fallback });
  return rules;
}

/** Direct successors where every context agrees; rules where the previous token or the mode decide. */
function successorRules(
  transitions: ReadonlyMap<number, Transition[]>,
  name: (id: number | undefined) => string,
  fail: Fail,
): { direct: Map<number, number>; rules: Rule[] } {
  const direct = new Map<number, number>();
  const rules: Rule[] = [];
  for (const [token, list] of transitions) {
    const nexts = new Set(list.map((t) => t.next));
    if (nexts.size === 1) {
      direct.set(token, list[0]?.next as number);
      continue;
    }
    const byPrevious = new Map<number | undefined, Transition[]>();
    for (const t of list) byPrevious.set(t.previous, [...(byPrevious.get(t.previous) ?? []), t]);
    for (const [previous, group] of byPrevious) {
      if (new Set(group.map((t) => t.next)).size === 1) {
        rules.push({ token, previous, mode: undefined, next: group[0]?.next as number });
        continue;
      }
      rules.push(...modeRules(token, previous, group, name, fail));
    }
  }
  return { direct, rules };
}

/** Which residual dimension holds what (see above), in the order they are given out. */
interface Dimensions {
  readonly count: number;
  readonly constDim: number;
  readonly otherDim: number;
  readonly tokenDim: ReadonlyMap<number, number>;
  readonly modeTriggers: readonly number[];
  readonly previousTokens: readonly number[];
  readonly previousDim: ReadonlyMap<number, number>;
  readonly modeDim: ReadonlyMap<string, number>;
  readonly targetDim: ReadonlyMap<number, number>;
}

function contextDimensions(
  modes: { readonly modeNames: readonly string[]; readonly modeTriggers: readonly number[] },
  transitions: ReadonlyMap<number, Transition[]>,
  rules: readonly Rule[],
  fail: Fail,
): Dimensions {
  const dims = new Map<string, number>();
  const dim = (key: string): number => {
    let at = dims.get(key);
    if (at === undefined) {
      at = dims.size;
      dims.set(key, at);
    }
    return at;
  };
  const constDim = dim("const");
  const otherDim = dim("other");
  const tokenDim = new Map<number, number>();
  const ensureToken = (id: number): number => {
    let at = tokenDim.get(id);
    if (at === undefined) {
      at = dim(`token:${id}`);
      tokenDim.set(id, at);
    }
    return at;
  };
  for (const [token, list] of transitions) {
    ensureToken(token);
    for (const t of list) if (t.previous !== undefined) ensureToken(t.previous);
  }
  const { modeNames, modeTriggers } = modes;
  for (const id of modeTriggers) ensureToken(id);
  const previousTokens = [...new Set(rules.flatMap((r) => (r.previous === undefined ? [] : [r.previous])))];
  const previousDim = new Map(previousTokens.map((id) => [id, dim(`previous:${id}`)]));
  const modeDim = new Map(modeNames.map((m) => [m, dim(`mode:${m}`)]));
  const targets = [...new Set(rules.map((r) => r.next))];
  const targetDim = new Map(targets.map((id) => [id, dim(`target:${id}`)]));
  if (previousTokens.length > HEAD_DIM || modeNames.length > HEAD_DIM) fail("too many previous tokens or modes");
  return {
    count: dims.size,
    constDim,
    otherDim,
    tokenDim,
    modeTriggers,
    previousTokens,
    previousDim,
    modeDim,
    targetDim,
  };
}

/**
 * Attention (ggml matrices: `m[out * in + in_index]`). Head 0: the previous position, score
 * = Σ_i s²·a²·cos((δ − 1)·θ_i) / sqrt(HEAD_DIM). Head 1: the mode, on the last pair (still).
 */
function attentionWeights(
  spec: ContextualSpec,
  at: Dimensions,
  modeNames: readonly string[],
  d: number,
  s: number,
  contextLength: number,
) {
  const q = new Float32Array(d * d);
  const k = new Float32Array(d * d);
  const v = new Float32Array(d * d);
  const o = new Float32Array(d * d);
  const a = Math.sqrt((PREVIOUS_SCORE * Math.sqrt(HEAD_DIM)) / (s * s));
  for (let i = 0; i < previousPairs(contextLength); i++) {
    const [x, y] = ropePair(spec.architecture, i, HEAD_DIM);
    const theta = 2 ** -i;
    q[x * d + at.constDim] = a;
    k[x * d + at.constDim] = a * Math.cos(theta);
    k[y * d + at.constDim] = a * Math.sin(theta);
  }
  at.previousTokens.forEach((id, j) => {
    v[j * d + (at.tokenDim.get(id) as number)] = 1 / s;
    o[(at.previousDim.get(id) as number) * d + j] = 1;
  });
  const [still] = ropePair(spec.architecture, HEAD_DIM / 2 - 1, HEAD_DIM);
  q[(HEAD_DIM + still) * d + at.constDim] = 1;
  at.modeTriggers.forEach((id, m) => {
    const score = MODE_SCORE + MODE_SCORE_STEP * m;
    k[(HEAD_DIM + still) * d + (at.tokenDim.get(id) as number)] = (score * Math.sqrt(HEAD_DIM)) / (s * s);
    v[(HEAD_DIM + m) * d + (at.tokenDim.get(id) as number)] = 1 / s;
    o[(at.modeDim.get(modeNames[m] as string) as number) * d + HEAD_DIM + m] = 1;
  });
  return { q, k, v, o };
}

/**
 * Feed-forward: one unit per rule. Every active dimension is ≈ 1 before the norm, so after it
 * they are all equal (s'); gate = G·s'·(Σ on − Σ off − (|on| − ½)) is +½·G·s' when the rule
 * holds and ≤ −½·G·s' otherwise.
 */
function feedForwardWeights(rules: readonly Rule[], at: Dimensions, d: number, ff: number) {
  const gate = new Float32Array(d * ff);
  const up = new Float32Array(d * ff);
  const down = new Float32Array(ff * d);
  // The unit's output ≈ ½·G·s'²·D with s'² between d/4 and d/2: aim at RULE_VALUE for s'² = d/3.
  const downWeight = RULE_VALUE / (0.5 * RULE_GATE * (d / 3));
  rules.forEach((rule, u) => {
    const on = [at.tokenDim.get(rule.token) as number];
    const off: number[] = [];
    if (rule.previous === undefined) off.push(...at.previousDim.values());
    else on.push(at.previousDim.get(rule.previous) as number);
    if (typeof rule.mode === "string") on.push(at.modeDim.get(rule.mode) as number);
    else if (rule.mode !== undefined) off.push(...rule.mode.except.map((m) => at.modeDim.get(m) as number));
    for (const x of on) gate[u * d + x] = RULE_GATE;
    for (const x of off) gate[u * d + x] = -RULE_GATE;
    gate[u * d + at.constDim] = -(on.length - 0.5) * RULE_GATE;
    up[u * d + at.constDim] = 1;
    down[(at.targetDim.get(rule.next) as number) * ff + u] = downWeight;
  });
  return { gate, up, down };
}

/**
 * Every embedding: its token's (or the shared) dimension and the constant, so the norms scale
 * every position alike: s = sqrt(d / 2). Output: a direct successor from the token's dimension
 * (normalized to s when only it and the constant are on); a rule's target from its dimension
 * (≈ sqrt(d) when it dominates the norm).
 */
function contextualEnds(
  spec: ContextualSpec,
  vocab: ScriptVocab,
  at: Dimensions,
  direct: ReadonlyMap<number, number>,
  d: number,
  s: number,
) {
  const n = vocab.size;
  const embedding = new Float32Array(d * n);
  for (let id = 0; id < n; id++) {
    embedding[id * d + (at.tokenDim.get(id) ?? at.otherDim)] = 1;
    embedding[id * d + at.constDim] = 1;
  }
  const output = new Float32Array(d * n);
  for (const [token, next] of direct) output[next * d + (at.tokenDim.get(token) as number)] = DIRECT_LOGIT / s;
  for (const [id, dimension] of at.targetDim) output[id * d + dimension] = RULE_LOGIT / Math.sqrt(d);
  for (const text of spec.preferred ?? [])
    output[vocab.id(vocab.piece(text)) * d + at.constDim] = CONTEXT_PREFERRED_LOGIT / s;
  return { embedding, output };
}

/** The tensors in llama.cpp's order: the layer's matrices, the embedding and output, norms of ones. */
function contextualTensors(
  shape: LlamaShape,
  n: number,
  layer: ReadonlyMap<string, Float32Array>,
  embedding: Float32Array,
  output: Float32Array,
  wide: "F32" | "F16" = "F32",
  matrices: "F32" | "F16" = "F32",
): Tensor[] {
  const half = (data: Float32Array): Uint16Array => {
    const out = new Uint16Array(data.length);
    for (let i = 0; i < data.length; i++) if (data[i] !== 0) out[i] = toFloat16Bits(data[i] as number);
    return out;
  };
  const table = (name: string, slotShape: readonly number[], data: Float32Array): Tensor =>
    wide === "F32"
      ? { name, shape: slotShape, type: "F32", data }
      : { name, shape: slotShape, type: "F16", data: half(data) };
  return llamaTensorSlots(shape, n).map((slot) => {
    const data = layer.get(slot.name.replace(/^blk\.0\./, ""));
    if (data !== undefined) return { name: slot.name, shape: slot.shape, type: "F32", data };
    switch (slot.role) {
      case "embedding":
        return table(slot.name, slot.shape, embedding);
      case "output":
        return table(slot.name, slot.shape, output);
      case "norm":
        return onesTensor(slot);
      case "matrix":
        if (matrices === "F16")
          return { name: slot.name, shape: slot.shape, type: "F16", data: new Uint16Array(sizeOf(slot.shape)) };
        return { name: slot.name, shape: slot.shape, type: "F32", data: new Float32Array(sizeOf(slot.shape)) };
    }
    throw new Error(`unknown tensor role ${slot.role satisfies never}`);
  });
}

/**
 * Builds a contextual scripted model; throws if a token would need two successors after the same
 * previous token in the same mode.
 */
export function buildContextualModel(spec: ContextualSpec): ContextualModel {
  const fail = (message: string): never => {
    throw new Error(`scripted model "${spec.name}": ${message}`);
  };
  const { vocab, modeNames, triggerPiece } = contextualVocab(spec, fail);
  const { transitions, built } = scriptTransitions(spec, vocab, modeNames, fail);
  const name = (id: number | undefined): string =>
    id === undefined ? "(start)" : JSON.stringify(vocab.show(vocab.text(id)));
  built.forEach((script, index) => {
    const last = script.tokenIds.at(-1) as number;
    if (script.end === "continue" && !transitions.has(last))
      fail(`script ${index + 1} continues after ${name(last)}, which no script continues`);
  });
  const { direct, rules } = successorRules(transitions, name, fail);
  const modeTriggers = spec.modes.map((m) => vocab.id(triggerPiece(m.trigger)));
  if (new Set(modeTriggers).size !== modeTriggers.length) fail("two modes have the same trigger");
  const at = contextDimensions({ modeNames, modeTriggers }, transitions, rules, fail);

  const heads = Math.max(2, Math.ceil(at.count / HEAD_DIM));
  const d = heads * HEAD_DIM;
  const ff = Math.max(16, Math.ceil(rules.length / 16) * 16);
  const shape: LlamaShape = {
    contextLength: spec.contextLength ?? 4096,
    embedding: d,
    blocks: 1,
    feedForward: ff,
    heads,
    headsKv: heads,
    rmsEpsilon: 1e-5,
  };
  const n = vocab.size;
  const s = Math.sqrt(d / 2);
  const { embedding, output } = contextualEnds(spec, vocab, at, direct, d, s);
  const { q, k, v, o } = attentionWeights(spec, at, modeNames, d, s, shape.contextLength);
  const { gate, up, down } = feedForwardWeights(rules, at, d, ff);
  const layer = new Map<string, Float32Array>([
    ["attn_q.weight", q],
    ["attn_k.weight", k],
    ["attn_v.weight", v],
    ["attn_output.weight", o],
    ["ffn_gate.weight", gate],
    ["ffn_up.weight", up],
    ["ffn_down.weight", down],
  ]);
  // A family's vocabulary is large (150,000–260,000 tokens): its embedding and output are F16, exact for these weights.
  const own = vocab instanceof VocabBuilder;
  const tensors = contextualTensors(shape, n, layer, embedding, output, own ? "F32" : "F16");
  const metadata = own
    ? llamaMetadata(spec.name, shape, vocab.entries, spec.chatTemplate, "F32", spec.architecture)
    : [
        ...architectureMetadata(spec.name, shape, n, "F16", spec.architecture),
        ...(vocab as FamilyVocab).tokenizerMetadata(),
        ["tokenizer.chat_template", meta.str(spec.chatTemplate)] as const,
      ];
  // Pair i turns by 2^-i radians per position: base^(-2/n_rot) = 1/2.
  metadata.push([`${spec.architecture}.rope.freq_base`, meta.f32(2 ** (HEAD_DIM / 2))]);
  const parameters = tensors.reduce((sum, t) => sum + t.data.length, 0);
  const piece = (id: number): string => vocab.show(vocab.text(id));
  const shownRules = rules.map((r) => ({
    token: piece(r.token),
    previous: r.previous === undefined ? undefined : piece(r.previous),
    mode: r.mode,
    next: piece(r.next),
  }));
  const entries = own ? vocab.entries : (vocab as FamilyVocab).entries();
  return { file: { metadata, tensors }, vocab: entries, scripts: built, shape, parameters, rules: shownRules };
}
