// The markers of a reply syntax as patterns matched on streamed text: literal text, in which a run of
// whitespace matches any whitespace (a trailing run: at most itself), and slots for what varies from
// one call to the next (`«index»` a call's number, `«id»` a call id, `«word»` a word, `«key»` the
// argument being read, `«skip»` any short text up to the literal after it).

export type Slot = "index" | "id" | "word" | "key" | "skip";

type Part = { readonly text: string; readonly space: boolean } | { readonly slot: Slot };

export interface Pattern {
  /** The pattern as written, slots included (`:«index»<|tool_call_argument_begin|>`). */
  readonly source: string;
  readonly parts: readonly Part[];
}

/** What the slots of a match held (`«word»`, `«index»`, `«id»`). */
export type Captures = { readonly [slot in "word" | "index" | "id"]?: string };

export type Match =
  | { readonly status: "match"; readonly end: number; readonly captures: Captures }
  | { readonly status: "partial" }
  | { readonly status: "fail" };

const SLOT = /«(index|id|word|key|skip)»/g;
/** The longest text a `«skip»` slot passes over. */
const SKIP_LIMIT = 64;
const CLASSES: Record<Exclude<Slot, "key" | "skip">, RegExp> = {
  index: /[0-9]/,
  id: /[A-Za-z0-9_-]/,
  word: /[A-Za-z_]/,
};

const isSpace = (ch: string): boolean => /\s/.test(ch);

function literalParts(text: string): Part[] {
  return (text.match(/\s+|\S+/g) ?? []).map((run) => ({ text: run, space: isSpace(run[0] as string) }));
}

export function pattern(source: string): Pattern {
  const parts: Part[] = [];
  let last = 0;
  for (const m of source.matchAll(SLOT)) {
    parts.push(...literalParts(source.slice(last, m.index)));
    parts.push({ slot: m[1] as Slot });
    last = m.index + m[0].length;
  }
  parts.push(...literalParts(source.slice(last)));
  return { source, parts };
}

export const patterns = (...sources: string[]): Pattern[] => sources.map(pattern);

/** The pattern with its leading whitespace dropped (a marker found in running text). */
export function trimmedStart(p: Pattern): Pattern {
  const at = p.parts.findIndex((part) => !("space" in part && part.space));
  return { source: p.source.trimStart(), parts: at === -1 ? [] : p.parts.slice(at) };
}

/** Concatenation: every `a` followed by every `b`. */
export function join(a: readonly Pattern[], b: readonly Pattern[]): Pattern[] {
  return a.flatMap((x) => b.map((y) => ({ source: x.source + y.source, parts: [...x.parts, ...y.parts] })));
}

interface Cursor {
  readonly text: string;
  readonly final: boolean;
  readonly key: string;
}

type Step = number | "partial" | "fail";

function literal(part: { text: string; space: boolean }, last: boolean, c: Cursor, at: number): Step {
  const { text } = c;
  if (part.space && !last) {
    let i = at;
    while (i < text.length && isSpace(text[i] as string)) i++;
    return i === text.length && !c.final ? "partial" : i;
  }
  if (part.space) {
    // A trailing run: as much of itself as the text has.
    let n = 0;
    while (n < part.text.length && at + n < text.length && text[at + n] === part.text[n]) n++;
    return at + n === text.length && n < part.text.length && !c.final ? "partial" : at + n;
  }
  for (let n = 0; n < part.text.length; n++) {
    if (at + n >= text.length) return c.final ? "fail" : "partial";
    if (text[at + n] !== part.text[n]) return "fail";
  }
  return at + part.text.length;
}

function slot(kind: Slot, next: Part | undefined, c: Cursor, at: number): Step {
  const { text } = c;
  if (kind === "key") return literal({ text: c.key, space: false }, false, c, at);
  if (kind === "skip") {
    const stop = next !== undefined && "text" in next ? next.text : "";
    const found = stop === "" ? at : text.indexOf(stop, at);
    if (found !== -1 && found - at <= SKIP_LIMIT) return found;
    return text.length - at < SKIP_LIMIT + stop.length && !c.final ? "partial" : "fail";
  }
  let i = at;
  while (i < text.length && CLASSES[kind].test(text[i] as string)) i++;
  if (i === text.length && !c.final) return "partial";
  return i > at ? i : "fail";
}

/** Matches `p` at `at` in `text`; `final`: no more text will come. */
export function matchAt(p: Pattern, text: string, at: number, final: boolean, key = ""): Match {
  const c: Cursor = { text, final, key };
  const captures: { -readonly [slot in keyof Captures]: string } = {};
  let i = at;
  for (let n = 0; n < p.parts.length; n++) {
    const part = p.parts[n] as Part;
    const step = "slot" in part ? slot(part.slot, p.parts[n + 1], c, i) : literal(part, n === p.parts.length - 1, c, i);
    if (step === "partial" || step === "fail") return { status: step };
    if ("slot" in part && (part.slot === "word" || part.slot === "index" || part.slot === "id"))
      captures[part.slot] = text.slice(i, step);
    i = step;
  }
  return { status: "match", end: i, captures };
}

export type AnyMatch =
  | { readonly status: "match"; readonly end: number; readonly index: number; readonly captures: Captures }
  | { readonly status: "partial" }
  | { readonly status: "fail" };

/** The longest match among `alternatives` at `at`, once none of them may still grow into one. */
export function matchAny(
  alternatives: readonly Pattern[],
  text: string,
  at: number,
  final: boolean,
  key = "",
): AnyMatch {
  let best: AnyMatch = { status: "fail" };
  let partial = false;
  alternatives.forEach((p, index) => {
    const m = matchAt(p, text, at, final, key);
    if (m.status === "partial") partial = true;
    else if (m.status === "match" && (best.status !== "match" || m.end > best.end))
      best = { status: "match", end: m.end, index, captures: m.captures };
  });
  return partial ? { status: "partial" } : best;
}

export type Found = { readonly at: number; readonly match: AnyMatch };

/** The first place in `text` where one of `alternatives` matches or may match once more text comes. */
export function findFirst(alternatives: readonly Pattern[], text: string, final: boolean): Found | undefined {
  if (alternatives.length === 0) return undefined;
  const firsts = new Set(alternatives.map((p) => firstChar(p)));
  for (let at = 0; at < text.length; at++) {
    if (!firsts.has(undefined) && !firsts.has(text[at])) continue;
    const match = matchAny(alternatives, text, at, final);
    if (match.status !== "fail") return { at, match };
  }
  return undefined;
}

function firstChar(p: Pattern): string | undefined {
  const [part] = p.parts;
  return part !== undefined && "text" in part && !part.space ? part.text[0] : undefined;
}

/** A pattern's text with its slots filled in (`«index»` by `index`, `«id»` by `id`, `«key»` by `key`). */
export function fill(p: Pattern, values: { index?: number; id?: string; key?: string; word?: string }): string {
  return p.source.replace(SLOT, (_, name: Slot) => {
    if (name === "index") return String(values.index ?? 0);
    if (name === "id") return values.id ?? "";
    if (name === "key") return values.key ?? "";
    if (name === "word") return values.word ?? "";
    return "";
  });
}
