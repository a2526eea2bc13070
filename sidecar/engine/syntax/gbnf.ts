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

const SLOTS = {
  index: "[0-9]+",
  id: "[A-Za-z0-9_-]+",
  word: "[A-Za-z_]+",
  key: "[A-Za-z0-9_-]+",
  skip: '[^\\n<"]*',
} as const;

/** `p` as a GBNF sequence: its text as written, its slots as character classes ("" for an empty pattern). */
export function patternGbnf(p: Pattern | undefined): string {
  if (p === undefined) return "";
  return p.parts.map((part) => ("slot" in part ? SLOTS[part.slot] : gbnfLiteral(part.text))).join(" ");
}

const WORD = /[A-Za-z0-9-]/;
/** Where a quoted string, character class, repetition count or comment starting at `at` ends (exclusive). */
function skipped(text: string, at: number): number {
  const close = { '"': '"', "[": "]", "{": "}", "#": "\n" }[text[at] as string];
  if (close === undefined) return at;
  let i = at + 1;
  while (i < text.length && text[i] !== close) i += text[i] === "\\" && close !== "\n" ? 2 : 1;
  return i + 1;
}

/**
 * A GBNF grammar's rules renamed `<prefix>-<name>` (its root `<prefix>-root`), so that several
 * grammars can join one: references are renamed where they are rule names, never inside strings,
 * character classes, repetition counts or comments.
 */
export function prefixedRules(gbnf: string, prefix: string): string {
  const names = new Set([...gbnf.matchAll(/^([A-Za-z0-9-]+)\s*::=/gm)].map((m) => m[1] as string));
  let out = "";
  let i = 0;
  while (i < gbnf.length) {
    const end = skipped(gbnf, i);
    if (end > i) {
      out += gbnf.slice(i, end);
      i = end;
    } else if (WORD.test(gbnf[i] as string)) {
      let j = i;
      while (j < gbnf.length && WORD.test(gbnf[j] as string)) j++;
      const word = gbnf.slice(i, j);
      out += names.has(word) ? `${prefix}-${word}` : word;
      i = j;
    } else {
      out += gbnf[i];
      i++;
    }
  }
  return out;
}
