// Splits a streamed reply into reasoning, content and tool-call fragments, by the template's reply
// syntax (reply-syntax.ts): text that may begin a marker is held back until it is known, and no
// marker reaches any part.
import { argumentsReader, type ArgumentsReader, type ArgumentTypes } from "./arguments.js";
import { findFirst, join, matchAny, pattern, trimmedStart, type Pattern } from "./pattern.js";
import type { CallSyntax, ReplySyntax } from "./reply-syntax.js";

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
 * Where the parser is: in the answer, in reasoning, or inside calls (a block's opening written, the
 * first call's not yet; a call's name, its arguments, the syntax that closes it).
 */
export type ReplyPhase = "content" | "reasoning" | "block" | "name" | "arguments" | "suffix";

export interface ParserOptions {
  readonly syntax: ReplySyntax;
  /** Whether calls are parsed at all (the request has tools the model may call). */
  readonly tools: boolean;
  /** The argument types of each offered tool (from its schema), for syntaxes that write values as text. */
  readonly argumentTypes?: (tool: string) => ArgumentTypes;
  /** Whether the reply starts inside the reasoning segment (the prompt opened it). */
  readonly startInReasoning: boolean;
  readonly newCallId: () => string;
}

type State = "content" | "reasoning" | "block" | "name" | "arguments" | "close" | "after" | "ended";
type Action = "reasoning" | "strip" | "end" | "block" | "call";

const PHASES: Record<State, ReplyPhase> = {
  content: "content",
  reasoning: "reasoning",
  block: "block",
  name: "name",
  arguments: "arguments",
  close: "suffix",
  after: "content",
  ended: "content",
};

const NAME_CHAR = /[A-Za-z0-9_-]/;
/** The shortest start of an end marker dropped when generation stops in it (`<|`: shorter could be text). */
const MIN_UNFINISHED_END = 2;
const noTypes: ArgumentTypes = () => undefined;

/** The markers running text is searched for, each with what it starts. */
function contentMarkers(options: ParserOptions): { markers: Pattern[]; actions: Action[] } {
  const { syntax } = options;
  const markers: Pattern[] = [];
  const actions: Action[] = [];
  const add = (list: readonly Pattern[], action: Action): void => {
    for (const p of list) {
      const trimmed = trimmedStart(p);
      if (trimmed.parts.length === 0 || markers.some((m) => m.source === trimmed.source)) continue;
      markers.push(trimmed);
      actions.push(action);
    }
  };
  if (syntax.reasoning !== undefined) add([pattern(syntax.reasoning.open)], "reasoning");
  if (options.tools && syntax.calls !== undefined) {
    add(syntax.calls.open, "block");
    if (syntax.calls.open.length === 0) add(syntax.calls.callOpen, "call");
  }
  add(syntax.strip.map(pattern), "strip");
  add(syntax.end.map(pattern), "end");
  return { markers, actions };
}

/**
 * Splits generated text into reasoning, content and tool calls, following the template's reply
 * syntax. Whitespace around markers is dropped: the start of the reply, the start of a reasoning
 * segment, its end, and the start of the content after reasoning or after a call. Arguments
 * stream as JSON text as they are generated, whatever notation the family writes them in
 * (arguments.ts).
 */
export class ReplyParser {
  readonly #options: ParserOptions;
  readonly #calls: CallSyntax | undefined;
  readonly #markers: Pattern[];
  readonly #actions: Action[];
  readonly #reasoningEnd: Pattern[];
  #state: State;
  #buffer = "";
  #trimLeading: boolean;
  #inBlock = false;
  /** The current call's name so far, or the raw text of its arguments so far (for the grammar). */
  #phaseText = "";
  #callIndex = -1;
  #callName = "";
  #completedCalls = 0;
  #arguments: ArgumentsReader | undefined;
  /** The call syntax writes nothing after a call's arguments (Mistral's): a call ends with them. */
  readonly #closesEmpty: boolean;

