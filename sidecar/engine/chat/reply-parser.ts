// Splits a streamed reply into reasoning, content and tool-call fragments, by the template's reply
// syntax (`ReplyParser`).
import { forFunction, namesFunction, type ReplySyntax } from "../llama/reply-syntax.js";

/** A piece of a tool call: `id` and `name` on the first piece of a call, then argument text. */
export interface CallPiece {
  readonly index: number;
  readonly id: string;
  readonly name: string;
  readonly arguments: string;
}

/** What one fragment of reply text adds to each part of the reply, in the order reasoning, content, calls. */
export interface ReplyParts {
  reasoning: string;
  content: string;
  calls: CallPiece[];
}

/**
 * Where the parser is: in the answer, in reasoning, or inside a call (its name, its JSON
 * arguments, the syntax that closes it).
 */
export type ReplyPhase = "content" | "reasoning" | "name" | "arguments" | "suffix";

export interface ParserOptions {
  readonly syntax: ReplySyntax;
  /** Whether calls are parsed at all (the request has tools the model may call). */
  readonly tools: boolean;
  /** Function names the request offers (to find a `paramsPrefix` that names the function). */
  readonly toolNames: readonly string[];
  /** Whether the reply starts inside the reasoning segment (the prompt opened it). */
  readonly startInReasoning: boolean;
  readonly newCallId: () => string;
}

/** The length of the longest suffix of `text` that is a proper prefix of one of `markers`. */
function pendingMarker(text: string, markers: readonly string[]): number {
  let best = 0;
  for (const marker of markers) {
    for (let n = Math.min(marker.length - 1, text.length); n > best; n--) {
      if (text.endsWith(marker.slice(0, n))) {
        best = n;
        break;
      }
    }
  }
  return best;
}

/** The earliest occurrence of any of `markers` in `text`. */
function firstMarker(text: string, markers: readonly string[]): { at: number; marker: string } | undefined {
  let found: { at: number; marker: string } | undefined;
  for (const marker of markers) {
    const at = text.indexOf(marker);
    if (at !== -1 && (found === undefined || at < found.at)) found = { at, marker };
  }
  return found;
}

/**
 * Splits generated text into reasoning, content and tool calls, following the chat template's
 * syntax (../llama/reply-syntax.ts). Text that might begin a marker is held back until it is known;
 * markers never reach any part. Whitespace around markers is dropped: the start of a reasoning
 * segment, and the start of the content after reasoning or after a call.
 *
 * Call arguments are cut out by following the JSON value (objects and arrays, strings and
 * escapes), so argument text streams as it is generated and ends exactly where the value does.
 */
export class ReplyParser {
  readonly #options: ParserOptions;
  readonly #contentMarkers: string[];
  readonly #thoughtEnd: string;
  #phase: ReplyPhase;
  #held = "";
  #trimLeading: boolean;
  /** Text of the current call phase so far (name, or arguments), for the grammar. */
  #phaseText = "";
  #callIndex = -1;
  #callName = "";
  #completedCalls = 0;
  // JSON scanner state for the current arguments.
  #depth = 0;
  #inString = false;
  #escaped = false;

  constructor(options: ParserOptions) {
    this.#options = options;
    const { syntax } = options;
    this.#thoughtEnd = syntax.thought?.suffix.trim() ?? "";
    const markers: string[] = [];
    const thoughtStart = syntax.thought?.prefix?.trim();
    if (thoughtStart) markers.push(thoughtStart);
    if (options.tools) {
      for (const start of [syntax.call.start, ...syntax.call.prefixAlternates]) {
        if (start !== "" && !markers.includes(start)) markers.push(start);
      }
    }
    this.#contentMarkers = markers;
    this.#phase = options.startInReasoning && this.#thoughtEnd !== "" ? "reasoning" : "content";
    this.#trimLeading = this.#phase === "reasoning";
  }

  get phase(): ReplyPhase {
    return this.#phase;
  }

  /** The current call's name (in the arguments and suffix phases). */
  get callName(): string {
    return this.#callName;
  }

  /** Text generated so far in the current phase that no part has taken: held back, or the call's name or arguments so far. */
  get phaseText(): string {
    return this.#phase === "name" || this.#phase === "arguments" ? this.#phaseText : this.#held;
  }

  /** Calls whose syntax was closed. */
  get completedCalls(): number {
    return this.#completedCalls;
  }

  /** Whether the text is inside a call's syntax (its name, arguments or closing). */
  get inCall(): boolean {
    return this.#phase === "name" || this.#phase === "arguments" || this.#phase === "suffix";
  }

  push(fragment: string): ReplyParts {
    const out: ReplyParts = { reasoning: "", content: "", calls: [] };
    if (fragment === "") return out;
    let text = this.#held + fragment;
    this.#held = "";
    // Each pass consumes text or holds it back; phases change only by consuming a marker.
    while (text !== "") text = this.#step(text, out);
    return out;
  }

