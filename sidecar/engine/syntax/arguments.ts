// A call's arguments read as they stream, in the template's own notation, and given out as JSON
// text: JSON as written, tagged pairs (`<parameter=city>\nTokyo\n</parameter>`) and Gemma 4's
// object notation turned into JSON as they go, so argument deltas stream in every family.
import { findFirst, matchAny, trimmedStart, type Pattern } from "./pattern.js";
import type { ArgumentsSyntax } from "./reply-syntax.js";

/** What one push read: JSON text to give out, how much text it used, and whether the arguments ended. */
export interface ArgumentsStep {
  readonly json: string;
  readonly used: number;
  readonly done: boolean;
}

export interface ArgumentsReader {
  /** Reads what it can of `text` (`final`: no more comes); text it does not use is offered again with more. */
  push(text: string, final: boolean): ArgumentsStep;
}

/** Whether a tool's argument is a string, from its JSON schema; undefined when the schema does not say. */
export type ArgumentTypes = (key: string) => "string" | "other" | undefined;

/** A JSON value followed to its end: objects and arrays, strings and escapes. */
class JsonArguments implements ArgumentsReader {
  #depth = 0;
  #inString = false;
  #escaped = false;
  #started = false;

  push(text: string): ArgumentsStep {
    let json = "";
    let i = 0;
    for (; i < text.length; i++) {
      const ch = text[i] as string;
      if (!this.#started && /\s/.test(ch)) continue;
      this.#started = true;
      json += ch;
      if (this.#inString) {
        if (this.#escaped) this.#escaped = false;
        else if (ch === "\\") this.#escaped = true;
        else if (ch === '"') this.#inString = false;
      } else if (ch === '"') this.#inString = true;
      else if (ch === "{" || ch === "[") this.#depth++;
      else if ((ch === "}" || ch === "]") && --this.#depth === 0) return { json, used: i + 1, done: true };
    }
    return { json, used: i, done: false };
  }
}

/** Python's spellings of JSON's constants, as templates that print values with `|string` write them. */
const PYTHON_CONSTANTS: Record<string, string> = { True: "true", False: "false", None: "null" };

const CDATA_OPEN = "<![CDATA[";
const CDATA_CLOSE = "]]>";

/** A value's text without the CDATA section some families wrap text in (`<![CDATA[a < b]]>`). */
function unwrapped(text: string): string {
  const t = text.trim();
  return t.startsWith(CDATA_OPEN) && t.endsWith(CDATA_CLOSE) ? t.slice(CDATA_OPEN.length, -CDATA_CLOSE.length) : text;
}

/**
 * A value's text as JSON: a string when `asString`; else JSON where it parses (or Python's
 * constants; nothing at all is null), or tags of `nested` (objects and `<item>` arrays); else a string.
 */
export function taggedValue(raw: string, asString: boolean | undefined, nested?: string): string {
  const text = unwrapped(raw);
  if (asString === true) return JSON.stringify(text);
  const trimmed = text.trim();
  if (trimmed === "") return "null";
  if (nested !== undefined && trimmed.startsWith(`${nested}<`)) return JSON.stringify(tagTree(trimmed, nested));
  const python = PYTHON_CONSTANTS[trimmed];
  if (python !== undefined) return python;
  try {
    return JSON.stringify(JSON.parse(trimmed));
  } catch {
    return JSON.stringify(text);
  }
}

/** Values written as tags, each tag after the `prefix` marker: `<key>…</key>` members, `<item>…</item>` elements. */
function tagTree(text: string, prefix: string): unknown {
  const tag = new RegExp(`${prefix.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}<(/?)([^<>]+)>`, "g");
  const stack: { name: string; children: [string, unknown][]; text: string }[] = [{ name: "", children: [], text: "" }];
  let last = 0;
  for (const m of text.matchAll(tag)) {
    const top = stack.at(-1) as (typeof stack)[number];
    top.text += text.slice(last, m.index);
    last = m.index + m[0].length;
    if (m[1] === "") stack.push({ name: m[2] as string, children: [], text: "" });
    else if (stack.length > 1) {
      const done = stack.pop() as (typeof stack)[number];
      (stack.at(-1) as (typeof stack)[number]).children.push([done.name, treeValue(done)]);
    }
  }
  return treeValue(stack[0] as (typeof stack)[number]);
}

function treeValue(node: { children: [string, unknown][]; text: string }): unknown {
  if (node.children.length === 0) return node.text.trim() === "" ? {} : JSON.parse(taggedValue(node.text, undefined));
  if (node.children.every(([name]) => name === "item")) return node.children.map(([, value]) => value);
  return Object.fromEntries(node.children);
}

type Tagged = Extract<ArgumentsSyntax, { kind: "tagged" }>;

/**
 * Tagged pairs until the call's closing syntax: `{"key": value, …}`. A string value streams as it
 * comes; another waits for its end, then is given as JSON.
 */
class TaggedArguments implements ArgumentsReader {
  readonly #syntax: Tagged;
  readonly #callClose: readonly Pattern[];
  readonly #types: ArgumentTypes;
  #phase: "between" | "key" | "value" = "between";
  #key = "";
  #value = "";
  #string: boolean | undefined;
  #count = 0;

  constructor(syntax: Tagged, callClose: readonly Pattern[], types: ArgumentTypes) {
    this.#syntax = syntax;
    this.#callClose = callClose.map(trimmedStart);
    this.#types = types;
  }

  push(text: string, final: boolean): ArgumentsStep {
    let json = "";
    let at = 0;
    for (;;) {
      const step = this.#step(text, at, final);
      json += step.json;
      at = step.used;
      if (step.done) return { json, used: at, done: true };
      if (!step.progress) return { json, used: at, done: false };
    }
  }

  #step(text: string, at: number, final: boolean): { json: string; used: number; done: boolean; progress: boolean } {
    if (this.#phase === "key") return this.#readKey(text, at, final);
    if (this.#phase === "value") return this.#readValue(text, at, final);
    let i = at;
    while (i < text.length && /\s/.test(text[i] as string)) i++;
    const close = matchAny(this.#callClose, text, i, final);
    if (close.status === "match" || (final && i === text.length)) {
      return { json: this.#count === 0 ? "{}" : "}", used: i, done: true, progress: true };
    }
    const open = matchAny(this.#syntax.keyOpen.map(trimmedStart), text, i, final);
    // The close may share its start with an argument's opening (`]<]minimax[>[<`): wait until they part.
    if (open.status === "partial" || close.status === "partial")
      return { json: "", used: at, done: false, progress: false };
    if (open.status === "match") {
      this.#phase = "key";
      this.#key = "";
      return { json: "", used: open.end, done: false, progress: true };
    }
    // Neither an argument nor the close: the model left the syntax; the arguments end here.
    return { json: this.#count === 0 ? "{}" : "}", used: i, done: true, progress: true };
  }

  #readKey(text: string, at: number, final: boolean): { json: string; used: number; done: boolean; progress: boolean } {
    const found = findFirst(this.#syntax.keyClose, text.slice(at), final);
    if (found === undefined || found.match.status !== "match") {
      return { json: "", used: at, done: final, progress: false };
    }
    this.#key = text.slice(at, at + found.at);
    const word = found.match.captures.word;
    const type = this.#types(this.#key.trim());
    this.#string =
      type !== undefined
        ? type === "string"
        : word !== undefined && this.#syntax.stringWords !== undefined
          ? this.#syntax.stringWords.includes(word)
          : undefined;
    this.#phase = "value";
    this.#value = "";
    this.#given = 0;
    const json =
      `${this.#count === 0 ? "{" : ", "}${JSON.stringify(this.#key.trim())}: ` + `${this.#string === true ? '"' : ""}`;
    this.#count++;
    return { json, used: at + found.match.end, done: false, progress: true };
  }

  /**
   * The string value's text not given out yet, as JSON string content; a CDATA wrapper and what may begin one held
   * back.
   */
  #stringPart(ended: boolean): string {
    let text = this.#value;
    if (CDATA_OPEN.startsWith(text) && !ended) return "";
    if (text.startsWith(CDATA_OPEN)) {
      text = text.slice(CDATA_OPEN.length);
      if (ended && text.endsWith(CDATA_CLOSE)) text = text.slice(0, -CDATA_CLOSE.length);
      else if (!ended) text = text.slice(0, text.length - Math.min(text.length, CDATA_CLOSE.length));
    }
    const out = text.slice(this.#given);
    this.#given = text.length;
    return JSON.stringify(out).slice(1, -1);
  }

  #given = 0;

  #readValue(
    text: string,
    at: number,
    final: boolean,
  ): { json: string; used: number; done: boolean; progress: boolean } {
    const rest = text.slice(at);
    const found = findFirstKeyed(this.#syntax.valueClose, rest, final, this.#key.trim());
    const end = found === undefined ? rest.length : found.at;
    const piece = rest.slice(0, end);
    const match = found?.match;
    const ended = match !== undefined && match.status === "match";
    this.#value += piece;
    let json = "";
    if (this.#string === true) json = this.#stringPart(ended);
    if (match?.status !== "match") return { json, used: at + end, done: false, progress: piece !== "" };
    if (this.#string === true) json += '"';
    else json += taggedValue(this.#value, this.#string, this.#syntax.nested);
    this.#phase = "between";
    return { json, used: at + match.end, done: false, progress: true };
  }
}

/** findFirst for patterns that name the key being read (`«key»`). */
function findFirstKeyed(alternatives: readonly Pattern[], text: string, final: boolean, key: string) {
  for (let at = 0; at < text.length; at++) {
    const match = matchAny(alternatives, text, at, final, key);
    if (match.status !== "fail") return { at, match };
  }
  return undefined;
}

const GEMMA_QUOTE = '<|"|>';

/** Gemma 4's object notation turned into JSON as it streams: bare keys quoted, `<|"|>` strings escaped. */
class GemmaArguments implements ArgumentsReader {
  #depth = 0;
  #inString = false;
  #inKey = false;
  #started = false;

  push(text: string, final: boolean): ArgumentsStep {
    let json = "";
    let i = 0;
    while (i < text.length) {
      if (text.startsWith(GEMMA_QUOTE, i)) {
        json += '"';
        this.#inString = !this.#inString;
        // A string is the value after a colon: no null to add.
        this.#afterColon = false;
        i += GEMMA_QUOTE.length;
        continue;
      }
      if (!final && GEMMA_QUOTE.startsWith(text.slice(i)) && text[i] === "<") break;
      const ch = text[i] as string;
      i++;
      if (this.#inString) {
        json += JSON.stringify(ch).slice(1, -1);
        continue;
      }
      if (!this.#started && /\s/.test(ch)) continue;
      this.#started = true;
      json += this.#outside(ch);
      if (this.#depth === 0) return { json, used: i, done: true };
    }
    return { json, used: i, done: false };
  }

  /** Open containers, innermost last; a bare word right after `{` or after `,` in an object is a key. */
  readonly #open: string[] = [];
  #keyNext = false;
  #afterColon = false;

  #outside(ch: string): string {
    let out = "";
    if (this.#inKey && !/[A-Za-z0-9_-]/.test(ch)) {
      out += '"';
      this.#inKey = false;
    }
    if (this.#inKey) return ch;
    // A key with nothing after its colon: the template writes null as nothing.
    if (this.#afterColon && !/\s/.test(ch)) {
      this.#afterColon = false;
      if (ch === "," || ch === "}") out += "null";
    }
    if (ch === ":") this.#afterColon = true;
    if (ch === "{" || ch === "[") {
      this.#depth++;
      this.#open.push(ch);
    } else if (ch === "}" || ch === "]") {
      this.#depth--;
      this.#open.pop();
    } else if (/[A-Za-z_]/.test(ch) && this.#keyNext) {
      this.#inKey = true;
      this.#keyNext = false;
      return `${out}"${ch}`;
    }
    if (!/\s/.test(ch)) this.#keyNext = ch === "{" || (ch === "," && this.#open.at(-1) === "{");
    return out + ch;
  }
}

export function argumentsReader(
  syntax: ArgumentsSyntax,
  callClose: readonly Pattern[],
  types: ArgumentTypes,
): ArgumentsReader {
  switch (syntax.kind) {
    case "json":
      return new JsonArguments();
    case "tagged":
      return new TaggedArguments(syntax, callClose, types);
    case "gemma":
      return new GemmaArguments();
  }
}
