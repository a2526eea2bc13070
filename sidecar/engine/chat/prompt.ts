// Renders a request's input into prompt tokens: a raw prompt as is, a chat (messages, tools, calls
// and their results) through the model's chat template.
import type {
  ChatHistoryItem,
  ChatModelFunctionCall,
  ChatModelFunctions,
  ChatModelResponse,
  ChatWrapper,
  Token,
} from "node-llama-cpp";
import {
  Role,
  ToolChoice,
  type Chat,
  type GenerateRequest,
  type ToolCall,
} from "../../../proto/gen/inference/v1/inference_pb.js";
import { invalidArgument } from "../engine-errors.js";
import { checkSchemaSize, MAX_TOOLS } from "../grammar/schema-limits.js";
import type { LoadedModel } from "../llama/model.js";
import { parseTemplateVariables } from "../llama/template-variables.js";
import { THINKING_SWITCH } from "../llama/thinking-switch.js";
import { callAsProduced, isOwnCallId } from "./own-calls.js";
import { startsInReasoning as promptOpensReasoning } from "../syntax/read-back.js";
import { holdsMarkers, renderTemplatePrompt, templateMessages, templateTokens } from "./template-prompt.js";
import { PROBE_CHATS } from "./template-probes.js";
import { infillTokens } from "./infill-prompt.js";
import { chatOfParts } from "./media-parts.js";
import { cutAtMarker, spliceMedia, type MediaSpan, type PreparedMedia } from "./media-prompt.js";
import type { LineRules } from "./infill-prompt.js";
import type { ToolSpec } from "./tool-grammar.js";

/** How the reply may call tools, when the request offers any. */
export interface ToolUse {
  readonly tools: readonly ToolSpec[];
  /** The functions a call may name: all tools, or the one a named tool choice picks. */
  readonly names: readonly string[];
  /** The reply must begin with a call. */
  readonly forced: boolean;
  /** The reply may hold several calls. */
  readonly parallel: boolean;
}

export interface RenderedPrompt {
  readonly tokens: Token[];
  /** Single tokens that end the reply besides the model's end-of-generation tokens. */
  readonly stopTokens: ReadonlySet<Token>;
  /** Texts that end the reply (the chat template's own turn markers), never sent. */
  readonly stopTexts: readonly string[];
  /** Whether the reply is parsed into reasoning, content and calls (chat only). */
  readonly parsed: boolean;
  /** The prompt opened the reasoning segment: the reply starts inside it. */
  readonly startsInReasoning: boolean;
  /** Set when the model may call tools. */
  readonly toolUse: ToolUse | undefined;
  /** A fill-in-the-middle reply's line rules (proto: Infill.min_indent, time_limit_ms); none elsewhere. */
  readonly lineRules?: LineRules;
  /** Its media's places in `tokens` (media-prompt.ts), and their release once the reply is done; none without. */
  readonly media?: { readonly spans: readonly MediaSpan[]; dispose(): void };
}

const noStops: RenderedPrompt["stopTokens"] = new Set();

/**
 * Renders a request's input into prompt tokens: a raw prompt as is, chat through the model's template, an infill in
 * the model's FIM tokens.
 */
export function renderPrompt(
  loaded: LoadedModel,
  input: GenerateRequest["input"],
  media?: PreparedMedia,
): RenderedPrompt {
  switch (input.case) {
    case "prompt":
      return {
        tokens: tokenizeRaw(loaded, input.value),
        stopTokens: noStops,
        stopTexts: [],
        parsed: false,
        startsInReasoning: false,
        toolUse: undefined,
      };
    case "chat":
      return renderChat(loaded, input.value, media);
    case "infill":
      return {
        tokens: infillTokens(loaded, input.value),
        stopTokens: noStops,
        stopTexts: [],
        parsed: false,
        startsInReasoning: false,
        toolUse: undefined,
        lineRules: { minIndent: input.value.minIndent, timeLimitMs: input.value.timeLimitMs },
      };
    case undefined:
      throw invalidArgument("the request has neither a prompt, chat messages nor an infill");
  }
}

/**
 * A text's tokens, with the vocabulary's own markers unless `addSpecial` is false: BOS first and EOS
 * last where it asks for them (`add_bos_token`, `add_eos_token`: Qwen3-Embedding's), as llama.cpp's
 * tokenizer adds them for llama-server; `special` reads special-token text as those tokens.
 */
