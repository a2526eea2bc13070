// A reply read back with a syntax, whole or in pieces, and compared with the turn that was rendered:
// how the analysis picks a syntax (analysis.ts) and how every template is checked (round-trip.ts).
import type { ArgumentTypes } from "./arguments.js";
import type { ProbeTool, ProbeTurn, RenderedReply } from "./probe.js";
import { ReplyParser } from "./reply-parser.js";
import type { ReplySyntax } from "./reply-syntax.js";

export interface ReadReply {
  readonly reasoning: string;
  readonly content: string;
  readonly calls: { name: string; arguments: string }[];
}

/** A reply read with `syntax`, fed in `chunks` (whole when none are given). */
export function readReply(
  syntax: ReplySyntax,
  rendered: RenderedReply,
  tools?: (tool: string) => ArgumentTypes,
  chunks: readonly string[] = [rendered.reply],
): ReadReply {
  let n = 0;
  const parser = new ReplyParser({
    syntax,
    tools: tools !== undefined,
    ...(tools !== undefined ? { argumentTypes: tools } : {}),
    startInReasoning: startsInReasoning(syntax, rendered.prompt),
    newCallId: () => `call_${n++}`,
  });
  const out = { reasoning: "", content: "", calls: [] as { name: string; arguments: string }[] };
  for (const parts of [...chunks.map((chunk) => parser.push(chunk)), parser.flush()]) {
    out.reasoning += parts.reasoning;
    out.content += parts.content;
    for (const piece of parts.calls) {
      if (piece.id !== "") out.calls.push({ name: piece.name, arguments: "" });
      else if (out.calls[piece.index] !== undefined)
        (out.calls[piece.index] as { arguments: string }).arguments += piece.arguments;
    }
  }
  return out;
}

/** Whether a reply after `prompt` starts inside reasoning: the prompt ends with the open marker. */
export function startsInReasoning(syntax: Pick<ReplySyntax, "reasoning">, prompt: string): boolean {
  const open = syntax.reasoning?.open.trim();
  return open !== undefined && open !== "" && prompt.trimEnd().endsWith(open);
}

/** The types of the probe tools' arguments. */
export function schemaTypes(tools: readonly { name: string; parameters: Readonly<Record<string, unknown>> }[]) {
  return (tool: string): ArgumentTypes =>
    (key) => {
      const properties = tools.find((t) => t.name === tool)?.parameters.properties as
        | Record<string, { type?: unknown }>
        | undefined;
      const type = properties?.[key]?.type;
      return type === undefined ? undefined : type === "string" ? "string" : "other";
    };
}

/**
 * A JSON value with its objects' keys sorted, as text: equal JSON whatever the key order, and a
 * member whose value is null the same as none (some templates write no null argument at all).
 */
const canonical = (value: unknown): string =>
  JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v)
            .filter(([, member]) => member !== null)
            .sort(([x], [y]) => (x < y ? -1 : 1)),
        )
      : v,
  );

/** Whether JSON text `a` is the value `b`, keys in any order. */
export const sameJson = (a: string, b: unknown): boolean => {
  try {
    return canonical(JSON.parse(a)) === canonical(b);
  } catch {
    return false;
  }
};

/** Whether reading `rendered` gives back `turn`: its reasoning, its text (outer whitespace aside) and its calls. */
export function readsBack(
  syntax: ReplySyntax,
  rendered: RenderedReply,
  turn: ProbeTurn,
  tools?: readonly ProbeTool[],
): boolean {
  const read = readReply(syntax, rendered, tools === undefined ? undefined : schemaTypes(tools));
  const calls = turn.calls ?? [];
  return (
    read.reasoning === (turn.reasoning ?? "") &&
    read.content.trim() === (turn.content ?? "") &&
    read.calls.length === calls.length &&
    calls.every(
      (call, i) => read.calls[i]?.name === call.name && sameJson(read.calls[i]?.arguments ?? "", call.arguments),
    )
  );
}
