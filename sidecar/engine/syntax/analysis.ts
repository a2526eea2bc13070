// A chat template's reply syntax, learned from the template itself: assistant turns rendered
// through it (probe.ts) and read back with each candidate syntax, the first that gives back exactly
// what was rendered winning (docs/decisions.md, "Reply syntax from the template").
import { CALL_FAMILIES } from "./families.js";
import {
  isRendered,
  renderReply,
  type ProbeCall,
  type ProbeTool,
  type RenderedReply,
  type TemplateContext,
} from "./probe.js";
import { readReply, readsBack, schemaTypes, startsInReasoning } from "./read-back.js";
import { fill } from "./pattern.js";
import type { CallSyntax, ReasoningSyntax, ReplySyntax } from "./reply-syntax.js";

const ANSWER = "Probe answer text.";
const THOUGHT = "Probe reasoning text.";
const LEAD = "Let me check.";

const TOOLS: readonly ProbeTool[] = [
  {
    name: "probe_weather",
    parameters: {
      type: "object",
      properties: { city: { type: "string" }, days: { type: "integer" } },
      required: ["city"],
    },
  },
  { name: "probe_time", parameters: { type: "object", properties: { zone: { type: "string" } }, required: ["zone"] } },
];
const CALLS: readonly ProbeCall[] = [
  { name: "probe_weather", arguments: { city: "Tokyo", days: 3 } },
  { name: "probe_time", arguments: { zone: "UTC" } },
];

/** Reasoning markers of the families, tried after the pair learned from the template's own rendering. */
const REASONING: readonly ReasoningSyntax[] = [
  ["<think>", "</think>"],
  ["<|START_THINKING|>", "<|END_THINKING|>"],
  ["[THINK]", "[/THINK]"],
  ["<|channel>thought", "<channel|>"],
  ["<mm:think>", "</mm:think>"],
  ["<seed:think>", "</seed:think>"],
  ["<|open|>think<|sep|>", "<|close|>think<|sep|>"],
  ["<think:opensource>", "</think:opensource>"],
  ["<|channel|>analysis<|message|>", "<|end|>"],
  ["to=self<|message|>", "<|eom|>"],
  ["Here are my reasoning steps:", "[BEGIN FINAL RESPONSE]"],
].map(([open, close]) => ({ open: open as string, close: close as string }));

/** Marker-like pieces of a text: `<…>`, `[…]`, `<|…|>`, with a word glued after (`<|channel>thought`). */
const MARKER = /<\|?[^<>\s]*\|?>[A-Za-z]*|\[[^[\]\s]+\]/g;
/** A run of markers at the end of a text (`<|channel|>analysis<|message|>`). */
const MARKER_RUN = /(?:<\|?[^<>\s]*\|?>[A-Za-z]*|\[[^[\]\s]+\])+$/;

/** A marker at the start of a text. */
const LEADING_MARKER = /^(?:<\|?[^<>\s]*\|?>|\[[^[\]\s]+\])/;

/** The marker pieces of `text` (in order). */
const markersIn = (text: string): string[] => [...text.matchAll(MARKER)].map((m) => m[0]);

/** The reasoning markers a rendering with reasoning shows around it: the marker before it and the one after. */
function learnedReasoning(think: RenderedReply): ReasoningSyntax | undefined {
  const whole = think.prompt + think.reply;
  const at = whole.lastIndexOf(THOUGHT);
  if (at === -1) return undefined;
  const open = whole.slice(0, at).trimEnd().match(MARKER_RUN)?.[0];
  const close = markersIn(whole.slice(at + THOUGHT.length))[0];
  return open !== undefined && close !== undefined ? { open, close } : undefined;
}

interface Rendered {
  readonly source: string;
  readonly plain: RenderedReply;
  readonly think: RenderedReply | undefined;
  readonly prompt: string;
}

/** The first reasoning pair that reads the plain and reasoning turns back; undefined for none. */
function reasoningOf(r: Rendered, base: Omit<ReplySyntax, "reasoning">): ReasoningSyntax | undefined {
  const learned = r.think === undefined ? undefined : learnedReasoning(r.think);
  const shown = r.think !== undefined && (r.think.prompt + r.think.reply).includes(THOUGHT);
  for (const reasoning of learned === undefined ? REASONING : [...REASONING, learned]) {
    const syntax = withReasoning(base, reasoning);
    if (!readsBack(syntax, r.plain, { content: ANSWER })) continue;
    if (shown && r.think !== undefined) {
      if (readsBack(syntax, r.think, { reasoning: THOUGHT, content: ANSWER })) return reasoning;
      continue;
    }
    const used =
      startsInReasoning(syntax, r.prompt) || (r.source.includes(reasoning.open) && r.source.includes(reasoning.close));
    if (used) return reasoning;
  }
  return undefined;
}

