// A chat rendered by the model's own Jinja template, as llama.cpp's server renders it: OpenAI-shaped
// messages and tools, the template's variables, `add_generation_prompt` (docs/decisions.md,
// "Prompts from the template itself"). Used where node-llama-cpp found no built-in wrapper for the
// template: its generic Jinja wrapper renders tool calls and their results in a notation of its
// own, which the model never saw in training.
import type { LlamaModel, Token } from "node-llama-cpp";
import { Role, type Chat } from "../../../proto/gen/inference/v1/inference_pb.js";
import { markerTextPattern } from "../llama/marker-tokens.js";
import { renderTemplate } from "../syntax/jinja.js";
import type { CallIdForm } from "../syntax/reply-syntax.js";
import { idsInForm } from "./template-ids.js";
import { withToolListing } from "./tool-listing.js";

/** What the template is given besides the messages. */
export interface TemplateInput {
  readonly source: string;
  readonly tools: readonly { readonly name: string; readonly description: string; readonly schema: object }[];
  readonly variables: Readonly<Record<string, unknown>>;
  /** Ready for the assistant's reply (`add_generation_prompt`). */
  readonly reply: boolean;
  /** The family's own form of call ids, where its template names calls its own way. */
  readonly ids?: CallIdForm;
  /** The template shows no offered tools: list them in the system message (tool-listing.ts). */
  readonly listTools?: boolean;
}

type Message = Record<string, unknown>;

/** A call's arguments as the template takes them: the parsed object; undefined when they are no JSON object. */
function argumentsObject(text: string): unknown {
  if (text.trim() === "") return {};
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** An assistant message, or undefined when a call's arguments are not a JSON object (the wrapper renders those). */
function assistantMessage(message: Chat["messages"][number]): Message | undefined {
  const calls = message.toolCalls.map((call) => ({
    id: call.id,
    type: "function",
    function: { name: call.name, arguments: argumentsObject(call.arguments) },
  }));
  if (calls.some((call) => call.function.arguments === undefined)) return undefined;
  return {
    role: "assistant",
    content: message.content === "" && calls.length > 0 ? null : message.content,
    ...(message.reasoning !== "" ? { reasoning_content: message.reasoning } : {}),
    ...(calls.length > 0 ? { tool_calls: calls } : {}),
  };
}

/** Consecutive assistant messages as one, as one turn is: reasoning, text and calls joined. */
function merge(previous: Message, next: Message): Message {
  const text = (m: Message, key: string): string => (typeof m[key] === "string" ? (m[key] as string) : "");
  const calls = [...((previous.tool_calls as unknown[]) ?? []), ...((next.tool_calls as unknown[]) ?? [])];
  const content = text(previous, "content") + text(next, "content");
  const reasoning = text(previous, "reasoning_content") + text(next, "reasoning_content");
  return {
    role: "assistant",
    content: content === "" && calls.length > 0 ? null : content,
    ...(reasoning !== "" ? { reasoning_content: reasoning } : {}),
    ...(calls.length > 0 ? { tool_calls: calls } : {}),
  };
}

/** The chat's messages in OpenAI's shape; undefined when one cannot be (the wrapper renders that chat). */
export function templateMessages(chat: Chat): Message[] | undefined {
  const out: Message[] = [];
  const names = new Map<string, string>();
  for (const message of chat.messages) {
    if (message.role === Role.ASSISTANT) {
      const assistant = assistantMessage(message);
      if (assistant === undefined) return undefined;
      for (const call of message.toolCalls) names.set(call.id, call.name);
      const last = out.at(-1);
      if (last?.role === "assistant") out[out.length - 1] = merge(last, assistant);
      else out.push(assistant);
    } else if (message.role === Role.TOOL) {
      out.push({
        role: "tool",
        tool_call_id: message.toolCallId,
        name: names.get(message.toolCallId) ?? "",
        content: message.content,
      });
    } else if (message.role === Role.SYSTEM || message.role === Role.USER) {
      out.push({ role: message.role === Role.SYSTEM ? "system" : "user", content: message.content });
    } else return undefined;
  }
  return out;
}

/** The messages with every system message joined into one at the start (for a template that refuses them later). */
function systemFirst(messages: readonly Message[]): Message[] {
  const system = messages.filter((m) => m.role === "system").map((m) => String(m.content));
  const rest = messages.filter((m) => m.role !== "system");
  return system.length === 0 ? rest : [{ role: "system", content: system.join("\n\n") }, ...rest];
}

/**
 * The messages with an assistant's missing content (`null` beside its calls) as "": for templates that read it as text
 * (Qwen3's `'</think>' in content`).
 */
function contentAsText(messages: readonly Message[]): Message[] {
  return messages.map((m) => (m.content === null ? { ...m, content: "" } : m));
}

/**
 * The shapes a chat's messages are tried in: as sent; `null` content as ""; system messages joined first; then each
 * with ids of 9 letters and digits.
 */
function* shapes(messages: readonly Message[]): Generator<readonly Message[]> {
  for (const nine of [false, true]) {
    const list = nine ? idsInForm(messages, "nine") : messages;
    yield list;
    yield contentAsText(list);
    yield systemFirst(contentAsText(list));
  }
}

/**
 * The prompt text; undefined when the template refuses the chat (the wrapper renders it, or says
 * why). Tried as OpenAI's messages are; then with empty content for `null` (as llama.cpp does for a
 * template that needs text there); then with the system messages joined first; then each with call
 * ids of 9 letters and digits (for a template that refuses others, Mistral's). Ids are first put in
 * the family's own form where it has one (template-ids.ts).
 */
export function renderTemplatePrompt(
  model: LlamaModel,
  messages: readonly Message[],
  input: TemplateInput,
): string | undefined {
  const tools = input.tools.map((t) => ({
    type: "function",
    function: { name: t.name, description: t.description, parameters: t.schema },
  }));
  const special = { bos: model.tokens.bosString ?? "", eos: model.tokens.eosString ?? "" };
  const context = (list: readonly Message[]): Record<string, unknown> => ({
    ...input.variables,
    messages: list,
    ...(tools.length > 0 ? { tools } : {}),
    add_generation_prompt: input.reply,
    bos_token: special.bos,
    eos_token: special.eos,
  });
  const listed = input.listTools
    ? withToolListing(messages, input.source, { ...special, variables: input.variables }, input.tools)
    : messages;
  for (const list of shapes(input.ids === undefined ? listed : idsInForm(listed, input.ids))) {
    try {
      return renderTemplate(input.source, context(list));
    } catch {
      // The next shape, or the wrapper.
    }
  }
  return undefined;
}

/** Whether any text a client sent holds a special token's text (it would be read as that token). */
export function holdsMarkers(model: LlamaModel, chat: Chat): boolean {
  const pattern = markerTextPattern(model);
  if (pattern === null) return false;
  const sent = chat.messages.flatMap((m) => [
    m.content,
    m.reasoning,
    ...m.toolCalls.flatMap((c) => [c.name, c.arguments]),
  ]);
  sent.push(...chat.tools.flatMap((t) => [t.name, t.description, t.parameters]));
  return sent.some((text) => text !== "" && pattern.test(text));
}

/** The prompt's tokens: its special tokens' texts read as those tokens, and BOS first where the model wants it. */
export function templateTokens(model: LlamaModel, text: string): Token[] {
  const tokens = model.tokenize(text, true);
  const bos = model.tokens.bos;
  if (bos !== null && model.tokens.shouldPrependBosToken && tokens[0] !== bos) tokens.unshift(bos);
  return tokens;
}
