// A chat template's own thinking switch (`enable_thinking`, as Qwen3's templates have it): the chat
// wrapper resolved again with that switch off, which renders the prompts of requests whose
// reasoning budget is 0, so that no reasoning segment is generated at all (docs/decisions.md,
// "Reasoning off means none").
import type { ChatHistoryItem, ChatWrapper, ResolveChatWrapperWithModelOptions } from "node-llama-cpp";

/** The template variable a chat template's thinking switch reads. */
export const THINKING_SWITCH = "enable_thinking";

type WrapperSettings = NonNullable<ResolveChatWrapperWithModelOptions["customWrapperSettings"]>;

/**
 * The switch off, for each way node-llama-cpp renders a template: a Jinja template gets
 * `enable_thinking: false`; the Qwen wrapper it may pick in the template's place (it renders the
 * same prompts) its own equivalent, which writes the empty `<think>\n\n</think>\n\n` the template
 * writes then.
 */
export const THINKING_OFF: WrapperSettings = { jinjaTemplate: { reasoning: false }, qwen: { thoughts: "discourage" } };

const PROBE: ChatHistoryItem[] = [
  { type: "user", text: "thinking-probe-7c1d" },
  { type: "model", response: [] },
];

const rendered = (wrapper: ChatWrapper): string =>
  wrapper.generateContextState({ chatHistory: PROBE }).contextText.toString();

/**
 * The wrapper that renders prompts with the template's thinking switch off, or undefined when the
 * template has none: it names no `enable_thinking`, or resolving it with the switch off gives
 * another kind of wrapper (its other renderings would differ too) or the same prompt.
 * `resolve` resolves the model's wrapper as it was resolved, with `settings` added.
 */
export function thinkingOffWrapper(
  template: string,
  on: ChatWrapper,
  resolve: (settings: WrapperSettings) => ChatWrapper,
): ChatWrapper | undefined {
  if (!template.includes(THINKING_SWITCH)) return undefined;
  try {
    const off = resolve(THINKING_OFF);
    if (off.constructor !== on.constructor || rendered(off) === rendered(on)) return undefined;
    return off;
  } catch {
    return undefined;
  }
}
