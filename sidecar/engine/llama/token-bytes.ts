// The raw bytes of single tokens, read from the vocabulary (`TokenBytes`).
import type { LlamaModel, Token } from "node-llama-cpp";
import { vocabularyEntry } from "./llama-internals.js";

const encoder = new TextEncoder();

/**
 * The raw bytes of single tokens. A token may hold part of a UTF-8 character, which its decoded
 * text cannot show (it becomes U+FFFD), so such tokens are read from the vocabulary entry:
 * SentencePiece byte tokens (`<0xF0>`) and byte-level BPE pieces (bytes mapped to printable
 * code points) both carry their exact bytes.
 */
export class TokenBytes {
  readonly #model: LlamaModel;
  readonly #cache = new Map<Token, Uint8Array>();

  constructor(model: LlamaModel) {
    this.#model = model;
  }

  of(token: Token): Uint8Array {
    let bytes = this.#cache.get(token);
    if (bytes === undefined) {
      bytes = this.#read(token);
      if (this.#cache.size < 65_536) this.#cache.set(token, bytes);
    }
    return bytes;
  }

  #read(token: Token): Uint8Array {
    const text = this.#model.detokenize([token], false);
    if (!text.includes("\uFFFD")) return encoder.encode(text);
    const entry = vocabularyEntry(this.#model, token);
    if (entry === undefined) return encoder.encode(text);
    const byteToken = /^<0x([0-9A-Fa-f]{2})>$/.exec(entry);
    if (byteToken?.[1] !== undefined) return Uint8Array.of(Number.parseInt(byteToken[1], 16));
    return byteLevelDecode(entry) ?? encoder.encode(text);
  }
}

let unicodeToByte: Map<number, number> | undefined;

/** Byte-level BPE writes each byte as a printable code point; this reverses that mapping. */
function byteLevelDecode(entry: string): Uint8Array | undefined {
  if (unicodeToByte === undefined) {
    unicodeToByte = new Map();
    let next = 256;
    for (let b = 0; b < 256; b++) {
      const printable = (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
      unicodeToByte.set(printable ? b : next++, b);
    }
  }
  const out: number[] = [];
  for (const ch of entry) {
    const b = unicodeToByte.get(ch.codePointAt(0) ?? -1);
    if (b === undefined) return undefined;
    out.push(b);
  }
  return Uint8Array.from(out);
}
