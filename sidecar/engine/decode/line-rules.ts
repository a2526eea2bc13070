// A fill-in-the-middle reply's line rules (proto: Infill.min_indent, time_limit_ms), as llama-server
// applies its `n_indent` and `t_max_predict_ms`: from the reply's second line on, a line indented
// less than `minIndent` ends the reply before its first other character (its indentation is kept);
// and a token that completes a line after `timeLimitMs` since the first token ends the reply.
import type { LineRules } from "../chat/infill-prompt.js";

export interface LineStep {
  /** The text to send. */
  readonly text: string;
  /** A rule ended the reply with this text. */
  readonly ended: boolean;
}

export class LineRuleGate {
  #indent = 0;
  #atLineStart = false;

  constructor(
    private readonly rules: LineRules,
    private readonly firstTokenAt: () => number | undefined,
  ) {}

  push(text: string): LineStep {
    if (this.rules.minIndent > 0) {
      const cut = this.#indentCut(text);
      if (cut !== undefined) return { text: text.slice(0, cut), ended: true };
    }
    const first = this.firstTokenAt();
    const late =
      this.rules.timeLimitMs > 0 &&
      text.includes("\n") &&
      first !== undefined &&
      performance.now() - first > this.rules.timeLimitMs;
    return { text, ended: late };
  }

  /** Where a line indented too little starts its text, if `text` holds one. */
  #indentCut(text: string): number | undefined {
    for (let i = 0; i < text.length; i++) {
      const c = text[i];
      if (this.#atLineStart && (c === " " || c === "\t")) this.#indent++;
      else if (this.#atLineStart && this.#indent < this.rules.minIndent) return i;
      else this.#atLineStart = false;
      if (c === "\n") {
        this.#atLineStart = true;
        this.#indent = 0;
      }
    }
    return undefined;
  }
}