/** The pair with its close as the reasoning turn writes it: the whitespace before the close marker kept. */
function written(reasoning: ReasoningSyntax, think: RenderedReply | undefined): ReasoningSyntax {
  const whole = think === undefined ? "" : think.prompt + think.reply;
  const at = whole.lastIndexOf(THOUGHT);
  const after = at === -1 ? "" : whole.slice(at + THOUGHT.length);
  const space = after.length - after.trimStart().length;
  return after.slice(space).startsWith(reasoning.close)
    ? { ...reasoning, closeWritten: after.slice(0, space) + reasoning.close }
    : reasoning;
}

/**
 * Markers around the answer in the plain turn: what precedes it wraps it (stripped; also after the
 * assistant's header, which a model may write again to start another message of its turn), what
 * follows it ends the turn.
 */
function answerMarkers(plain: RenderedReply, lead: RenderedReply | undefined): { strip: string[]; end: string[] } {
  const at = plain.reply.indexOf(ANSWER);
  const pre = at === -1 ? "" : plain.reply.slice(0, at).trim();
  const post = (at === -1 ? plain.reply : plain.reply.slice(at + ANSWER.length)).trim();
  const header = markersIn(plain.prompt.trimEnd().match(MARKER_RUN)?.[0] ?? "").at(-1);
  const strip = [
    ...(pre === "" ? [] : [pre, ...(header !== undefined ? [`${header} ${pre}`] : [])]),
    ...(header !== undefined ? [header] : []),
  ];
  const close = answerClose(post, lead);
  // What follows the answer ends the turn; when markers are followed by text, only the first marker
  // (a template may append a system turn of its own after the last message).
  const onlyMarkers = post.match(MARKER_RUN)?.[0] === post;
  const end = post === "" ? [] : [onlyMarkers ? post : (post.match(LEADING_MARKER)?.[0] ?? post)];
  return { strip: close === undefined ? strip : [...strip, close], end };
}

/**
 * The marker that closes an answer before the calls that follow it (`<|END_TEXT|>`): what follows
 * the answer both in a plain turn and in one with text then calls, up to the last whole marker.
 */
function answerClose(post: string, lead: RenderedReply | undefined): string | undefined {
  const at = lead?.reply.indexOf(LEAD) ?? -1;
  if (lead === undefined || at === -1) return undefined;
  const after = lead.reply.slice(at + LEAD.length).trimStart();
  let n = 0;
  while (n < post.length && n < after.length && post[n] === after[n]) n++;
  const common = post.slice(0, n);
  const end = Math.max(common.lastIndexOf(">"), common.lastIndexOf("]"));
  // The whole of what follows a plain answer is the end of the turn: text and calls are then two messages.
  return end <= 0 || end + 1 >= post.length ? undefined : common.slice(0, end + 1);
}

export { ANSWER, CALLS, LEAD, THOUGHT, TOOLS };

/** Why a template that ignores tools altogether has no call syntax. */
export const NO_CALLS = "the template does not write tool calls";

/** The syntax's reasoning markers are no strip or end marker. */
function withoutReasoning(list: readonly string[], reasoning: ReasoningSyntax | undefined): string[] {
  if (reasoning === undefined) return [...list];
  const own = [reasoning.open.trim(), reasoning.close.trim()];
  return list.filter((m) => !own.includes(m) && !(own[1] as string).includes(m));
}

/** A strip marker without the reasoning markers it holds (an empty segment before the answer). */
function stripOf(marker: string, reasoning: ReasoningSyntax | undefined): string {
  return reasoning === undefined
    ? marker
    : marker.replace(reasoning.open.trim(), "").replace(reasoning.close.trim(), "").trim();
}

const withReasoning = (base: Omit<ReplySyntax, "reasoning">, reasoning: ReasoningSyntax | undefined): ReplySyntax => ({
  ...base,
  reasoning,
  strip: [...new Set(withoutReasoning(base.strip, reasoning).map((m) => stripOf(m, reasoning)))].filter(
    (m) => m !== "",
  ),
  end: withoutReasoning(base.end, reasoning),
});

