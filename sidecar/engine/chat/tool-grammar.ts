// Grammars that keep tool calls well-formed: a name from the offered tools, then arguments valid
// for that tool's schema, then the call's closing syntax (`ToolGrammar`).
import { LlamaGrammarEvaluationState, type LlamaGrammar, type Token } from "node-llama-cpp";
import { remember, schemaGrammarText } from "../grammar/constraint.js";
import { invalidArgument } from "../engine-errors.js";
import { grammarStepper, type GrammarStepper } from "../llama/llama-internals.js";
import type { LoadedModel } from "../llama/model.js";
import { gbnfLiteral, patternGbnf, prefixedRules } from "../syntax/gbnf.js";
import { fill, trimmedStart, type Pattern } from "../syntax/pattern.js";
import type { ReplyParser } from "../syntax/reply-parser.js";
import type { CallSyntax } from "../syntax/reply-syntax.js";

export interface ToolSpec {
  readonly name: string;
  /** The arguments' JSON schema. */
  readonly schema: object;
  /** The schema as JSON text (the grammar cache key). */
  readonly schemaText: string;
}

/** The end of the root rule of node-llama-cpp's JSON grammars: newlines its stop trigger catches. */
const JSON_END = / "\\n\\n\\n\\n" \[\\n\]\*$/;

/** Arguments grammars' text by closing syntax and schema, the most recently used last. */
const gbnfTexts = new Map<string, Promise<string>>();
const GBNF_TEXTS = 256;

/** A tool's arguments grammar: its schema's JSON, then the text that closes the call (GBNF). */
function argumentsGbnf(loaded: LoadedModel, tool: ToolSpec, suffix: string): Promise<string> {
  const key = `${suffix}\u0000${tool.schemaText}`;
  const known = gbnfTexts.get(key) ?? buildArgumentsGbnf(loaded, tool, suffix);
  gbnfTexts.delete(key);
  gbnfTexts.set(key, known);
  known.catch(() => gbnfTexts.delete(key));
  if (gbnfTexts.size > GBNF_TEXTS) gbnfTexts.delete(gbnfTexts.keys().next().value as string);
  return known;
}

async function buildArgumentsGbnf(loaded: LoadedModel, tool: ToolSpec, suffix: string): Promise<string> {
  const text = await schemaGrammarText(loaded.llama, tool.schema);
  const lines = text.split("\n");
  const root = lines.findIndex((line) => line.startsWith("root ::= "));
  const line = lines[root];
  if (line === undefined || !JSON_END.test(line)) throw new Error("unexpected shape of the JSON-schema grammar");
  lines[root] = line.replace(JSON_END, suffix === "" ? "" : ` ${suffix}`);
  return lines.join("\n");
}

/**
 * Whether the call's closing is one end-of-generation token (Harmony's `<|call|>`): a grammar
 * cannot write it as text, and the token itself is allowed where the grammar is complete.
 */
function endsGeneration(loaded: LoadedModel, close: Pattern | undefined): boolean {
  if (close === undefined || close.parts.some((part) => "slot" in part)) return false;
  const tokens = loaded.model.tokenize(fill(close, {}), true);
  return tokens.length === 1 && loaded.model.isEogToken(tokens[0] as Token);
}

/** Each offered tool's arguments grammar (GBNF) and the grammar made of it. */
export interface ArgumentsGrammar {
  readonly gbnf: string;
  readonly grammar: LlamaGrammar;
}

/**
 * Grammars for calling `tools` in `syntax`: one per tool for the arguments, built (and checked) up
 * front. Only JSON arguments have one; arguments a family writes as tags are read as written.
 */
