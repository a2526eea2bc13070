// Reply-syntax patterns as GBNF (pattern.ts), for the grammars that keep tool calls well-formed: the
// text is what the template writes, each slot the characters it may hold.
import type { Pattern } from "./pattern.js";

/** A GBNF string literal for `text`. */
export function gbnfLiteral(text: string): string {
  let out = '"';
  for (const ch of text) {
    const code = ch.codePointAt(0) ?? 0;
    if (ch === '"' || ch === "\\") out += `\\${ch}`;
    else if (ch === "\n") out += "\\n";
    else if (ch === "\r") out += "\\r";
    else if (ch === "\t") out += "\\t";
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, "0")}`;
    else out += ch;
  }
  return `${out}"`;
}

const SLOTS = { index: "[0-9]+", id: "[A-Za-z0-9_-]+", word: "[A-Za-z_]+", key: "[A-Za-z0-9_-]+", skip: '[^\\n<"]*' } as const;

/** `p` as a GBNF sequence: its text as written, its slots as character classes ("" for an empty pattern). */
export function patternGbnf(p: Pattern | undefined): string {
  if (p === undefined) return "";
  return p.parts.map((part) => ("slot" in part ? SLOTS[part.slot] : gbnfLiteral(part.text))).join(" ");
}