export function tokenizeRaw(
  loaded: LoadedModel,
  text: string,
  as: { readonly addSpecial?: boolean; readonly special?: boolean } = {},
): Token[] {
  const { model } = loaded;
  const tokens = model.tokenize(text, as.special === true);
  if (as.addSpecial === false) return tokens;
  const { bos, eos } = model.tokens;
  if (bos !== null && model.tokens.shouldPrependBosToken && tokens[0] !== bos) tokens.unshift(bos);
  if (eos !== null && model.tokens.shouldAppendEosToken && tokens.at(-1) !== eos) tokens.push(eos);
  return tokens;
}

/** A tool name as the proto allows it (`Tool.name`; the edge's twin is in edge/fields/tool-checks.ts). */
export const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

function parseTools(chat: Chat): ToolSpec[] {
  if (chat.tools.length > MAX_TOOLS)
    throw invalidArgument(`the request offers ${chat.tools.length} tools: at most ${MAX_TOOLS} are allowed`);
  const seen = new Set<string>();
  return chat.tools.map((tool, index) => {
    if (!TOOL_NAME.test(tool.name)) {
      throw invalidArgument(`tool ${index} has the name "${tool.name}": use 1 to 64 letters, digits, "_" or "-"`);
    }
    if (seen.has(tool.name)) throw invalidArgument(`two tools are named "${tool.name}"`);
    seen.add(tool.name);
    let schema: unknown = { type: "object", properties: {} };
    if (tool.parameters.trim() !== "") {
      try {
        schema = JSON.parse(tool.parameters);
      } catch {
        throw invalidArgument(`the parameters of tool "${tool.name}" are not valid JSON`);
      }
    }
    if (typeof schema !== "object" || schema === null || Array.isArray(schema)) {
      throw invalidArgument(`the parameters of tool "${tool.name}" must be a JSON schema object`);
    }
    checkSchemaSize(schema, tool.parameters, `the parameters schema of tool "${tool.name}"`);
    return { name: tool.name, schema, schemaText: JSON.stringify(schema) };
  });
}

function toolUseOf(chat: Chat, tools: readonly ToolSpec[]): ToolUse | undefined {
  const parallel = chat.parallelToolCalls ?? true;
  const all = tools.map((t) => t.name);
  switch (chat.toolChoice) {
    case ToolChoice.UNSPECIFIED:
    case ToolChoice.AUTO:
      return tools.length === 0 ? undefined : { tools, names: all, forced: false, parallel };
    case ToolChoice.NONE:
      return undefined;
    case ToolChoice.REQUIRED:
      if (tools.length === 0) throw invalidArgument('tool choice "required" needs at least one tool');
      return { tools, names: all, forced: true, parallel };
    case ToolChoice.FUNCTION:
      if (!all.includes(chat.toolName))
        throw invalidArgument(`the tool choice names "${chat.toolName}", which is not among the tools`);
      return { tools, names: [chat.toolName], forced: true, parallel: false };
  }
}

/**
 * A call's arguments for the template: parsed JSON (none: `{}`). Text that is not JSON is refused,
 * unless the call is one this project's sidecars made (its id says so, own-calls.ts): cut by a
 * token limit, it goes back as it was produced.
 */
function callArguments(
  wrapper: ChatWrapper,
  call: ToolCall,
  where: string,
): Pick<ChatModelFunctionCall, "params" | "rawCall"> {
  if (call.arguments.trim() === "") return { params: {} };
  try {
    return { params: JSON.parse(call.arguments) };
  } catch {
    if (isOwnCallId(call.id)) return callAsProduced(wrapper, call.name, call.arguments);
    throw invalidArgument(`${where} has arguments that are not valid JSON`);
  }
}

/** A tool's result as the template shows it: JSON when it is JSON, text otherwise. */
function resultOf(content: string): unknown {
  try {
    return JSON.parse(content);
  } catch {
    return content;
  }
}

