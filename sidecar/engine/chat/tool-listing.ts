// The offered tools, for a template that writes calls but never shows the model which tools it has
// (DeepSeek R1's distills, DeepSeek V3.1's): a system message lists them, with a call written as the
// template itself writes one, so the model sees both what it may call and how (docs/decisions.md,
// "Tools listed where the template lists none").
import { isRendered, renderReply, type TemplateContext } from "../syntax/probe.js";

type Message = Record<string, unknown>;

export interface ListedTool {
  readonly name: string;
  readonly description: string;
  readonly schema: object;
}

/** An example value of a JSON Schema type, for the example call. */
function exampleValue(schema: Record<string, unknown>): unknown {
  switch (schema.type) {
    case "string":
      return Array.isArray(schema.enum) ? schema.enum[0] : "...";
    case "number":
    case "integer":
      return 1;
    case "boolean":
      return true;
    case "array":
      return [];
    case "object":
      return {};
    default:
      return null;
  }
}

/** The example call's arguments: the first property of the tool's parameters, if any. */
function exampleArguments(schema: object): Record<string, unknown> {
  const properties = (schema as { properties?: Record<string, Record<string, unknown>> }).properties ?? {};
  const first = Object.entries(properties)[0];
  return first === undefined ? {} : { [first[0]]: exampleValue(first[1]) };
}

/**
 * The listing: the tools as JSON, then a turn calling the first one as the template writes it (where it renders one).
 */
function listing(source: string, ctx: TemplateContext, tools: readonly ListedTool[]): string {
  const list = tools.map((t) => ({ name: t.name, description: t.description, parameters: t.schema }));
  const first = tools[0] as ListedTool;
  const call = { name: first.name, arguments: exampleArguments(first.schema) };
  const example = renderReply(source, ctx, [], { calls: [call] });
  // The turn as the template writes it, its end included: the model sees where a turn of calls stops.
  const shown = isRendered(example) ? example.reply.trim() : "";
  const how = shown === "" ? "" : `\n\nTo call a tool, write the call as in this example:\n${shown}`;
  return `You can call these tools (parameters as JSON Schema):\n${JSON.stringify(list, null, 2)}${how}`;
}

/**
 * Listings by template, then by what else shapes them (special tokens, variables, tools); a few kept for each template.
 */
const listings = new Map<string, Map<string, string>>();
const LISTINGS_KEPT = 64;

/** The listing, kept for a template and tool set seen before (an agent sends the same tools every turn). */
function cachedListing(source: string, ctx: TemplateContext, tools: readonly ListedTool[]): string {
  const kept = listings.get(source) ?? new Map<string, string>();
  listings.set(source, kept);
  const key = JSON.stringify([ctx.bos, ctx.eos, ctx.variables ?? {}, tools]);
  let text = kept.get(key);
  if (text === undefined) {
    text = listing(source, ctx, tools);
    if (kept.size >= LISTINGS_KEPT) kept.delete(kept.keys().next().value as string);
    kept.set(key, text);
  }
  return text;
}

/** The messages with the tools listed in the system message (joined to the first one, or a new one first). */
export function withToolListing(
  messages: readonly Message[],
  source: string,
  ctx: TemplateContext,
  tools: readonly ListedTool[],
): readonly Message[] {
  if (tools.length === 0) return messages;
  const text = cachedListing(source, ctx, tools);
  const first = messages[0];
  if (first?.role === "system")
    return [{ ...first, content: `${String(first.content)}\n\n${text}` }, ...messages.slice(1)];
  return [{ role: "system", content: text }, ...messages];
}
