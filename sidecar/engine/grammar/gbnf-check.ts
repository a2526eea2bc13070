/**
 * Checks a GBNF grammar's syntax the way llama.cpp's parser reads it, before llama.cpp sees it.
 * llama.cpp prints a grammar it cannot parse, whole, to the process's standard error (not through
 * the logger the sidecar filters), so a request's grammar would reach the log; a grammar refused
 * here never gets there. Conservative: it refuses only what llama.cpp refuses (syntax, undefined
 * rules, no `root` rule, a token by its text — node-llama-cpp parses without the vocabulary); the
 * rule count of nested repetitions and left recursion are left to llama.cpp.
 */

/** Where the text fails and why, in words that do not quote it; undefined when it parses. */
export function gbnfSyntaxError(text: string): string | undefined {
  // llama.cpp reads the grammar as a C string: it ends at the first NUL.
  const nul = text.indexOf("\u0000");
  const parser = new Recognizer(nul === -1 ? text : text.slice(0, nul));
  try {
    parser.grammar();
    return undefined;
  } catch (error) {
    if (!(error instanceof SyntaxProblem)) throw error;
    return `${error.message} (line ${parser.line(error.at)}, column ${parser.column(error.at)})`;
  }
}

class SyntaxProblem extends Error {
  constructor(
    message: string,
    readonly at: number,
  ) {
    super(message);
  }
}

const isDigit = (c: string | undefined): boolean => c !== undefined && c >= "0" && c <= "9";
const isWord = (c: string | undefined): boolean => c !== undefined && (/[a-zA-Z-]/.test(c) || isDigit(c));
const ESCAPES = new Set(["t", "r", "n", "\\", '"', "[", "]", "-"]);
const HEX_DIGITS: Readonly<Record<string, number>> = { x: 2, u: 4, U: 8 };

class Recognizer {
  #pos = 0;
  readonly #defined = new Set<string>();
  readonly #used = new Map<string, number>();

  constructor(readonly text: string) {}

  line(at: number): number {
    return this.text.slice(0, at).split("\n").length;
  }

  column(at: number): number {
    return at - this.text.lastIndexOf("\n", at - 1);
  }