/** One assistant message as parts of a model response: reasoning, then text, then calls. */
function assistantParts(
  wrapper: ChatWrapper,
  message: Chat["messages"][number],
  index: number,
  calls: Map<string, ChatModelFunctionCall>,
): ChatModelResponse["response"] {
  const parts: ChatModelResponse["response"] = [];
  if (message.reasoning !== "")
    parts.push({ type: "segment", segmentType: "thought", text: message.reasoning, ended: true });
  if (message.content !== "") parts.push(message.content);
  for (const call of message.toolCalls) {
    const item: ChatModelFunctionCall = {
      type: "functionCall",
      name: call.name,
      ...callArguments(wrapper, call, `tool call "${call.id}" of chat message ${index}`),
      result: null,
    };
    calls.set(call.id, item);
    parts.push(item);
  }
  return parts;
}

/**
 * Adds `parts` to one assistant turn in the order templates render a turn: reasoning first, then
 * text, then calls, whatever order a client sent its items back in (docs/contract.md, "Histories").
 */
function mergeTurn(turn: ChatModelResponse["response"], parts: ChatModelResponse["response"]): void {
  const rank = (part: ChatModelResponse["response"][number]): number =>
    typeof part === "string" ? 1 : part.type === "functionCall" ? 2 : 0;
  for (const part of parts) {
    const at = turn.findIndex((existing) => rank(existing) > rank(part));
    if (at === -1) turn.push(part);
    else turn.splice(at, 0, part);
  }
}

/**
 * The chat's messages checked once, whichever renders them: a role each, an id on every call, every tool result
 * answering an earlier call.
 */
function checkMessages(chat: Chat): void {
  const made = new Set<string>();
  chat.messages.forEach((message, index) => {
    if (message.role === Role.UNSPECIFIED) throw invalidArgument(`chat message ${index} has no role`);
    for (const call of message.toolCalls) {
      if (call.id === "") throw invalidArgument(`a tool call of chat message ${index} has no id`);
      made.add(call.id);
    }
    if (message.role === Role.TOOL && !made.has(message.toolCallId)) {
      throw invalidArgument(
        `chat message ${index} answers tool call "${message.toolCallId}", which no earlier assistant message made`,
      );
    }
  });
}

/**
 * The chat as node-llama-cpp's history: consecutive assistant messages are one turn (text before
 * calls), an assistant message's calls become function-call items of its model response, the tool
 * messages that answer them fill in their results, and an assistant message right after tool
 * results continues the same model response. `reply`: ready for the assistant's reply.
 */
function historyOf(wrapper: ChatWrapper, chat: Chat, reply: boolean): ChatHistoryItem[] {
  const history: ChatHistoryItem[] = [];
  const calls = new Map<string, ChatModelFunctionCall>();
  let open: ChatModelResponse | undefined;
  let previous: Role | undefined;
  chat.messages.forEach((message, index) => {
    switch (message.role) {
      case Role.SYSTEM:
      case Role.USER:
        history.push({ type: message.role === Role.SYSTEM ? "system" : "user", text: message.content });
        open = undefined;
        break;
      case Role.ASSISTANT: {
        const parts = assistantParts(wrapper, message, index, calls);
        if (open !== undefined && previous === Role.ASSISTANT) mergeTurn(open.response, parts);
        else if (open !== undefined && previous === Role.TOOL) open.response.push(...parts);
        else {
          open = { type: "model", response: parts };
          history.push(open);
        }
        break;
      }
      case Role.TOOL: {
        const call = calls.get(message.toolCallId);
        if (call !== undefined) call.result = resultOf(message.content);
        break;
      }
      case Role.UNSPECIFIED:
        break;
    }
    previous = message.role;
  });
  // After tool results the reply continues the model response that made the calls.
  if (reply && (previous !== Role.TOOL || open === undefined)) history.push({ type: "model", response: [] });
  return history;
}

const PROBE = "system-probe-4f1c";
const PROBE_USER = "user-probe-9b2e";
const inPlace = new WeakMap<ChatWrapper, boolean>();

/**
 * Whether the chat template renders a system message where it stands, later in a chat: found
 * once per template by rendering a probe (some templates refuse such a message, some drop it).
 */
export function rendersSystemInPlace(wrapper: ChatWrapper): boolean {
  let known = inPlace.get(wrapper);
  if (known === undefined) {
    try {
      const text = wrapper
        .generateContextState({
          chatHistory: [
            { type: "system", text: "s" },
            { type: "user", text: PROBE_USER },
            { type: "system", text: PROBE },
            { type: "user", text: "v" },
            { type: "model", response: [] },
          ],
        })
        .contextText.toString();
      known = text.includes(PROBE) && text.indexOf(PROBE) > text.indexOf(PROBE_USER);
    } catch {
      known = false;
    }
    inPlace.set(wrapper, known);
  }
  return known;
}