export async function toolGrammars(
  loaded: LoadedModel,
  syntax: CallSyntax,
  tools: readonly ToolSpec[],
): Promise<Map<string, ArgumentsGrammar>> {
  const out = new Map<string, ArgumentsGrammar>();
  if (syntax.arguments.kind !== "json") return out;
  const suffix = endsGeneration(loaded, syntax.callClose[0]) ? "" : patternGbnf(syntax.callClose[0]);
  for (const tool of tools) {
    try {
      const gbnf = await argumentsGbnf(loaded, tool, suffix);
      out.set(tool.name, {
        gbnf,
        grammar: await remember(`tool:${gbnf}`, () => loaded.llama.createGrammar({ grammar: gbnf })),
      });
    } catch (error) {
      throw invalidArgument(
        `the parameters schema of tool "${tool.name}" cannot be used: ` +
          `${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }
  return out;
}

/**
 * The name alternatives, each followed by that tool's arguments (and the call's closing) where it
 * has a grammar for them, so that a token spanning the name's end and the arguments' start (Qwen's
 * ` {"` after `"arguments":`) is one the grammar takes, as one grammar for the whole call does.
 */
function nameRules(
  names: readonly string[],
  nameEnd: string,
  args: ReadonlyMap<string, ArgumentsGrammar>,
): { alternatives: string; rules: string } {
  // Arguments without a grammar (tagged, Gemma's) are free text: the grammar must not end with the
  // name, or it would allow only the end of generation there (a name may end where its arguments begin).
  const rules: string[] = [];
  const alternatives = names.map((name, i) => {
    const gbnf = args.get(name)?.gbnf;
    if (gbnf === undefined) return `${gbnfLiteral(name)} ${nameEnd} free-text`;
    rules.push(prefixedRules(gbnf, `tool${i}`));
    return `${gbnfLiteral(name)} ${nameEnd} tool${i}-root`;
  });
  if (rules.length < names.length) rules.push("free-text ::= [^\\x00]*");
  return { alternatives: alternatives.join(" | "), rules: rules.join("\n") };
}

/** The patterns before the first call's name: the block's opening (if the family has one), then the call's. */
function headPatterns(syntax: CallSyntax) {
  const [open] = syntax.open;
  const callOpen = syntax.callOpen[0];
  if (callOpen === undefined) throw new Error(`the ${syntax.family} call syntax has no opening`);
  return open === undefined ? [trimmedStart(callOpen)] : [trimmedStart(open), callOpen];
}

const headText = (syntax: CallSyntax): string =>
  headPatterns(syntax)
    .map((p) => fill(p, {}))
    .join("");
const headGbnf = (syntax: CallSyntax): string => headPatterns(syntax).map(patternGbnf).join(" ");

export interface ToolGrammarOptions {
  readonly syntax: CallSyntax;
  readonly arguments: ReadonlyMap<string, ArgumentsGrammar>;
  /** The functions a call may name. */
  readonly names: readonly string[];
  /** The reply must begin with a call (tool choice "required" or a named function). */
  readonly forced: boolean;
}

/**
 * Picks the grammar for each next token from where the reply parser stands: free text in the
 * answer; the call's opening syntax and a name from the offered functions when a call is forced
 * or once the model has written the start of a call (see `#committed`); then the called
 * function's arguments schema followed by the call's closing syntax. node-llama-cpp asks before
 * every sampled token (`grammarEvaluationState` as a function).
 *
 * A grammar that takes over mid-token first reads the text of its phase generated so far.
 */
export class ToolGrammar {
  readonly #loaded: LoadedModel;
  readonly #parser: ReplyParser;
  readonly #options: ToolGrammarOptions;
  readonly #stepper: GrammarStepper;
  /** How much of the call's start commits the model to the call (see `#committed`). */
  readonly #commitLength: number;
  /** The text before the first call's name, as the template writes it. */
  readonly #startText: string;
  /**
   * The block's opening before the first call (Kimi's `<|tool_calls_section_begin|>`), as the template writes it; ""
   * without one.
   */
  readonly #openText: string;
  #key: string | undefined;
  #state: LlamaGrammarEvaluationState | undefined;
  #headGrammar: LlamaGrammar | undefined;
  #nameGrammar: LlamaGrammar | undefined;

  private constructor(loaded: LoadedModel, parser: ReplyParser, options: ToolGrammarOptions) {
    this.#loaded = loaded;
    this.#parser = parser;
    this.#options = options;
    this.#stepper = grammarStepper(loaded.llama);
    const start = headText(options.syntax);
    const firstLine = start.split("\n")[0] ?? "";
    this.#startText = start;
    const [open] = options.syntax.open;
    this.#openText = open === undefined ? "" : fill(trimmedStart(open), {});
    this.#commitLength = firstLine.length >= 3 && firstLine.length < start.length ? firstLine.length : start.length;
  }

  static async create(loaded: LoadedModel, parser: ReplyParser, options: ToolGrammarOptions): Promise<ToolGrammar> {
    const grammar = new ToolGrammar(loaded, parser, options);
    const { syntax, names } = options;
    const nameEnd = patternGbnf(syntax.nameEnd[0]);
    const { alternatives, rules } = nameRules(names, nameEnd, options.arguments);
    const head = headGbnf(syntax);
    const key = `${head}\u0000${nameEnd}\u0000${names.join("\u0000")}\u0000${rules}`;
    grammar.#nameGrammar = await remember(`name:${key}`, () =>
      loaded.llama.createGrammar({ grammar: `root ::= ( ${alternatives} )\n${rules}` }),
    );
    grammar.#headGrammar = await remember(`head:${key}`, () =>
      loaded.llama.createGrammar({ grammar: `root ::= ${head} ( ${alternatives} )\n${rules}` }),
    );
    return grammar;
  }

  /**
   * The text that commits the model to a call once written: the call opening's first line when it
   * has one (`<tool_call>`), otherwise the whole opening. The rest of the call syntax is then
   * forced, as the template writes it.
   */
  #committed(held: string): boolean {
    return held.length >= this.#commitLength && this.#startText.startsWith(held);
  }

  /** The grammar state for the next token (undefined: free text). */
  current(): LlamaGrammarEvaluationState | undefined {
    const parser = this.#parser;
    let key: string | undefined;
    let grammar: LlamaGrammar | undefined;
    let consumed = "";
    switch (parser.phase) {
      case "content":
      case "reasoning":
        if (this.#options.forced && parser.completedCalls === 0) [key, grammar] = ["head", this.#headGrammar];
        else if (parser.phase === "content" && this.#committed(parser.phaseText)) {
          [key, grammar, consumed] = ["head", this.#headGrammar, parser.phaseText];
        }
        break;
      case "block":
        // The block's opening is written (the parser has taken it): the call's opening and name follow.
        if (this.#key === "head") return this.#state;
        [key, grammar, consumed] = ["head", this.#headGrammar, this.#openText + parser.phaseText];
        break;
      case "name":
        if (this.#key === "head") return this.#state;
        [key, grammar, consumed] = ["name", this.#nameGrammar, parser.phaseText];
        break;
      case "arguments":
      case "suffix": {
        const args = this.#options.arguments.get(parser.callName);
        // The call's grammar goes on through the arguments it holds.
        if (args !== undefined && (this.#key === "head" || this.#key === "name") && this.#state !== undefined)
          return this.#state;
        key = `arguments:${parser.completedCalls}`;
        grammar = args?.grammar;
        consumed = parser.phaseText;
        break;
      }
    }
    if (key === this.#key) return this.#state;
    this.#key = key;
    this.#state = grammar === undefined ? undefined : this.#start(grammar, consumed);
    return this.#state;
  }

  /** A fresh state for `grammar` that has read `consumed`; undefined (free text) if it cannot. */
  #start(grammar: LlamaGrammar, consumed: string): LlamaGrammarEvaluationState | undefined {
    const state = new LlamaGrammarEvaluationState({ model: this.#loaded.model, grammar });
    if (consumed === "") return state;
    for (const token of this.#loaded.model.tokenize(consumed, false)) {
      if (!this.#stepper.canBeNext(state, token)) return undefined;
      this.#stepper.accept(state, token);
    }
    return state;
  }
}
