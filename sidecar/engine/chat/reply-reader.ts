// How a chat reply is read: its parser and its tool grammar, chosen for a rendered prompt (its tool
// calls' ids are own-calls.ts's).
import { invalidArgument } from "../engine-errors.js";
import type { LoadedModel } from "../llama/model.js";
import { schemaTypes } from "../syntax/read-back.js";
import { ReplyParser } from "../syntax/reply-parser.js";
import { newCallId } from "./own-calls.js";
import type { RenderedPrompt } from "./prompt.js";
import { ToolGrammar, toolGrammars } from "./tool-grammar.js";

/** How a chat reply is read: its parser, and the grammar that keeps tool calls well-formed. */
export interface ReplyReader {
  readonly parser: ReplyParser;
  /** Set when the model may call tools. */
  readonly grammar: ToolGrammar | undefined;
}

/**
 * The reader for a rendered prompt; undefined when the reply is plain text (a raw prompt, or a
 * chat whose template marks neither reasoning nor the answer, with no tools offered). Builds (and
 * so checks) the tools' argument grammars before the reply starts. Tools offered to a model whose
 * template writes no calls this project reads are refused, saying why.
 */
export async function replyReader(loaded: LoadedModel, prompt: RenderedPrompt): Promise<ReplyReader | undefined> {
  if (!prompt.parsed) return undefined;
  const syntax = loaded.replySyntax;
  const toolUse = prompt.toolUse;
  if (toolUse === undefined && syntax.reasoning === undefined && syntax.strip.length === 0) return undefined;
  const calls = syntax.calls;
  if (toolUse !== undefined && calls === undefined)
    throw invalidArgument(
      `model "${loaded.id}" cannot call tools: ${syntax.refused ?? "its template writes no calls"}`,
    );
  const parser = new ReplyParser({
    syntax,
    tools: toolUse !== undefined,
    argumentTypes: schemaTypes(
      (toolUse?.tools ?? []).map((tool) => ({ name: tool.name, parameters: tool.schema as Record<string, unknown> })),
    ),
    startInReasoning: prompt.startsInReasoning,
    newCallId,
  });
  if (toolUse === undefined || calls === undefined) return { parser, grammar: undefined };
  const offered = toolUse.tools.filter((tool) => toolUse.names.includes(tool.name));
  const grammar = await ToolGrammar.create(loaded, parser, {
    syntax: calls,
    arguments: await toolGrammars(loaded, calls, offered),
    names: toolUse.names,
    forced: toolUse.forced,
  });
  return { parser, grammar };
}