/** Every system message's text joined, in order, as one system message at the start. */
export function systemFirst(history: readonly ChatHistoryItem[]): ChatHistoryItem[] {
  const system = history.flatMap((item) => (item.type === "system" ? [item.text] : []));
  const rest = history.filter((item) => item.type !== "system");
  return system.length === 0 ? rest : [{ type: "system", text: system.join("\n\n") }, ...rest];
}

/** The functions the template shows: none when the model may call no tool. */
function functionsOf(
  chat: Chat,
  tools: readonly ToolSpec[],
  toolUse: ToolUse | undefined,
): ChatModelFunctions | undefined {
  if (toolUse === undefined) return undefined;
  const functions: Record<string, ChatModelFunctions[string]> = {};
  chat.tools.forEach((tool, index) => {
    functions[tool.name] = {
      ...(tool.description !== "" ? { description: tool.description } : {}),
      params: tools[index]?.schema as never,
    };
  });
  return functions;
}

type ContextState = ReturnType<ChatWrapper["generateContextState"]>;

/**
 * The wrapper that renders `chat`: with the template's own thinking switch off (`enable_thinking`,
 * llama/thinking-switch.ts) when the chat may not reason at all (a reasoning budget of 0) or its
 * template variables turn it off; with the request's other template variables when it has some
 * (llama/template-variables.ts).
 */
function wrapperOf(loaded: LoadedModel, chat: Chat): ChatWrapper {
  const { [THINKING_SWITCH]: thinking, ...others } = parseTemplateVariables(chat.templateVariables) ?? {};
  const off = (chat.reasoningBudget === 0 || thinking === false) && loaded.thinkingOff !== undefined;
  // The switch alone is the wrapper resolved with it off, as for a reasoning budget of 0.
  if (Object.keys(others).length > 0)
    return loaded.withVariables(off ? { ...others, [THINKING_SWITCH]: false } : others);
  return off ? (loaded.thinkingOff as ChatWrapper) : loaded.chatWrapper;
}

/**
 * The chat's history with its system messages where the template can render them (`reply`: ready for the assistant's
 * reply).
 */
function placedHistory(wrapper: ChatWrapper, chat: Chat, reply: boolean): ChatHistoryItem[] {
  const history = historyOf(wrapper, chat, reply);
  return rendersSystemInPlace(wrapper) ? history : systemFirst(history);
}

/** The history through the template; throws what the template throws. */
function chatState(
  wrapper: ChatWrapper,
  history: ChatHistoryItem[],
  availableFunctions: ChatModelFunctions | undefined,
): ContextState {
  return wrapper.generateContextState({
    chatHistory: history,
    ...(availableFunctions !== undefined ? { availableFunctions, documentFunctionParams: true } : {}),
  });
}

/** The template variables of a chat: the request's, with the thinking switch off for a reasoning budget of 0. */
function variablesOf(source: string, chat: Chat): Record<string, unknown> {
  const variables = parseTemplateVariables(chat.templateVariables) ?? {};
  return chat.reasoningBudget === 0 && source.includes(THINKING_SWITCH)
    ? { [THINKING_SWITCH]: false, ...variables }
    : variables;
}

/**
 * The prompt text from the model's own template (template-prompt.ts), where node-llama-cpp has no
 * built-in wrapper for it; undefined where the wrapper renders the chat: a template that writes no
 * calls (the wrapper documents its own call syntax), a client text holding a special token's text
 * (the wrapper keeps it text), arguments that are not a JSON object, or a template that refuses it.
 */
function fromTemplate(
  loaded: LoadedModel,
  chat: Chat,
  tools: readonly ToolSpec[],
  toolUse: ToolUse | undefined,
  reply: boolean,
): string | undefined {
  const source = templateSource(loaded);
  return source === undefined ? undefined : renderedBy(source, loaded, chat, tools, toolUse, reply);
}

