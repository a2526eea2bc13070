// The template's own tokens of a model — control tokens and user-defined ones such as `<tool_call>`
// or `<think>` — found once per model: the decode loop bans them inside JSON arguments, and a chat
// rendered by the template checks that no client text holds one's text.
import type { LlamaModel, Token } from "node-llama-cpp";

const markerTokens = new WeakMap<LlamaModel, Token[]>();
const markerPatterns = new WeakMap<LlamaModel, RegExp | null>();

/** The model's control and user-defined tokens. */
export function templateMarkerTokens(model: LlamaModel): Token[] {
  let tokens = markerTokens.get(model);
  if (tokens === undefined) {
    tokens = [];
    for (const token of model.iterateAllTokens()) {
      const attributes = model.getTokenAttributes(token);
      if (attributes.control || attributes.userDefined) tokens.push(token);
    }
    markerTokens.set(model, tokens);
  }
  return tokens;
}

/** One pattern matching any of those tokens' texts (of two characters or more); null when there are none. */
export function markerTextPattern(model: LlamaModel): RegExp | null {
  let pattern = markerPatterns.get(model);
  if (pattern === undefined) {
    const texts = new Set(templateMarkerTokens(model).map((token) => model.detokenize([token], true)));
    const escaped = [...texts]
      .filter((text) => text.trim().length >= 2)
      .map((text) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
    pattern = escaped.length === 0 ? null : new RegExp(escaped.join("|"));
    markerPatterns.set(model, pattern);
  }
  return pattern;
}
