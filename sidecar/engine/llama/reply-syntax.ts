// How a model's chat template marks tool calls and reasoning segments in a reply, read once per
// model from node-llama-cpp's chat wrapper settings (the chat room reads replies with it).
import { LlamaText, type ChatWrapper } from "node-llama-cpp";

/** How a chat template marks tool calls in the model's reply, as plain text. */
export interface CallSyntax {
  /** Begins a call (`<tool_call>\n{"name": "`); the function's name follows. */
  readonly prefix: string;
  /** The prefix as the model writes it: without the newlines the template puts before it. */
  readonly start: string;
  /** Other texts that begin a call (the start without its leading space, say), as the model writes them. */
  readonly prefixAlternates: readonly string[];
  /** Ends the name and begins the arguments (`", "arguments": `); may contain `{{functionName}}`. */
  readonly paramsPrefix: string;
  /** Ends a call after its arguments (`}\n</tool_call>`); may contain `{{functionName}}`. */
  readonly suffix: string;
  /** Text between two calls of one reply (`\n`). */
  readonly betweenCalls: string;
  /** Whether the template lets one reply hold several calls. */
  readonly parallel: boolean;
}

/** How a chat template marks reasoning: between `prefix` and `suffix` (`<think>` … `</think>`). */
export interface ThoughtSyntax {
  /** Undefined when the reply starts inside the reasoning segment. */
  readonly prefix: string | undefined;
  readonly suffix: string;
}

export interface ReplySyntax {
  readonly call: CallSyntax;
  readonly thought: ThoughtSyntax | undefined;
}

const THINK_START = "<think>";
const THINK_END = "</think>";

/** The placeholder wrappers put in `paramsPrefix` / `suffix` for the called function's name. */
const FUNCTION_NAME = "{{functionName}}";

/** `syntaxText` for a call of `name`. */
export const forFunction = (syntaxText: string, name: string): string => syntaxText.replaceAll(FUNCTION_NAME, name);

/** Whether `syntaxText` names the function (so it differs from one function to another). */
export const namesFunction = (syntaxText: string): boolean => syntaxText.includes(FUNCTION_NAME);

const text = (value: string | LlamaText | undefined): string => (value === undefined ? "" : LlamaText(value).toString());

/**
 * Reads the reply syntax from node-llama-cpp's chat wrapper settings (every wrapper has a call
 * syntax; thought segments where the wrapper defines them, or `<think>` … `</think>` when the
 * model's chat template uses those markers). Marker texts are trimmed of
 * their outer newlines when matched (see ReplyParser), since models differ in the whitespace
 * they put around them.
 */
export function replySyntax(wrapper: ChatWrapper, chatTemplate = ""): ReplySyntax {
  const { functions, segments } = wrapper.settings;
  const prefix = text(functions.call.prefix);
  const start = prefix.replace(/^\n+/, "");
  const alternates = (functions.call.prefixAlternateMatches ?? []).map((t) => text(t).replace(/^\n+/, "")).filter((t) => t !== "" && t !== start);
  if (functions.call.optionalPrefixSpace && start.startsWith(" ")) alternates.push(start.trimStart());
  const parallelism = functions.parallelism?.call;
  const thought = segments?.thought;
  let thoughtSyntax: ThoughtSyntax | undefined;
  if (thought !== undefined) {
    const thoughtPrefix = typeof thought.prefix === "object" && "type" in thought.prefix ? undefined : text(thought.prefix as string | LlamaText);
    const suffix = text(thought.suffix);
    if (suffix.trim() !== "") thoughtSyntax = { prefix: thoughtPrefix, suffix };
  } else if (chatTemplate.includes(THINK_START) && chatTemplate.includes(THINK_END)) {
    // Wrappers built from a model's own Jinja template know no segments; the usual markers do.
    thoughtSyntax = { prefix: THINK_START, suffix: THINK_END };
  }
  return {
    call: {
      prefix,
      start,
      prefixAlternates: alternates,
      paramsPrefix: text(functions.call.paramsPrefix),
      suffix: text(functions.call.suffix),
      betweenCalls: text(parallelism?.betweenCalls),
      parallel: parallelism !== undefined,
    },
    thought: thoughtSyntax,
  };
}