function renderedBy(
  source: string,
  loaded: LoadedModel,
  chat: Chat,
  tools: readonly ToolSpec[],
  toolUse: ToolUse | undefined,
  reply: boolean,
): string | undefined {
  if (toolUse !== undefined && loaded.replySyntax.calls?.family === "generic") return undefined;
  if (holdsMarkers(loaded.model, chat)) return undefined;
  const messages = templateMessages(chat);
  if (messages === undefined) return undefined;
  const offered =
    toolUse === undefined
      ? []
      : chat.tools.map((t, i) => ({ name: t.name, description: t.description, schema: tools[i]?.schema ?? {} }));
  const { calls, toolsUnlisted } = loaded.replySyntax;
  const input = {
    source,
    tools: offered,
    variables: variablesOf(source, chat),
    reply,
    listTools: toolsUnlisted === true,
  };
  return renderTemplatePrompt(loaded.model, messages, calls?.ids === undefined ? input : { ...input, ids: calls.ids });
}

const sources = new WeakMap<LoadedModel, string | undefined>();

/**
 * The template chats are rendered with directly: the model's where node-llama-cpp has no built-in
 * wrapper for it, and where its built-in wrapper renders the probe chats (template-probes.ts)
 * otherwise than the template does (Llama 3.x's, Qwen3.5's): the template is what the model was
 * trained on. Decided once per model, on its first chat.
 */
function templateSource(loaded: LoadedModel): string | undefined {
  if (loaded.jinjaTemplate !== undefined) return loaded.jinjaTemplate;
  if (!sources.has(loaded)) sources.set(loaded, wrapperDiffers(loaded) ? loaded.chatTemplate : undefined);
  return sources.get(loaded);
}

/** Whether the model's chats are rendered by its template itself (true) or by node-llama-cpp's wrapper. */
export const rendersByTemplate = (loaded: LoadedModel): boolean => templateSource(loaded) !== undefined;

function wrapperDiffers(loaded: LoadedModel): boolean {
  if (loaded.chatTemplate.trim() === "") return false;
  return PROBE_CHATS.some((chat) => {
    const tools = parseTools(chat);
    const toolUse = toolUseOf(chat, tools);
    const text = renderedBy(loaded.chatTemplate, loaded, chat, tools, toolUse, true);
    if (text === undefined) return false;
    const wrapper = wrapperOf(loaded, chat);
    try {
      const viaWrapper = chatState(
        wrapper,
        placedHistory(wrapper, chat, true),
        functionsOf(chat, tools, toolUse),
      ).contextText.tokenize(loaded.tokenizer);
      // The beginning-of-sequence token is the vocabulary's to add, not the wrapper's or the template's.
      const bos = loaded.model.tokens.bos;
      const [a, b] = [viaWrapper, templateTokens(loaded.model, text)].map((tokens) =>
        tokens[0] === bos ? tokens.slice(1) : tokens,
      ) as [Token[], Token[]];
      return a.length !== b.length || a.some((token, i) => token !== b[i]);
    } catch {
      return true;
    }
  });
}

/** A prompt rendered by the template itself: it stops where the template's turns end; its media spliced in. */
function templatePrompt(
  loaded: LoadedModel,
  text: string,
  toolUse: ToolUse | undefined,
  media?: PreparedMedia,
): RenderedPrompt {
  const { model } = loaded;
  const stopTokens = new Set<Token>();
  const stopTexts: string[] = [];
  for (const end of loaded.replySyntax.end) {
    const tokens = model.tokenize(end, true);
    const [only] = tokens;
    if (tokens.length === 1 && only !== undefined && !model.isEogToken(only)) stopTokens.add(only);
    else if (tokens.length > 1 && !tokens.some((token) => model.isEogToken(token))) stopTexts.push(end);
  }
  const startsInReasoning = promptOpensReasoning(loaded.replySyntax, text);
  const rendered = { stopTokens, stopTexts, parsed: true, startsInReasoning, toolUse };
  if (media === undefined) return { tokens: templateTokens(model, text), ...rendered };
  const { tokens, spans } = spliceMedia(text.split(media.marker), media, (segment, first) =>
    first ? templateTokens(model, segment) : model.tokenize(segment, true),
  );
  return { tokens, ...rendered, media: { spans, dispose: media.dispose } };
}

/**
 * A chat with media through the model's own template where it can render the chat (tools in a syntax the template
 * does not define, as the chat wrappers' generic one, it cannot), else through the chat wrapper: each medium's marker
 * stands in a message's text either way.
 */
