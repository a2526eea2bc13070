// Every kind of assistant turn a template can render, rendered through it and read back with the
// syntax learned from it, fed whole, a character at a time and in uneven pieces: the same message
// must come back (content, reasoning, calls with arguments as equal JSON, in order), with no marker
// text in any part. The template round-trip test and docs/models.md run it on llama.cpp's templates.
import { analyseTemplate } from "./analysis.js";
import { fill } from "./pattern.js";
import {
  isRendered,
  renderReply,
  type ProbeCall,
  type ProbeTool,
  type ProbeTurn,
  type TemplateContext,
} from "./probe.js";
import { readReply, sameJson, schemaTypes, type ReadReply } from "./read-back.js";
import type { ReplySyntax } from "./reply-syntax.js";

export const ROUND_TRIP_TOOLS: readonly ProbeTool[] = [
  {
    name: "edit_file",
    parameters: {
      type: "object",
      properties: {
        path: { type: "string" },
        count: { type: "integer" },
        ratio: { type: "number" },
        flag: { type: "boolean" },
        none: { type: "object", nullable: true },
        nested: { type: "object" },
        text: { type: "string" },
      },
      required: ["path"],
    },
  },
  { name: "get_time", parameters: { type: "object", properties: { zone: { type: "string" } }, required: ["zone"] } },
];

const EDIT: ProbeCall = {
  name: "edit_file",
  arguments: {
    path: "src/main.ts",
    count: 42,
    ratio: 0.5,
    flag: true,
    none: null,
    nested: { list: [1, "two", { three: false }], empty: {} },
    text: 'line 1\nline "2" — ü 🦙 東京',
  },
};
const TIME: ProbeCall = { name: "get_time", arguments: { zone: "Asia/Tokyo" } };
const TEXT = 'Sunny, 22 °C in Zürich — "quoted" & a < b\nSecond line: 🦙 東京';
const THOUGHT = "The user wants the weather; a tool gives it.\nSo I call it.";

export type Capability = "text" | "tools" | "parallel calls" | "reasoning";

export interface RoundTripCase {
  readonly name: string;
  readonly capability: Capability;
  readonly turn: ProbeTurn;
}

/** The cases a syntax is checked on: text; a call; two calls where it writes several; reasoning where it has it. */
export function roundTripCases(syntax: ReplySyntax): RoundTripCase[] {
  const cases: RoundTripCase[] = [{ name: "text", capability: "text", turn: { content: TEXT } }];
  if (syntax.calls !== undefined) {
    cases.push({ name: "one call", capability: "tools", turn: { calls: [EDIT] } });
    if (syntax.calls.parallel)
      cases.push({ name: "two calls", capability: "parallel calls", turn: { calls: [EDIT, TIME] } });
  }
  if (syntax.reasoning !== undefined) {
    cases.push({ name: "reasoning then text", capability: "reasoning", turn: { reasoning: THOUGHT, content: TEXT } });
    if (syntax.calls !== undefined)
      cases.push({
        name: "reasoning then a call",
        capability: "reasoning",
        turn: { reasoning: THOUGHT, calls: [EDIT] },
      });
  }
  return cases;
}

/** The ways a reply is fed: whole, a character at a time, and in pieces of 1 to 7 characters. */
export function chunkings(text: string): string[][] {
  const chars = [...text];
  const uneven: string[] = [];
  let seed = 7;
  for (let at = 0; at < chars.length; ) {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    const size = 1 + (seed % 7);
    uneven.push(chars.slice(at, at + size).join(""));
    at += size;
  }
  return [[text], chars, uneven];
}

/** Every marker text of a syntax (filled in), which no part of a reply may hold. */
export function markerTexts(syntax: ReplySyntax): string[] {
  const calls = syntax.calls;
  const patterns =
    calls === undefined ? [] : [...calls.open, ...calls.callOpen, ...calls.nameEnd, ...calls.callClose, ...calls.close];
  const args =
    calls?.arguments.kind === "tagged"
      ? [...calls.arguments.keyOpen, ...calls.arguments.keyClose, ...calls.arguments.valueClose]
      : [];
  const texts = [...patterns, ...args].map((p) => fill(p, { key: "path", index: 0 }).trim());
  const reasoning = syntax.reasoning === undefined ? [] : [syntax.reasoning.open, syntax.reasoning.close];
  return [
    ...new Set(
      [...texts, ...reasoning, ...syntax.strip, ...syntax.end].map((t) => t.trim()).filter((t) => t.length >= 3),
    ),
  ];
}

export interface RoundTripResult {
  readonly case: RoundTripCase;
  /** Undefined when the message came back whole from every feeding. */
  readonly problem: string | undefined;
}

function compare(read: ReadReply, turn: ProbeTurn, markers: readonly string[]): string | undefined {
  if (read.content.trim() !== (turn.content ?? "")) return `content ${JSON.stringify(read.content)}`;
  if (read.reasoning !== (turn.reasoning ?? "")) return `reasoning ${JSON.stringify(read.reasoning)}`;
  const calls = turn.calls ?? [];
  if (read.calls.length !== calls.length) return `${read.calls.length} calls: ${JSON.stringify(read.calls)}`;
  for (const [i, call] of calls.entries()) {
    const got = read.calls[i];
    if (got?.name !== call.name || !sameJson(got.arguments, call.arguments)) return `call ${i}: ${JSON.stringify(got)}`;
  }
  const parts = [read.content, read.reasoning, ...read.calls.map((c) => c.arguments)];
  const leaked = markers.find((marker) => parts.some((part) => part.includes(marker)));
  return leaked === undefined ? undefined : `marker ${JSON.stringify(leaked)} in the reply's parts`;
}

/**
 * One case rendered through the template and read back every way; the reasoning a template drops from its history is
 * not asked back.
 */
export function roundTrip(
  source: string,
  ctx: TemplateContext,
  syntax: ReplySyntax,
  c: RoundTripCase,
): RoundTripResult {
  // A template that cannot render without tools (one made for tool use) renders the text turn with them.
  const tools = syntax.calls === undefined ? [] : ROUND_TRIP_TOOLS;
  const first = renderReply(source, ctx, tools, c.turn);
  const rendered = isRendered(first) || tools.length > 0 ? first : renderReply(source, ctx, ROUND_TRIP_TOOLS, c.turn);
  if (!isRendered(rendered)) return { case: c, problem: `the template cannot render it: ${rendered.error}` };
  const shown = c.turn.reasoning === undefined || (rendered.prompt + rendered.reply).includes(c.turn.reasoning);
  const turn: ProbeTurn = shown ? c.turn : { ...c.turn, reasoning: "" };
  const types = syntax.calls === undefined ? undefined : schemaTypes(ROUND_TRIP_TOOLS);
  const markers = markerTexts(syntax);
  for (const chunks of chunkings(rendered.reply)) {
    const problem = compare(readReply(syntax, rendered, types, chunks), turn, markers);
    if (problem !== undefined) return { case: c, problem: `${problem} (fed in ${chunks.length} pieces)` };
  }
  return { case: c, problem: undefined };
}

export interface TemplateReport {
  readonly syntax: ReplySyntax;
  readonly results: readonly RoundTripResult[];
}

/** A template's syntax and every case's round trip. */
export function checkTemplate(source: string, ctx: TemplateContext): TemplateReport {
  const syntax = analyseTemplate(source, ctx);
  return { syntax, results: roundTripCases(syntax).map((c) => roundTrip(source, ctx, syntax, c)) };
}