  constructor(options: ParserOptions) {
    this.#options = options;
    this.#calls = options.tools ? options.syntax.calls : undefined;
    this.#closesEmpty = this.#calls?.callClose.every((p) => trimmedStart(p).parts.length === 0) ?? false;
    ({ markers: this.#markers, actions: this.#actions } = contentMarkers(options));
    const reasoning = options.syntax.reasoning;
    this.#reasoningEnd =
      reasoning === undefined ? [] : [trimmedStart(pattern(reasoning.close)), ...options.syntax.end.map(pattern)];
    this.#state = options.startInReasoning && reasoning !== undefined ? "reasoning" : "content";
    // A reply's leading whitespace is no part of it (GLM's replies open with a newline before `<think>`).
    this.#trimLeading = true;
  }

  get phase(): ReplyPhase {
    return PHASES[this.#state];
  }

  /** The current call's name (in the arguments and suffix phases). */
  get callName(): string {
    return this.#callName;
  }

  /**
   * Text generated so far in the current phase that no part has taken: held back; the call's name
   * so far with what is held after it (a token may hold the name and the start of its end, `get_weather">`);
   * or the call's raw arguments so far.
   */
  get phaseText(): string {
    if (this.#state === "name") return this.#phaseText + this.#buffer;
    return this.#state === "arguments" ? this.#phaseText : this.#buffer;
  }

  /** Calls whose syntax was closed. */
  get completedCalls(): number {
    return this.#completedCalls;
  }

  /** Whether the text is inside a call's syntax (its name, arguments or closing). */
  get inCall(): boolean {
    return this.#state === "block" || this.#state === "name" || this.#state === "arguments" || this.#state === "close";
  }

  push(fragment: string): ReplyParts {
    this.#buffer += fragment;
    return this.#run(false);
  }

  /**
   * Whatever is held back when generation ends: reasoning or content as it stood. An unfinished call's name is dropped.
   */
  flush(): ReplyParts {
    // An end-of-turn marker cut short by the end of generation (its last part an end token) is no text.
    if (this.#state === "content" && this.#endsUnfinished()) this.#buffer = "";
    const out = this.#run(true);
    const held = this.#buffer;
    this.#buffer = "";
    if (this.#state === "reasoning") this.#emit(out, "reasoning", held);
    else if (this.#state === "content" || this.#state === "after") this.#emit(out, "content", held);
    return out;
  }

  #endsUnfinished(): boolean {
    const held = this.#buffer.trim();
    return (
      held.length >= MIN_UNFINISHED_END &&
      this.#options.syntax.end.some((end) => end.length > held.length && end.startsWith(held))
    );
  }

  #run(final: boolean): ReplyParts {
    const out: ReplyParts = { reasoning: "", content: "", calls: [] };
    while (this.#step(out, final)) {
      // Each step consumes text or changes state; it returns false when it needs more text.
    }
    return out;
  }

  #emit(out: ReplyParts, part: "reasoning" | "content", text: string): void {
    let t = text;
    if (this.#trimLeading) {
      t = t.trimStart();
      if (t !== "") this.#trimLeading = false;
    }
    out[part] += t;
  }

  #step(out: ReplyParts, final: boolean): boolean {
    if (
      this.#buffer === "" &&
      this.#state !== "arguments" &&
      !(this.#state === "close" && (final || this.#closesEmpty))
    )
      return false;
    switch (this.#state) {
      case "content":
        return this.#content(out, final);
      case "reasoning":
        return this.#reasoning(out, final);
      case "block":
        return this.#block(final);
      case "name":
        return this.#name(out, final);
      case "arguments":
        return this.#argumentsStep(out, final);
      case "close":
        return this.#close(final);
      case "after":
        return this.#after(final);
      case "ended":
        this.#buffer = "";
        return false;
    }
  }

  #content(out: ReplyParts, final: boolean): boolean {
    const found = findFirst(this.#markers, this.#buffer, final);
    if (found === undefined) {
      this.#emit(out, "content", this.#buffer);
      this.#buffer = "";
      return false;
    }
    this.#emit(out, "content", this.#buffer.slice(0, found.at));
    if (found.match.status !== "match") {
      this.#buffer = this.#buffer.slice(found.at);
      return false;
    }
    this.#buffer = this.#buffer.slice(found.match.end);
    switch (this.#actions[found.match.index]) {
      case "reasoning":
        this.#state = "reasoning";
        this.#trimLeading = true;
        break;
      case "end":
        this.#state = "ended";
        break;
      case "block":
        this.#state = "block";
        this.#inBlock = true;
        break;
      case "call":
        this.#startCall();
        break;
      default:
        break;
    }
    return true;
  }

  #reasoning(out: ReplyParts, final: boolean): boolean {
    const found = findFirst(this.#reasoningEnd, this.#buffer, final);
    const before = this.#buffer.slice(0, found?.at ?? this.#buffer.length);
    if (found === undefined || found.match.status !== "match") {
      // Hold back trailing whitespace too: it may precede the end marker.
      const kept = final ? before : before.trimEnd();
      this.#emit(out, "reasoning", kept);
      this.#buffer = this.#buffer.slice(kept.length);
      return false;
    }
    this.#emit(out, "reasoning", before.trimEnd());
    const closed = this.#reasoningEnd[found.match.index] === this.#reasoningEnd[0];
    this.#buffer = this.#buffer.slice(found.match.end);
    this.#state = closed ? "content" : "ended";
    this.#trimLeading = true;
    return true;
  }

  #startCall(): void {
    this.#state = "name";
    this.#phaseText = "";
  }

  #block(final: boolean): boolean {
    const calls = this.#calls as CallSyntax;
    const m = matchAny(calls.callOpen.map(trimmedStart), this.#buffer, leadingSpace(this.#buffer), final);
    if (m.status === "partial") return false;
    if (m.status === "match") {
      this.#buffer = this.#buffer.slice(m.end);
      this.#startCall();
    } else this.#leaveSyntax();
    return true;
  }

  #name(out: ReplyParts, final: boolean): boolean {
    const calls = this.#calls as CallSyntax;
    let i = 0;
    while (i < this.#buffer.length && NAME_CHAR.test(this.#buffer[i] as string)) i++;
    this.#phaseText += this.#buffer.slice(0, i);
    this.#buffer = this.#buffer.slice(i);
    if (this.#buffer === "" && !final) return i > 0;
    const m = matchAny(calls.nameEnd, this.#buffer, 0, final);
    if (m.status === "partial") return i > 0;
    if (m.status === "fail" || this.#phaseText === "") {
      this.#leaveSyntax();
      return true;
    }
    this.#buffer = this.#buffer.slice(m.end);
    this.#callName = this.#phaseText;
    this.#callIndex++;
    out.calls.push({ index: this.#callIndex, id: this.#options.newCallId(), name: this.#callName, arguments: "" });
    const types = this.#options.argumentTypes?.(this.#callName) ?? noTypes;
    this.#arguments = argumentsReader(calls.arguments, calls.callClose, types);
    this.#state = "arguments";
    this.#phaseText = "";
    return true;
  }

  #argumentsStep(out: ReplyParts, final: boolean): boolean {
    const step = (this.#arguments as ArgumentsReader).push(this.#buffer, final);
    this.#phaseText += this.#buffer.slice(0, step.used);
    this.#buffer = this.#buffer.slice(step.used);
    if (step.json !== "") appendArgument(out, this.#callIndex, step.json);
    if (step.done) this.#state = "close";
    return step.done || (step.used > 0 && this.#buffer !== "");
  }

  #close(final: boolean): boolean {
    const calls = this.#calls as CallSyntax;
    const m = matchAny(calls.callClose.map(trimmedStart), this.#buffer, leadingSpace(this.#buffer), final);
    if (m.status === "partial") return false;
    this.#completedCalls++;
    if (m.status === "match") {
      this.#buffer = this.#buffer.slice(m.end);
      this.#state = "after";
    } else this.#leaveSyntax();
    this.#trimLeading = true;
    return true;
  }

  #after(final: boolean): boolean {
    const calls = this.#calls as CallSyntax;
    const next = join(calls.between, calls.callOpen);
    const alternatives = this.#inBlock ? [...next, ...calls.close] : next;
    const m = matchAny(alternatives, this.#buffer, 0, final);
    if (m.status === "partial") return false;
    if (m.status === "fail") {
      this.#leaveSyntax();
      return true;
    }
    this.#buffer = this.#buffer.slice(m.end);
    if (m.index < next.length) this.#startCall();
    else {
      this.#state = "content";
      this.#inBlock = false;
    }
    return true;
  }

  /** The model left the call syntax: what follows is content. */
  #leaveSyntax(): void {
    this.#state = "content";
    this.#inBlock = false;
    this.#trimLeading = true;
  }
}

const leadingSpace = (text: string): number => text.length - text.trimStart().length;

function appendArgument(out: ReplyParts, index: number, text: string): void {
  const last = out.calls.at(-1);
  if (last !== undefined && last.index === index && last.id === "")
    out.calls[out.calls.length - 1] = { ...last, arguments: last.arguments + text };
  else out.calls.push({ index, id: "", name: "", arguments: text });
}
