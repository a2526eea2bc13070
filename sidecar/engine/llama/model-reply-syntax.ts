// A loaded model's reply syntax: learned once from the chat template it is served with
// (../syntax/analysis.ts), with the model's own BOS and EOS texts. A template that ignores tools
// altogether gets node-llama-cpp's own call syntax, which its wrapper then documents in the prompt.
import { LlamaText, type ChatWrapper, type LlamaModel } from "node-llama-cpp";
import { analyseTemplate, NO_CALLS } from "../syntax/analysis.js";
import { pattern } from "../syntax/pattern.js";
import type { CallSyntax, ReplySyntax } from "../syntax/reply-syntax.js";

const text = (value: string | LlamaText | undefined): string =>
  value === undefined ? "" : LlamaText(value).toString();

/**
 * The call syntax of node-llama-cpp's wrapper (`||call: name(arguments)` for most), as the family
 * "generic": used only for a template that writes no tool calls, since the wrapper then describes
 * the functions and this syntax in the prompt itself. Undefined when its syntax names the function
 * in its markers (no template of that kind reaches here).
 */
function wrapperCalls(wrapper: ChatWrapper): CallSyntax | undefined {
  const { call, parallelism } = wrapper.settings.functions;
  const [start, nameEnd, close] = [call.prefix, call.paramsPrefix, call.suffix].map((t) => text(t));
  if (start === undefined || nameEnd === undefined || close === undefined) return undefined;
  if ([start, nameEnd, close].some((t) => t.includes("{{functionName}}")) || start.trim() === "") return undefined;
  const alternates = (call.prefixAlternateMatches ?? [])
    .map((t) => text(t).replace(/^\n+/, ""))
    .filter((t) => t !== "");
  return {
    family: "generic",
    open: [],
    callOpen: [start.replace(/^\n+/, ""), ...alternates].map(pattern),
    nameEnd: [pattern(nameEnd)],
    arguments: { kind: "json" },
    callClose: [pattern(close)],
    between: [pattern(text(parallelism?.call.betweenCalls))],
    close: [],
    parallel: parallelism !== undefined,
  };
}

/** The reply syntax of `model` served with `template` through `wrapper` (no template: plain text, tools refused). */
export function modelReplySyntax(model: LlamaModel, template: string, wrapper: ChatWrapper): ReplySyntax {
  if (template.trim() === "") {
    return {
      reasoning: undefined,
      strip: [],
      end: [],
      calls: undefined,
      refused: "the model has no chat template (a preset's chatTemplate sets one)",
    };
  }
  const syntax = analyseTemplate(template, { bos: model.tokens.bosString ?? "", eos: model.tokens.eosString ?? "" });
  if (syntax.refused !== NO_CALLS) return syntax;
  const generic = wrapperCalls(wrapper);
  return generic === undefined ? syntax : { ...syntax, calls: generic, refused: undefined };
}

/** The syntax in a few words, for the load's log line: its call family (or why there is none) and its reasoning. */
export function replySummary(syntax: ReplySyntax): string {
  const calls =
    syntax.calls === undefined
      ? `no tool calls: ${syntax.refused ?? "none written"}`
      : `tool calls: ${syntax.calls.family}`;
  const generic =
    syntax.calls?.family === "generic"
      ? " (the template writes none; the prompt describes the functions)"
      : syntax.toolsUnlisted
        ? " (the template shows no tools; the system message lists them)"
        : "";
  return syntax.reasoning === undefined
    ? calls + generic
    : `${calls}${generic}; reasoning: ${syntax.reasoning.open} … ${syntax.reasoning.close}`;
}
