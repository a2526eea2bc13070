// A family's real tokenizer for a twin: one of llama.cpp's `ggml-vocab-*.gguf` files (read from the
// source node-llama-cpp ships, llama-source.ts), with the added tokens a later release of the family
// put in slots the file still has as placeholders (Qwen2's `[PAD151657]` is Qwen3's `<tool_call>`),
// and the family's end-of-turn token as EOS. A scripted reply is cut into this vocabulary's tokens:
// special tokens whole, the rest by the longest token at each place.
import { llamaVocab } from "./llama-source.js";
import { TOKEN_TYPE, type VocabEntry } from "./llama.js";
import { hfTokenizerMetadata, type HfTokenizerSpec } from "./hf-tokenizer.js";
import { readGgufMetadata } from "./reader.js";
import { meta, type MetadataValue } from "./writer.js";

/** A token as the vocabulary stores it (byte-level text for BPE vocabularies, "▁" for spaces in SentencePiece ones). */
export type Piece = string;

/** What the scripted builders need of a vocabulary (the project's own, or a family's). */
export interface ScriptVocab {
  readonly size: number;
  /** Pieces matched whole in any text (user-defined and control tokens). */
  readonly special: ReadonlySet<Piece>;
  /**
   * The pieces of a text (cut by the vocabulary's rule) or of explicit pieces (each kept apart, and cut where it is no
   * one token).
   */
  pieces(text: string | readonly string[]): Piece[];
  /** The piece of a trigger or preferred text. */
  piece(text: string): Piece;
  /** Makes sure the piece is a token (the project's vocabulary adds it; a real one must hold it). */
  addText(piece: Piece): void;
  addUserDefined(piece: Piece): void;
  id(piece: Piece): number;
  /** The token a script ends with: "eos", "im_end" (`<|im_end|>`), or a special token's text. */
  endId(end: string): number;
  /** A piece as text. */
  show(piece: Piece): string;
  /** The token's piece. */
  text(id: number): Piece;
}

/** A twin's vocabulary: the file, placeholder slots renamed, the end of a turn. */
export interface FamilyVocabSpec {
  /**
   * `ggml-vocab-<file>.gguf`, or a Hugging Face `tokenizer.json` (hf-tokenizer.ts) where llama.cpp's source has none.
   */
  readonly file: string | HfTokenizerSpec;
  /** Slots renamed to the family's added tokens: id → [text, token type]. */
  readonly added?: Readonly<Record<number, readonly [string, number]>>;
  /** The token that ends the family's turn, as the family's own GGUFs give `eos_token_id`. */
  readonly eos?: string;
}

/** GPT-2's byte-level alphabet: every byte a printable character. */
function byteAlphabet(): string[] {
  const out: string[] = new Array(256);
  let next = 256;
  for (let b = 0; b < 256; b++) {
    const printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174;
    out[b] = String.fromCodePoint(printable ? b : next++);
  }
  return out;
}
const BYTE_CHARS = byteAlphabet();
const CHAR_BYTES = new Map(BYTE_CHARS.map((c, b) => [c, b]));
const LONGEST = 32;

export class FamilyVocab implements ScriptVocab {
  readonly special = new Set<Piece>();
  private readonly tokens: string[];
  private readonly types: number[];
  private readonly ids = new Map<string, number>();
  private readonly byteLevel: boolean;
  private readonly eosId: number;

  constructor(
    private readonly metadata: Map<string, MetadataValue>,
    spec: FamilyVocabSpec,
  ) {
    const array = (key: string) => {
      const value = metadata.get(key);
      if (value?.type !== "array") throw new Error(`the ${vocabName(spec)} vocabulary has no ${key}`);
      return [...value.values] as never[];
    };
    this.tokens = array("tokenizer.ggml.tokens");
    this.types = array("tokenizer.ggml.token_type");
    for (const [id, [text, type]] of Object.entries(spec.added ?? {})) {
      this.tokens[Number(id)] = text;
      this.types[Number(id)] = type;
    }
    this.tokens.forEach((t, i) => {
      if (!this.ids.has(t)) this.ids.set(t, i);
      if (this.types[i] === TOKEN_TYPE.control || this.types[i] === TOKEN_TYPE.userDefined) this.special.add(t);
    });
    this.byteLevel =
      metadata.get("tokenizer.ggml.model")?.type === "string" &&
      (metadata.get("tokenizer.ggml.model") as { value: string }).value === "gpt2";
    const eos = metadata.get("tokenizer.ggml.eos_token_id");
    this.eosId = spec.eos !== undefined ? this.id(spec.eos) : Number(eos?.type === "uint32" ? eos.value : Number.NaN);
  }

  get size(): number {
    return this.tokens.length;
  }

  private encode(text: string): string {
    if (!this.byteLevel) return text.replaceAll(" ", "\u2581");
    return [...new TextEncoder().encode(text)].map((b) => BYTE_CHARS[b]).join("");
  }

