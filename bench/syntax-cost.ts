// `npm run bench:syntax` (~20 s, not part of `npm run bench`): what reading replies by the template's
// syntax costs (docs/decisions.md, "Reply syntax from the template"). In this process, CPU only:
// for a few families, a reply of reasoning, text and a tool call, rendered through the family's own
// template, is fed to the sidecar's reply parser one ~4-character token at a time, and the parser's
// time per token is set beside a plain copy of the same pieces (what a reply without a parser
// costs) and beside the decode step of the models it runs behind (docs/performance.md). Also the
// template analysis each model pays once, at load.
import { TOOLS_TEMPLATE } from "../gguf/tools-template.js";
import { llamaTemplates } from "../gguf/llama-source.js";
import { analyseTemplate } from "../sidecar/engine/syntax/analysis.js";
import { isRendered, renderReply, type ProbeTool } from "../sidecar/engine/syntax/probe.js";
import { ReplyParser } from "../sidecar/engine/syntax/reply-parser.js";
import { schemaTypes } from "../sidecar/engine/syntax/read-back.js";
import type { ReplySyntax } from "../sidecar/engine/syntax/reply-syntax.js";

const CTX = { bos: "<s>", eos: "</s>" };
const TOOL: ProbeTool = {
  name: "edit_file",
  parameters: {
    type: "object",
    properties: { path: { type: "string" }, text: { type: "string" }, line: { type: "integer" } },
  },
};
const WORDS = "the quick brown fox jumps over the lazy dog while the model writes its answer token by token "
  .repeat(20)
  .trim();
const TURN = {
  reasoning: WORDS.slice(0, 600),
  content: WORDS.slice(0, 1200),
  calls: [{ name: "edit_file", arguments: { path: "src/main.ts", text: WORDS.slice(0, 400), line: 42 } }],
};
const FAMILIES: readonly [string, () => string][] = [
  ["hermes (the tools model)", () => TOOLS_TEMPLATE],
  ["qwen3-coder", () => template("Qwen3-Coder.jinja")],
  ["glm", () => template("GLM-4.6.jinja")],
  ["kimi-k2", () => template("Kimi-K2-Thinking.jinja")],
  ["harmony (gpt-oss)", () => template("openai-gpt-oss-120b.jinja")],
  ["mistral", () => template("Mistral-Small-3.2-24B-Instruct-2506.jinja")],
];
const ROUNDS = 40;

function template(name: string): string {
  const source = llamaTemplates().get(name);
  if (source === undefined) throw new Error(`no template ${name}`);
  return source;
}

/** The reply as ~4-character tokens. */
const tokens = (text: string): string[] => text.match(/[\s\S]{1,4}/g) ?? [];

function parse(syntax: ReplySyntax, pieces: readonly string[]): number {
  let n = 0;
  const parser = new ReplyParser({
    syntax,
    tools: true,
    argumentTypes: schemaTypes([TOOL]),
    startInReasoning: false,
    newCallId: () => `c${n++}`,
  });
  let out = 0;
  for (const piece of pieces) out += parser.push(piece).content.length;
  return out + parser.flush().content.length;
}

function copy(pieces: readonly string[]): number {
  let out = "";
  for (const piece of pieces) out += piece;
  return out.length;
}

/** Nanoseconds per token of `run` over the pieces, the median of ROUNDS rounds. */
function perToken(pieces: readonly string[], run: (pieces: readonly string[]) => number): number {
  const times: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const start = process.hrtime.bigint();
    run(pieces);
    times.push(Number(process.hrtime.bigint() - start) / pieces.length);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)] as number;
}

function row(name: string, source: string): string {
  const started = process.hrtime.bigint();
  const syntax = analyseTemplate(source, CTX);
  const analysisMs = Number(process.hrtime.bigint() - started) / 1e6;
  // A template that takes no text beside reasoning and calls (gpt-oss's) renders the two alone.
  const whole = renderReply(source, CTX, [TOOL], TURN);
  const rendered = isRendered(whole)
    ? whole
    : renderReply(source, CTX, [TOOL], { reasoning: TURN.reasoning, calls: TURN.calls });
  if (!isRendered(rendered)) throw new Error(`${name}: ${rendered.error}`);
  const pieces = tokens(rendered.reply);
  const parser = perToken(pieces, (p) => parse(syntax, p));
  const plain = perToken(pieces, copy);
  return (
    `| ${name} | ${pieces.length} | ${(parser / 1000).toFixed(2)} | ${(plain / 1000).toFixed(3)} | ` +
    `${analysisMs.toFixed(0)} |`
  );
}

console.log("| family | tokens in the reply | parser µs / token | plain copy µs / token | analysis at load, ms |");
console.log("| --- | --- | --- | --- | --- |");
for (const [name, source] of FAMILIES) console.log(row(name, source()));