/** Markers after a family's last call in `reply` (`<|eom_id|>`, `<|tool_response>`): they end a turn of calls. */
function endAfterCalls(family: CallSyntax, reply: string): string[] {
  const last = [...family.close, ...family.callClose].map((p) => fill(p, {}).trim()).find((text) => text !== "");
  if (last === undefined || !reply.includes(last)) return [];
  const tail = reply.slice(reply.lastIndexOf(last) + last.length).trim();
  return tail === "" ? [] : [tail];
}

/**
 * Whether a reply with text and a call reads back without marker text in the content (some templates put the text
 * elsewhere).
 */
function leadReadsBack(syntax: ReplySyntax, lead: RenderedReply): boolean {
  const content = readReply(syntax, lead, schemaTypes(TOOLS)).content.trim();
  return content === LEAD || content === "";
}

/** The tool-call syntax of the template: the first family that reads its probe calls back. */
function callsOf(
  source: string,
  ctx: TemplateContext,
  base: Omit<ReplySyntax, "calls" | "refused">,
): Pick<ReplySyntax, "calls" | "refused" | "end"> {
  const one = renderReply(source, ctx, TOOLS, { calls: [CALLS[0] as ProbeCall] });
  if (!isRendered(one))
    return { calls: undefined, refused: `the template cannot render a tool call: ${one.error}`, end: base.end };
  if (!one.reply.includes("probe_weather")) return { calls: undefined, refused: NO_CALLS, end: base.end };
  const two = renderReply(source, ctx, TOOLS, { calls: CALLS });
  const twoShown = isRendered(two) && two.reply.includes("probe_weather") && two.reply.includes("probe_time");
  const lead = renderReply(source, ctx, TOOLS, { content: LEAD, calls: [CALLS[0] as ProbeCall] });
  for (const family of CALL_FAMILIES) {
    const end = [...new Set([...base.end, ...withoutReasoning(endAfterCalls(family, one.reply), base.reasoning)])];
    const syntax: ReplySyntax = { ...base, end, calls: family, refused: undefined };
    if (!readsBack(syntax, one, { calls: [CALLS[0] as ProbeCall] }, TOOLS)) continue;
    if (twoShown && !readsBack(syntax, two as RenderedReply, { calls: CALLS }, TOOLS)) continue;
    if (isRendered(lead) && !leadReadsBack(syntax, lead)) continue;
    return { calls: { ...family, parallel: family.parallel && twoShown }, refused: undefined, end };
  }
  const shown = one.reply.trim().slice(0, 120);
  return {
    calls: undefined,
    refused: `the template writes tool calls as ${JSON.stringify(shown)}, which no reader here reads`,
    end: base.end,
  };
}

/** Whether the prompt shows the offered tools: it differs from the prompt without them. */
function listsTools(source: string, ctx: TemplateContext, plain: RenderedReply): boolean {
  const without = renderReply(source, ctx, [], { content: ANSWER });
  return !isRendered(without) || without.prompt !== plain.prompt;
}

/**
 * The reply syntax of a chat template: its reasoning markers, the markers around and after an
 * answer, and its tool-call syntax (or why calls are not served). Never throws: a template that
 * cannot render a plain turn gives a syntax with neither reasoning nor calls.
 */
export function analyseTemplate(source: string, ctx: TemplateContext): ReplySyntax {
  const plain = renderReply(source, ctx, TOOLS, { content: ANSWER });
  if (!isRendered(plain))
    return {
      reasoning: undefined,
      strip: [],
      end: [],
      calls: undefined,
      refused: `the template cannot render a reply: ${plain.error}`,
    };
  const thinkRendered = renderReply(source, ctx, TOOLS, { reasoning: THOUGHT, content: ANSWER });
  const think = isRendered(thinkRendered) ? thinkRendered : undefined;
  const lead = renderReply(source, ctx, TOOLS, { content: LEAD, calls: [CALLS[0] as ProbeCall] });
  const draft = { ...answerMarkers(plain, isRendered(lead) ? lead : undefined), calls: undefined, refused: undefined };
  const reasoning = reasoningOf({ source, plain, think, prompt: plain.prompt }, draft);
  const {
    calls: _calls,
    refused: _refused,
    ...base
  } = withReasoning(draft, reasoning === undefined ? undefined : written(reasoning, think));
  const syntax = { ...base, ...callsOf(source, ctx, base) };
  return syntax.calls !== undefined && !listsTools(source, ctx, plain) ? { ...syntax, toolsUnlisted: true } : syntax;
}