  /** Whatever is held back when generation ends: reasoning or content as it stood. A call's unfinished name is dropped. */
  flush(): ReplyParts {
    const out: ReplyParts = { reasoning: "", content: "", calls: [] };
    const held = this.#held;
    this.#held = "";
    if (this.#phase === "reasoning") out.reasoning = this.#trimLeading ? held.trimStart() : held;
    else if (this.#phase === "content") out.content = this.#trimLeading ? held.trimStart() : held;
    return out;
  }

  #step(text: string, out: ReplyParts): string {
    switch (this.#phase) {
      case "content":
        return this.#content(text, out);
      case "reasoning":
        return this.#reasoning(text, out);
      case "name":
        return this.#name(text, out);
      case "arguments":
        return this.#arguments(text, out);
      case "suffix":
        return this.#suffix(text);
    }
  }

  #emitContent(text: string, out: ReplyParts): void {
    let t = text;
    if (this.#trimLeading) {
      t = t.trimStart();
      if (t !== "") this.#trimLeading = false;
    }
    out.content += t;
  }

  #content(text: string, out: ReplyParts): string {
    const found = firstMarker(text, this.#contentMarkers);
    if (found === undefined) {
      const keep = pendingMarker(text, this.#contentMarkers);
      this.#emitContent(text.slice(0, text.length - keep), out);
      this.#held = text.slice(text.length - keep);
      return "";
    }
    this.#emitContent(text.slice(0, found.at), out);
    const rest = text.slice(found.at + found.marker.length);
    if (found.marker === this.#options.syntax.thought?.prefix?.trim()) {
      this.#phase = "reasoning";
      this.#trimLeading = true;
    } else {
      this.#phase = "name";
      this.#phaseText = "";
    }
    return rest;
  }

  #reasoning(text: string, out: ReplyParts): string {
    const end = this.#thoughtEnd;
    const at = text.indexOf(end);
    let emit: string;
    let rest = "";
    if (at === -1) {
      // Hold back what may begin the end marker, and trailing whitespace (it may precede it).
      let keep = pendingMarker(text, [end]);
      keep += text.slice(0, text.length - keep).length - text.slice(0, text.length - keep).trimEnd().length;
      emit = text.slice(0, text.length - keep);
      this.#held = text.slice(text.length - keep);
    } else {
      emit = text.slice(0, at).trimEnd();
      rest = text.slice(at + end.length);
      this.#phase = "content";
    }
    if (this.#trimLeading) {
      emit = emit.trimStart();
      if (emit !== "") this.#trimLeading = false;
    }
    out.reasoning += emit;
    if (this.#phase === "content") this.#trimLeading = true;
    return rest;
  }

  #paramsPrefixes(): string[] {
    const prefix = this.#options.syntax.call.paramsPrefix;
    if (!namesFunction(prefix)) return [prefix];
    return this.#options.toolNames.map((name) => forFunction(prefix, name));
  }

  #name(text: string, out: ReplyParts): string {
    const all = this.#phaseText + text;
    const found = firstMarker(all, this.#paramsPrefixes());
    if (found === undefined) {
      this.#phaseText = all;
      return "";
    }
    const { paramsPrefix } = this.#options.syntax.call;
    this.#callName = namesFunction(paramsPrefix)
      ? (this.#options.toolNames.find((n) => found.marker === forFunction(paramsPrefix, n)) ?? "")
      : all.slice(0, found.at).trim();
    this.#callIndex++;
    out.calls.push({ index: this.#callIndex, id: this.#options.newCallId(), name: this.#callName, arguments: "" });
    this.#phase = "arguments";
    this.#phaseText = "";
    this.#depth = 0;
    this.#inString = false;
    this.#escaped = false;
    return all.slice(found.at + found.marker.length);
  }

  #arguments(text: string, out: ReplyParts): string {
    let i = 0;
    let ended = false;
    for (; i < text.length && !ended; i++) {
      const ch = text[i] as string;
      if (this.#depth === 0 && this.#phaseText === "" && /\s/.test(ch)) continue;
      this.#phaseText += ch;
      this.#appendArgument(ch, out);
      if (this.#inString) {
        if (this.#escaped) this.#escaped = false;
        else if (ch === "\\") this.#escaped = true;
        else if (ch === '"') this.#inString = false;
      } else if (ch === '"') this.#inString = true;
      else if (ch === "{" || ch === "[") this.#depth++;
      else if (ch === "}" || ch === "]") ended = --this.#depth === 0;
    }
    if (ended) {
      this.#phase = "suffix";
      this.#held = "";
    }
    return text.slice(i);
  }

  #appendArgument(ch: string, out: ReplyParts): void {
    const last = out.calls.at(-1);
    if (last !== undefined && last.index === this.#callIndex && last.id === "") {
      out.calls[out.calls.length - 1] = { ...last, arguments: last.arguments + ch };
    } else {
      out.calls.push({ index: this.#callIndex, id: "", name: "", arguments: ch });
    }
  }

  #suffix(text: string): string {
    const suffix = forFunction(this.#options.syntax.call.suffix, this.#callName).trim();
    const all = text.trimStart();
    if (all.length < suffix.length) {
      if (suffix.startsWith(all)) {
        this.#held = all;
        return "";
      }
    } else if (all.startsWith(suffix)) {
      this.#completeCall();
      return all.slice(suffix.length);
    }
    // The model left the syntax: the call ends here, and what follows is content.
    this.#completeCall();
    return all;
  }

  #completeCall(): void {
    this.#completedCalls++;
    this.#phase = "content";
    this.#trimLeading = true;
  }
}