  grammar(): void {
    this.#space(true);
    while (this.#pos < this.text.length) this.#rule();
    for (const [name, at] of this.#used)
      if (!this.#defined.has(name))
        throw new SyntaxProblem(`the rule "${name.slice(0, 40)}" is used but never defined`, at);
    if (!this.#defined.has("root")) throw new SyntaxProblem('there is no "root" rule', 0);
  }

  /** The character at the read position (a method: its value changes as the position moves). */
  #c(): string | undefined {
    return this.text[this.#pos];
  }

  #fail(what: string): never {
    throw new SyntaxProblem(this.#pos >= this.text.length ? "unexpected end of the grammar" : what, this.#pos);
  }

  #space(newlines: boolean): void {
    for (
      let c = this.#c();
      c === " " || c === "\t" || c === "#" || (newlines && (c === "\r" || c === "\n"));
      c = this.#c()
    ) {
      if (c === "#") while (this.#c() !== undefined && this.#c() !== "\r" && this.#c() !== "\n") this.#pos++;
      else this.#pos++;
    }
  }

  #name(): string {
    const start = this.#pos;
    while (isWord(this.#c())) this.#pos++;
    if (this.#pos === start) this.#fail("expecting a rule name");
    return this.text.slice(start, this.#pos);
  }

  #int(): void {
    if (!isDigit(this.#c())) this.#fail("expecting an integer");
    while (isDigit(this.#c())) this.#pos++;
  }

  #rule(): void {
    this.#defined.add(this.#name());
    this.#space(false);
    if (!this.text.startsWith("::=", this.#pos)) this.#fail('expecting "::="');
    this.#pos += 3;
    this.#space(true);
    this.#alternates(false);
    if (this.#c() === "\r") this.#pos += this.text[this.#pos + 1] === "\n" ? 2 : 1;
    else if (this.#c() === "\n") this.#pos++;
    else if (this.#c() !== undefined) this.#fail("expecting a new line or the end after a rule");
    this.#space(true);
  }

  #alternates(nested: boolean): void {
    this.#sequence(nested);
    while (this.#c() === "|") {
      this.#pos++;
      this.#space(true);
      this.#sequence(nested);
    }
  }

  /** One escape or character inside a literal or a class. */
  #char(): void {
    if (this.#c() === undefined) this.#fail("unexpected end");
    if (this.#c() !== "\\") {
      this.#pos += (this.text.codePointAt(this.#pos) ?? 0) > 0xffff ? 2 : 1;
      return;
    }
    const escaped = this.text[this.#pos + 1];
    const hex = escaped === undefined ? undefined : HEX_DIGITS[escaped];
    if (hex !== undefined) {
      const digits = this.text.slice(this.#pos + 2, this.#pos + 2 + hex);
      if (!new RegExp(`^[0-9a-fA-F]{${hex}}$`).test(digits))
        this.#fail(`expecting ${hex} hex digits after \\${escaped}`);
      this.#pos += 2 + hex;
    } else if (escaped !== undefined && ESCAPES.has(escaped)) this.#pos += 2;
    else this.#fail("unknown escape");
  }

  #sequence(nested: boolean): void {
    let item = false;
    for (;;) {
      const c = this.#c();
      if (c === '"' || c === "[") {
        this.#literalOrClass(c);
        item = true;
      } else if (c === "<" || c === "!") {
        this.#token();
        item = true;
      } else if (isWord(c)) {
        const at = this.#pos;
        const name = this.#name();
        if (!this.#used.has(name)) this.#used.set(name, at);
        item = true;
      } else if (c === "(") {
        this.#pos++;
        this.#space(true);
        this.#alternates(true);
        if (this.#c() !== ")") this.#fail('expecting ")"');
        this.#pos++;
        item = true;
      } else if (c === ".") {
        this.#pos++;
        item = true;
      } else if (c === "*" || c === "+" || c === "?" || c === "{") {
        if (!item) this.#fail(`expecting something before "${c}"`);
        this.#repetition(nested);
      } else return;
      this.#space(nested);
    }
  }

  #literalOrClass(open: string): void {
    const close = open === '"' ? '"' : "]";
    this.#pos++;
    if (open === "[" && this.#c() === "^") this.#pos++;
    while (this.#c() !== close) {
      this.#char();
      if (open === "[" && this.#c() === "-" && this.text[this.#pos + 1] !== "]") {
        this.#pos++;
        this.#char();
      }
    }
    this.#pos++;
  }

  #token(): void {
    if (this.#c() === "!") this.#pos++;
    if (this.#c() !== "<") this.#fail('expecting "<"');
    this.#pos++;
    if (this.#c() === "[") {
      this.#pos++;
      this.#int();
      if (this.#c() !== "]") this.#fail('expecting "]"');
      this.#pos++;
    } else {
      // llama.cpp's binding parses grammars without the model's vocabulary: a token by its text fails.
      this.#fail("a token is written by its id here, as <[id]>");
    }
    if (this.#c() !== ">") this.#fail('expecting ">"');
    this.#pos++;
  }

  #repetition(nested: boolean): void {
    if (this.#c() !== "{") {
      this.#pos++;
      return;
    }
    this.#pos++;
    this.#space(nested);
    this.#int();
    this.#space(nested);
    if (this.#c() === "}") {
      this.#pos++;
      return;
    }
    if (this.#c() !== ",") this.#fail('expecting "," or "}"');
    this.#pos++;
    this.#space(nested);
    if (isDigit(this.#c())) this.#int();
    this.#space(nested);
    if (this.#c() !== "}") this.#fail('expecting "}"');
    this.#pos++;
  }
}
