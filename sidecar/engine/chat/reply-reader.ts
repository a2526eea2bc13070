// How a chat reply is read: its parser and its tool grammar, chosen for a rendered prompt (its tool
// calls' ids are own-calls.ts's).
import type { LoadedModel } from "../llama/model.js";
import { newCallId } from "./own-calls.js";
import type { RenderedPrompt } from "./prompt.js";
import { ReplyParser } from "./reply-parser.js";
import { ToolGrammar, toolGrammars } from "./tool-grammar.js";

/** How a chat reply is read: its parser, and the grammar that keeps tool calls well-formed. */
export interface ReplyReader {
  readonly parser: ReplyParser;
  /** Set when the model may call tools. */
  readonly grammar: ToolGrammar | undefined;
}

/**
 * The reader for a rendered prompt; undefined when the reply is plain text (a raw prompt, or a
 * chat whose template has no reasoning segments and no tools offered). Builds (and so checks)
 * the tools' argument grammars before the reply starts.
 */
export async function replyReader(loaded: LoadedModel, prompt: RenderedPrompt): Promise<ReplyReader | undefined> {
  if (!prompt.parsed) return undefined;
  const syntax = loaded.replySyntax;
  const toolUse = prompt.toolUse;
  if (toolUse === undefined && syntax.thought === undefined) return undefined;
  const parser = new ReplyParser({
    syntax,
    tools: toolUse !== undefined,
    toolNames: toolUse?.names ?? [],
    startInReasoning: prompt.startsInReasoning,
    newCallId,
  });
  if (toolUse === undefined) return { parser, grammar: undefined };
  const offered = toolUse.tools.filter((tool) => toolUse.names.includes(tool.name));
  const grammar = await ToolGrammar.create(loaded, parser, {
    syntax: syntax.call,
    arguments: await toolGrammars(loaded, syntax.call, offered),
    names: toolUse.names,
    forced: toolUse.forced,
  });
  return { parser, grammar };
}
