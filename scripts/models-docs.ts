/**
 * `npm run docs:models`: writes docs/models.md from the template round trip
 * (sidecar/engine/syntax/round-trip.ts) run on every chat template of llama.cpp's models/templates/,
 * read from the source bundle node-llama-cpp ships. test/sidecar/template-round-trip.test.ts fails
 * when the file differs from what this writes.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { llamaSourceCommit, llamaTemplates } from "../gguf/llama-source.js";
import { FAMILY_TWIN_FACTS, FAMILY_TWINS } from "../gguf/models.js";
import { checkTemplate, type Capability, type TemplateReport } from "../sidecar/engine/syntax/round-trip.js";
import { ROOT } from "./wrangler-dev.js";

export const MODELS_MD = join(ROOT, "docs", "models.md");

/** The BOS and EOS texts the templates are rendered with (a model's own, when it is loaded). */
export const TEMPLATE_CONTEXT = { bos: "<s>", eos: "</s>" } as const;

const CAPABILITIES: readonly Capability[] = ["text", "tools", "parallel calls", "reasoning"];

/** How a round trip's problem begins when the template itself fails to render the turn (round-trip.ts). */
export const CANNOT_RENDER = "the template cannot render";

/** Every template's report, by file name. */
export function templateReports(): Map<string, TemplateReport> {
  return new Map([...llamaTemplates()].map(([name, source]) => [name, checkTemplate(source, TEMPLATE_CONTEXT)]));
}

/** One capability's cell: pass, fail (a case did not come back), or — (the template has none). */
function cell(report: TemplateReport, capability: Capability): string {
  const results = report.results.filter((r) => r.case.capability === capability);
  if (results.length === 0) return capability === "tools" && report.syntax.refused !== undefined ? "refused" : "—";
  if (results.every((r) => r.problem === undefined)) return "pass";
  return results.some((r) => r.problem?.startsWith(CANNOT_RENDER) === true) ? "cannot render" : "**fail**";
}

const escapeCell = (text: string): string => text.replace(/\|/g, "\\|").replace(/\n/g, "\\n");

function row(name: string, report: TemplateReport): string {
  const { syntax } = report;
  const family = syntax.calls?.family ?? "—";
  const reasoning =
    syntax.reasoning === undefined
      ? "—"
      : `\`${escapeCell(syntax.reasoning.open)}\` … \`${escapeCell(syntax.reasoning.close)}\``;
  return (
    `| ${name.replace(/\.jinja$/, "")} | ${family} | ${reasoning} | ` +
    `${CAPABILITIES.map((c) => cell(report, c)).join(" | ")} |`
  );
}

function refusals(reports: Map<string, TemplateReport>): string {
  const lines = [...reports].flatMap(([name, r]) =>
    r.syntax.refused === undefined ? [] : [`- ${name.replace(/\.jinja$/, "")}: ${escapeCell(r.syntax.refused)}`],
  );
  return lines.join("\n");
}

