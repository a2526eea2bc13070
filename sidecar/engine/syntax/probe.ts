// Assistant turns rendered through a chat template the way a request's history would be, and split
// into the prompt and what the model writes after it (`renderReply`). Templates differ in what they
// accept (a call's content null or empty, its arguments an object or JSON text, ids of 9 letters and
// digits): each way is tried until one renders.
import { renderTemplate } from "./jinja.js";

/** What a template renders besides the messages: its special tokens and its own switches (`enable_thinking`, …). */
export interface TemplateContext {
  readonly bos: string;
  readonly eos: string;
  readonly variables?: Readonly<Record<string, unknown>>;
}

export interface ProbeCall {
  readonly name: string;
  readonly arguments: Readonly<Record<string, unknown>>;
}

/** An assistant turn to render: any of reasoning, text and calls. */
export interface ProbeTurn {
  readonly reasoning?: string;
  readonly content?: string;
  readonly calls?: readonly ProbeCall[];
}

export interface ProbeTool {
  readonly name: string;
  readonly parameters: Readonly<Record<string, unknown>>;
}

/** The prompt the turn follows (ready for the reply) and the reply as the model writes it. */
export interface RenderedReply {
  readonly prompt: string;
  readonly reply: string;
}

const USER = "Probe question from the user.";

/** Ids as the strictest templates want them (Mistral's: 9 letters and digits). */
const callId = (index: number): string => `call${String(index).padStart(5, "0")}`;

/** The parameters with a description on every property (some templates print them unchecked). */
function described(parameters: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const properties = (parameters.properties ?? {}) as Record<string, Record<string, unknown>>;
  const withText = Object.fromEntries(
    Object.entries(properties).map(([key, p]) => [key, { description: `The ${key}.`, ...p }]),
  );
  return { ...parameters, properties: withText };
}

function toolList(tools: readonly ProbeTool[]): unknown[] {
  return tools.map((tool) => ({
    type: "function",
    function: { name: tool.name, description: `Probe tool ${tool.name}.`, parameters: described(tool.parameters) },
  }));
}

function context(
  ctx: TemplateContext,
  tools: readonly ProbeTool[],
  messages: unknown[],
  generation: boolean,
): Record<string, unknown> {
  return {
    // Variables some templates read besides the messages (Firefunction's), as llama.cpp gives them.
    datetime: "Jan 01 2026",
    functions: JSON.stringify(toolList(tools), null, 2),
    ...ctx.variables,
    bos_token: ctx.bos,
    eos_token: ctx.eos,
    messages,
    ...(tools.length > 0 ? { tools: toolList(tools) } : {}),
    add_generation_prompt: generation,
  };
}

/** The assistant message in each shape templates accept, the usual one first. */
function messageVariants(turn: ProbeTurn): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  const contents = turn.content !== undefined ? [turn.content] : turn.calls?.length ? [null, ""] : [""];
  for (const asText of [false, true]) {
    for (const content of contents) {
      const message: Record<string, unknown> = { role: "assistant", content };
      if (turn.reasoning !== undefined) {
        message.reasoning_content = turn.reasoning;
        message.thinking = turn.reasoning;
      }
      if (turn.calls?.length) {
        message.tool_calls = turn.calls.map((call, index) => ({
          id: callId(index + 1),
          type: "function",
          function: { name: call.name, arguments: asText ? JSON.stringify(call.arguments) : call.arguments },
        }));
      }
      out.push(message);
    }
    if (!turn.calls?.length) break;
  }
  return out;
}

/** Where a prompt and a rendered turn part: their common prefix, not cutting a `<…>` or `[…]` marker in two. */
function splitPoint(prompt: string, full: string): number {
  if (full.startsWith(prompt)) return prompt.length;
  let at = 0;
  while (at < prompt.length && at < full.length && prompt[at] === full[at]) at++;
  const head = full.slice(0, at);
  const open = Math.max(head.lastIndexOf("<"), head.lastIndexOf("["));
  const closed = Math.max(head.lastIndexOf(">"), head.lastIndexOf("]"));
  return open > closed ? open : at;
}

/**
 * Renders `turn` after one user message (and `before`), with `tools` offered; undefined when the
 * template refuses every shape of it (the error of the first is in `error`).
 */
export function renderReply(
  source: string,
  ctx: TemplateContext,
  tools: readonly ProbeTool[],
  turn: ProbeTurn,
  before: readonly unknown[] = [],
): RenderedReply | { readonly error: string } {
  const history = [{ role: "user", content: USER }, ...before];
  let error = "";
  let prompt: string;
  try {
    prompt = renderTemplate(source, context(ctx, tools, history, true));
  } catch (e) {
    return { error: (e as Error).message };
  }
  for (const message of messageVariants(turn)) {
    try {
      const full = renderTemplate(source, context(ctx, tools, [...history, message], false));
      if (full.includes("[object ")) continue;
      const at = splitPoint(prompt, full);
      return { prompt: full.slice(0, at), reply: full.slice(at) };
    } catch (e) {
      if (error === "") error = (e as Error).message;
    }
  }
  return { error: error === "" ? "it renders the arguments as [object Map]" : error };
}

export const isRendered = (r: RenderedReply | { readonly error: string }): r is RenderedReply => !("error" in r);
