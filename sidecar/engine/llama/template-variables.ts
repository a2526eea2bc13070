// A request's extra chat-template variables (`chat_template_kwargs`): the model's template rendered
// by node-llama-cpp's Jinja wrapper with them added, one wrapper per distinct set, a few kept.
import { JinjaTemplateChatWrapper, type ChatWrapper, type ResolveChatWrapperWithModelOptions } from "node-llama-cpp";
import { invalidArgument } from "../engine-errors.js";

type WrapperSettings = NonNullable<ResolveChatWrapperWithModelOptions["customWrapperSettings"]>;

/** The names the sidecar gives the template itself; a request may not set them. */
const RESERVED = ["messages", "tools", "add_generation_prompt", "bos_token", "eos_token"];
/** Distinct variable sets whose wrappers are kept per model. */
const KEPT = 16;

/** The variables of a request (`Chat.template_variables`), checked: a JSON object without reserved names. */
export function parseTemplateVariables(json: string): Record<string, unknown> | undefined {
  if (json.trim() === "") return undefined;
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    throw invalidArgument("the chat template variables are not valid JSON");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw invalidArgument("the chat template variables must be a JSON object");
  const reserved = Object.keys(value).find((key) => RESERVED.includes(key));
  if (reserved !== undefined)
    throw invalidArgument(`the chat template variable "${reserved}" is set by the server and cannot be given`);
  return value as Record<string, unknown>;
}

/**
 * The wrappers of one model by variable set: `resolve` resolves the model's template as a Jinja
 * template with `settings`. A model served through a built-in wrapper instead (a preset naming
 * one) has no template to pass variables to, and refuses them.
 */
export function templateVariablesWrappers(
  resolve: (settings: WrapperSettings) => ChatWrapper,
): (variables: Record<string, unknown>) => ChatWrapper {
  const kept = new Map<string, ChatWrapper>();
  return (variables) => {
    const key = JSON.stringify(variables);
    let wrapper = kept.get(key);
    if (wrapper === undefined) {
      try {
        // node-llama-cpp sets `enable_thinking` itself, from its `reasoning` setting.
        const { enable_thinking: thinking, ...rest } = variables;
        const reasoning = typeof thinking === "boolean" ? { reasoning: thinking } : {};
        wrapper = resolve({ jinjaTemplate: { additionalRenderParameters: rest, ...reasoning } });
      } catch (error) {
        throw invalidArgument(
          `the chat template cannot take these variables: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
      if (!(wrapper instanceof JinjaTemplateChatWrapper))
        throw invalidArgument("this model's chat template is a built-in one, which takes no template variables");
      if (kept.size >= KEPT) kept.delete(kept.keys().next().value as string);
      kept.set(key, wrapper);
    }
    return wrapper;
  };
}