export function modelsDocs(reports: Map<string, TemplateReport> = templateReports()): string {
  return `# Model families

<!-- Written by \`npm run docs:models\` (scripts/models-docs.ts) from the template round trip:
edit the code, not this file. -->

What each chat template of llama.cpp's \`models/templates/\` (llama.cpp ${llamaSourceCommit().slice(0, 10)}, from the
source node-llama-cpp ships) gets here. The sidecar learns a model's reply syntax from its template
when it loads ([decisions](decisions.md#reply-syntax-from-the-template)); here each template's
assistant turns — text; a call with nested objects, arrays, numbers, booleans, null, quotes,
newlines and non-ASCII; two calls; reasoning then text; reasoning then a call — are rendered
through it and read back by the sidecar's reply parser, fed whole, a character at a time and in
uneven pieces. **pass**: every case came back exactly, with no marker text in any part; **refused**:
the template writes no tool calls this server reads, and a request offering tools gets a 400 saying
why (the reasons are below); **cannot render**: the template fails in the Jinja engine the sidecar
and node-llama-cpp share (below); —: the template has no such turn (no reasoning markers, or one
call a reply). The family twins below are proven end to end further down.

| template | tool calls | reasoning | text | tools | parallel calls | reasoning |
| --- | --- | --- | --- | --- | --- | --- |
${[...reports].map(([name, report]) => row(name, report)).join("\n")}

## Refused tool calls

${refusals(reports)}

## Family twins

A family's real template with scripted weights that write what the family writes
(gguf/models.ts, gguf/twins/), behind the real sidecar and the real edge on Node and workerd, through
the official clients. Each row is one the tests run for every twin listed (test/e2e/families.test.ts,
test/e2e/agents-twins.test.ts, from the same table as this one, \`FAMILY_TWIN_FACTS\`): **text, calls,
history** — a plain answer, a call with its arguments as JSON on chat completions (whole and streamed),
Responses and Messages, the history sent back rendered exactly as the template renders it (with the
call ids this server gave, in the family's own form where its template wants one) and the answer to
the result as text, count_tokens equal to the rendered prompt's tokens; **streamed arguments** — a
call's arguments arrive as deltas that add up to the whole call's; **two calls** — two calls in one
reply, in order, each one's arguments in several deltas, on chat completions and Messages (— where
the template writes one call a turn, or the twin is not scripted so); **reasoning** — streamed as
reasoning deltas, by default or when asked (\`enable_thinking\`); **reasoning off** — none with the
template's own switch (or by default, where it is off unless asked); **agents** — Claude Code and
Codex each finish a tool loop through one of their own tools. —: the family has no such turn, or the
twin is not run so.

${tableHead(TWIN_COLUMNS)}
${twinRows()}

## Ranking and embedding twins

A family's real tokenizer with random weights (gguf/twins/rankers.ts), behind the real sidecar and
the Node edge (test/e2e/ranking-twins.test.ts): what they prove is the input, built as llama-server
builds it.

| twin | tokenizer | what is proven |
| --- | --- | --- |
${rankerRows()}
`;
}

/** The ranking and embedding twins' rows. */
function rankerRows(): string {
  const qwen3 = "ggml-vocab-qwen2 + Qwen3's added tokens";
  return [
    [
      "`qwen3-reranker`",
      qwen3,
      "the rerank template llama.cpp's converter writes (from `conversion/qwen.py`) filled in and tokenized whole, " +
        "its special tokens as tokens; scores and usage on that input",
    ],
    [
      "`qwen3-embedding`",
      `${qwen3}, \`<\\|endoftext\\|>\` appended`,
      "the vector of the text with its EOS (last-token pooling), usage and `/tokenize` counting that EOS",
    ],
  ]
    .map((cells) => `| ${cells.join(" | ")} |`)
    .join("\n");
}

/** The twins' table, from the facts the tests iterate. */
/** The family twins' table's columns. */
const TWIN_COLUMNS = [
  "twin",
  "template",
  "tokenizer",
  "tool calls",
  "text, calls, history",
  "streamed arguments",
  "two calls",
  "reasoning",
  "reasoning off",
  "agents",
];

/** A Markdown table's header and separator lines. */
function tableHead(columns: readonly string[]): string {
  return `| ${columns.join(" | ")} |\n| ${columns.map(() => "---").join(" | ")} |`;
}

function twinRows(): string {
  const yes = (on: boolean): string => (on ? "pass" : "—");
  return FAMILY_TWINS.map((name) => {
    const t = FAMILY_TWIN_FACTS[name];
    const reasoning = t.reasoning === "by default" ? "pass" : t.reasoning === "when asked" ? "pass (when asked)" : "—";
    const off = t.reasoning === "when asked" ? "pass (by default)" : yes(t.reasoningOff);
    const cells = [
      `\`${name}\``,
      t.template.replace(/\.jinja$/, ""),
      t.tokenizer,
      t.calls,
      "pass",
      "pass",
      yes(t.twoCalls),
      reasoning,
      off,
      yes(t.agents),
    ];
    return `| ${cells.join(" | ")} |`;
  }).join("\n");
}

const entry = process.argv[1];
if (entry !== undefined && import.meta.url === pathToFileURL(entry).href) {
  writeFileSync(MODELS_MD, modelsDocs());
  console.error(`wrote ${MODELS_MD}`);
}