function withMedia(
  loaded: LoadedModel,
  chat: Chat,
  tools: readonly ToolSpec[],
  toolUse: ToolUse | undefined,
  media: PreparedMedia,
): RenderedPrompt {
  const source = loaded.jinjaTemplate ?? (loaded.chatTemplate.trim() === "" ? undefined : loaded.chatTemplate);
  const text = source === undefined ? undefined : renderedBy(source, loaded, chat, tools, toolUse, true);
  try {
    if (text !== undefined) return templatePrompt(loaded, text, toolUse, media);
    return wrapperPrompt(loaded, chat, tools, toolUse, media);
  } catch (error) {
    media.dispose();
    throw error;
  }
}

/**
 * The tokens of the chat's first `messages` messages as the template renders them with the chat's
 * tools, not yet ready for a reply (cache-marks.ts compares them with the whole prompt's).
 */
export function renderChatPrefix(loaded: LoadedModel, sent: Chat, messages: number): Token[] {
  const chat = chatOfParts(sent, loaded.id);
  const tools = parseTools(chat);
  const head = { ...chat, messages: chat.messages.slice(0, messages) };
  const direct = fromTemplate(loaded, head, tools, toolUseOf(chat, tools), false);
  if (direct !== undefined) return templateTokens(loaded.model, direct);
  const wrapper = wrapperOf(loaded, chat);
  const state = chatState(
    wrapper,
    placedHistory(wrapper, head, false),
    functionsOf(chat, tools, toolUseOf(chat, tools)),
  );
  return state.contextText.tokenize(loaded.tokenizer);
}

/**
 * Renders a chat for a reply; with `media` (prepared by media-prompt.ts), always through the model's own template, each
 * medium where its part stands.
 */
export function renderChat(loaded: LoadedModel, sent: Chat, media?: PreparedMedia): RenderedPrompt {
  if (sent.messages.length === 0) throw invalidArgument("chat needs at least one message");
  const chat = chatOfParts(sent, loaded.id, media, loaded.media.refusal);
  checkMessages(chat);
  const tools = parseTools(chat);
  const toolUse = toolUseOf(chat, tools);
  if (media !== undefined) return withMedia(loaded, chat, tools, toolUse, media);
  const direct = fromTemplate(loaded, chat, tools, toolUse, true);
  if (direct !== undefined) return templatePrompt(loaded, direct, toolUse);
  return wrapperPrompt(loaded, chat, tools, toolUse);
}

/** A prompt rendered by the model's chat wrapper; its media spliced in. */
function wrapperPrompt(
  loaded: LoadedModel,
  chat: Chat,
  tools: readonly ToolSpec[],
  toolUse: ToolUse | undefined,
  media?: PreparedMedia,
): RenderedPrompt {
  const wrapper = wrapperOf(loaded, chat);
  const history = placedHistory(wrapper, chat, true);
  let state: ContextState;
  try {
    state = chatState(wrapper, history, functionsOf(chat, tools, toolUse));
  } catch (error) {
    throw invalidArgument(`the model's chat template cannot render these messages: ${String(error)}`);
  }
  const { model } = loaded;
  const stopTokens = new Set<Token>();
  const stopTexts: string[] = [];
  for (const trigger of state.stopGenerationTriggers) {
    const tokens = trigger.tokenize(model.tokenizer);
    const [only] = tokens;
    if (tokens.length === 1 && only !== undefined) {
      if (!model.isEogToken(only)) stopTokens.add(only);
    } else if (tokens.length > 1) {
      // A trigger that holds an end-of-generation token ("<|im_end|>\n") ends at that token;
      // as text it would be only its other part (a lone "\n").
      if (tokens.some((token) => model.isEogToken(token))) continue;
      const text = model.detokenize(tokens, false);
      if (text.length > 0) stopTexts.push(text);
    }
  }
  const startsInReasoning = promptOpensReasoning(loaded.replySyntax, state.contextText.toString());
  const rendered = { stopTokens, stopTexts, parsed: true, startsInReasoning, toolUse };
  if (media === undefined) return { tokens: state.contextText.tokenize(loaded.tokenizer), ...rendered };
  const segments = cutAtMarker(state.contextText, media.marker);
  const { tokens, spans } = spliceMedia(segments, media, (segment) => segment.tokenize(loaded.tokenizer));
  return { tokens, ...rendered, media: { spans, dispose: media.dispose } };
}
