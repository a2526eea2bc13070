import type { ChatHistoryItem, Token } from "node-llama-cpp";
import { Role, type Chat, type GenerateRequest } from "../../proto/gen/inference/v1/inference_pb.js";
import { invalidArgument } from "./errors.js";
import type { LoadedModel } from "./model.js";

export interface RenderedPrompt {
  readonly tokens: Token[];
  /** Single tokens that end the reply besides the model's end-of-generation tokens. */
  readonly stopTokens: ReadonlySet<Token>;
  /** Texts that end the reply (the chat template's own turn markers), never sent. */
  readonly stopTexts: readonly string[];
}

const noStops: RenderedPrompt["stopTokens"] = new Set();

/** Renders a request's input into prompt tokens: a raw prompt as is, chat through the model's template. */
export function renderPrompt(loaded: LoadedModel, input: GenerateRequest["input"]): RenderedPrompt {
  switch (input.case) {
    case "prompt":
      return { tokens: tokenizeRaw(loaded, input.value), stopTokens: noStops, stopTexts: [] };
    case "chat":
      return renderChat(loaded, input.value);
    case undefined:
      throw invalidArgument("the request has neither a prompt nor chat messages");
  }
}

export function tokenizeRaw(loaded: LoadedModel, text: string): Token[] {
  const { model } = loaded;
  const tokens = model.tokenize(text, false);
  const bos = model.tokens.bos;
  if (bos !== null && model.tokens.shouldPrependBosToken && tokens[0] !== bos) tokens.unshift(bos);
  return tokens;
}

export function renderChat(loaded: LoadedModel, chat: Chat): RenderedPrompt {
  if (chat.messages.length === 0) throw invalidArgument("chat needs at least one message");
  const history: ChatHistoryItem[] = chat.messages.map((message, index): ChatHistoryItem => {
    switch (message.role) {
      case Role.SYSTEM:
        return { type: "system", text: message.content };
      case Role.USER:
        return { type: "user", text: message.content };
      case Role.ASSISTANT:
        return { type: "model", response: [message.content] };
      case Role.UNSPECIFIED:
        throw invalidArgument(`chat message ${index} has no role`);
    }
  });
  history.push({ type: "model", response: [] });
  let state;
  try {
    state = loaded.chatWrapper.generateContextState({ chatHistory: history });
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
      const text = model.detokenize(tokens, false);
      if (text.length > 0) stopTexts.push(text);
    }
  }
  return { tokens: state.contextText.tokenize(model.tokenizer), stopTokens, stopTexts };
}