  /** The longest normal token at each place; SentencePiece vocabularies fall back to byte tokens. */
  private cut(encoded: string): Piece[] {
    const chars = [...encoded];
    const out: Piece[] = [];
    for (let i = 0; i < chars.length; ) {
      let taken = 0;
      for (let j = Math.min(chars.length, i + LONGEST); j > i && taken === 0; j--) {
        const piece = chars.slice(i, j).join("");
        const id = this.ids.get(piece);
        if (id !== undefined && this.types[id] === TOKEN_TYPE.normal) {
          out.push(piece);
          taken = j - i;
        }
      }
      if (taken === 0) {
        const bytes = [...new TextEncoder().encode(chars[i])].map(
          (b) => `<0x${b.toString(16).toUpperCase().padStart(2, "0")}>`,
        );
        for (const b of bytes) if (!this.ids.has(b)) throw new Error(`no token for ${JSON.stringify(chars[i])}`);
        out.push(...bytes);
        taken = 1;
      }
      i += taken;
    }
    return out;
  }

  pieces(text: string | readonly string[]): Piece[] {
    if (typeof text === "string")
      return this.splitSpecial(text).flatMap((part) => (this.special.has(part) ? [part] : this.cut(this.encode(part))));
    return text.flatMap((p) => {
      if (this.special.has(p)) return [p];
      const encoded = this.encode(p);
      return this.ids.has(encoded) ? [encoded] : this.pieces(p);
    });
  }

  /** A text cut before and after the special tokens it holds (longest first). */
  private splitSpecial(text: string): string[] {
    this.specialPattern ??= new RegExp(
      `(${[...this.special]
        .sort((x, y) => y.length - x.length)
        .map((t) => t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
        .join("|")})`,
    );
    return text.split(this.specialPattern).filter((part) => part.length > 0);
  }
  private specialPattern: RegExp | undefined;

  piece(text: string): Piece {
    if (this.special.has(text)) return text;
    const encoded = this.encode(text);
    if (!this.ids.has(encoded)) throw new Error(`${JSON.stringify(text)} is not one token of this vocabulary`);
    return encoded;
  }

  addText(piece: Piece): void {
    this.id(piece);
  }

  addUserDefined(piece: Piece): void {
    if (!this.special.has(piece)) throw new Error(`${JSON.stringify(piece)} is not a special token of this vocabulary`);
  }

  id(piece: Piece): number {
    const id = this.ids.get(piece);
    if (id === undefined) throw new Error(`${JSON.stringify(piece)} is not a token of this vocabulary`);
    return id;
  }

  endId(end: string): number {
    return end === "eos" ? this.eosId : this.id(end === "im_end" ? "<|im_end|>" : end);
  }

  text(id: number): Piece {
    return this.tokens[id] ?? "?";
  }

  /** Every token, as the project's vocabulary lists its own. */
  entries(): VocabEntry[] {
    return this.tokens.map((piece, i) => ({ piece, score: 0, type: this.types[i] ?? TOKEN_TYPE.normal }));
  }

  show(piece: Piece): string {
    return this.decode([this.id(piece)]);
  }

  /** Tokens as text, their bytes joined first (a character may span byte-level tokens). */
  decode(ids: readonly number[]): string {
    const bytes: number[] = [];
    const encoder = new TextEncoder();
    for (const id of ids) {
      const piece = this.text(id);
      const byte = /^<0x([0-9A-F]{2})>$/.exec(piece);
      if (this.special.has(piece) || (!this.byteLevel && byte === null))
        bytes.push(...encoder.encode(this.special.has(piece) ? piece : piece.replaceAll("\u2581", " ")));
      else if (byte !== null && !this.byteLevel) bytes.push(Number.parseInt(byte[1] as string, 16));
      else for (const c of piece) bytes.push(CHAR_BYTES.get(c) ?? 0x3f);
    }
    return new TextDecoder().decode(Uint8Array.from(bytes));
  }

  /** The file's tokenizer metadata with the renamed slots and the family's EOS (its chat templates left out). */
  tokenizerMetadata(): Array<readonly [string, MetadataValue]> {
    const out: Array<readonly [string, MetadataValue]> = [];
    for (const [key, value] of this.metadata) {
      if (!key.startsWith("tokenizer.") || key.startsWith("tokenizer.chat_template")) continue;
      if (key === "tokenizer.ggml.tokens") out.push([key, meta.strings(this.tokens)]);
      else if (key === "tokenizer.ggml.token_type") out.push([key, meta.i32s(this.types)]);
      else if (key === "tokenizer.ggml.eos_token_id") out.push([key, meta.u32(this.eosId)]);
      else out.push([key, value]);
    }
    if (!this.metadata.has("tokenizer.ggml.eos_token_id"))
      out.push(["tokenizer.ggml.eos_token_id", meta.u32(this.eosId)]);
    return out;
  }
}

const vocabName = (spec: FamilyVocabSpec): string => (typeof spec.file === "string" ? spec.file : spec.file.path);

/** The tokenizer metadata of a family's vocabulary file, as it is. */
export function vocabMetadata(spec: FamilyVocabSpec): Map<string, MetadataValue> {
  return typeof spec.file === "string" ? readGgufMetadata(llamaVocab(spec.file)) : hfTokenizerMetadata(spec.file);
}

/** A family's vocabulary from llama.cpp's tokenizer files (or a Hugging Face one). */
export function familyVocab(spec: FamilyVocabSpec): FamilyVocab {
  return new FamilyVocab(vocabMetadata(spec), spec);
}
