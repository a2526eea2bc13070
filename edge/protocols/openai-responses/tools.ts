// The tools of a Responses request. Function tools are offered to the model; so are the function
// tools of a `namespace` tool (`{type: "namespace", name, description, tools}`, as Codex groups
// its multi-agent tools): offered under their own names beside the others (a name may not repeat
// across namespaces), each call of one answered with the namespace's name in `namespace`. Every
// other type — top level or in a namespace — is ignored and named in the Response's `warnings`.
import * as z from "zod";
import { schemaObject, toolName } from "../../fields/tool-checks.js";

export const functionTool = z.object({
  type: z.literal("function"),
  name: toolName(),
  description: z.string().nullish(),
  parameters: schemaObject().nullish(),
  strict: z.boolean().nullish(),
});
export type ResponsesFunctionTool = z.output<typeof functionTool>;

/** Any tool: function and namespace tools are checked in full; other types are ignored. */
export const anyTool = z.looseObject({ type: z.string({ error: "expected a tool type" }) });
type AnyTool = z.output<typeof anyTool>;

export const namespaceTool = z.object({
  type: z.literal("namespace"),
  name: toolName(),
  description: z.string().nullish(),
  tools: z.array(anyTool),
});
type NamespaceTool = z.output<typeof namespaceTool>;

/** A function tool offered to the model, where the request has it, and its namespace if any. */
export interface OfferedTool {
  readonly tool: ResponsesFunctionTool;
  readonly path: PropertyKey[];
  readonly namespace?: NamespaceTool | undefined;
}

/** A tool of the request checked as what its type says: the issues, or the parsed tool. */
export function checkTool(tool: AnyTool): z.ZodSafeParseResult<ResponsesFunctionTool | NamespaceTool> | undefined {
  if (tool.type === "function") return functionTool.safeParse(tool);
  if (tool.type === "namespace") return namespaceTool.safeParse(tool);
  return undefined;
}

/** Every function tool the request offers, namespaces' included, in order. */
export function offeredTools(tools: readonly AnyTool[] | null | undefined): OfferedTool[] {
  return (tools ?? []).flatMap((tool, i): OfferedTool[] => {
    const parsed = checkTool(tool);
    if (parsed?.success !== true) return [];
    const value = parsed.data;
    if (value.type === "function") return [{ tool: value, path: ["tools", i] }];
    return value.tools.flatMap((inner, j) => {
      const fn = functionTool.safeParse(inner);
      return fn.success ? [{ tool: fn.data, path: ["tools", i, "tools", j], namespace: value }] : [];
    });
  });
}

/** The function tools, as the model is offered them (a namespace's description goes before each of its tools'). */
export function functionTools(tools: readonly AnyTool[] | null | undefined): ResponsesFunctionTool[] {
  return offeredTools(tools).map(({ tool, namespace }) => {
    const intro = namespace?.description == null || namespace.description === "" ? "" : `${namespace.description}\n\n`;
    return intro === "" ? tool : { ...tool, description: `${intro}${tool.description ?? ""}` };
  });
}

/** Each namespaced function's namespace, by function name. */
export function toolNamespaces(tools: readonly AnyTool[] | null | undefined): ReadonlyMap<string, string> {
  return new Map(
    offeredTools(tools).flatMap(({ tool, namespace }) =>
      namespace === undefined ? [] : [[tool.name, namespace.name] as const],
    ),
  );
}

/** The tool types a request sent that this server ignores, each once. */
export function ignoredTools(tools: readonly AnyTool[] | null | undefined): string[] {
  const types = (tools ?? []).flatMap((tool) => {
    if (tool.type !== "namespace") return [tool.type];
    const parsed = namespaceTool.safeParse(tool);
    return parsed.success ? parsed.data.tools.map((inner) => inner.type) : [];
  });
  return [...new Set(types.filter((type) => type !== "function" && type !== "namespace"))];
}

const echoFunction = (t: ResponsesFunctionTool) => ({
  type: "function" as const,
  name: t.name,
  description: t.description ?? null,
  parameters: t.parameters ?? null,
  strict: t.strict ?? true,
});

/** The Response's `tools`: the function tools and the namespaces (with their function tools) as sent. */
export function echoedTools(tools: readonly AnyTool[] | null | undefined): unknown[] {
  return (tools ?? []).flatMap((tool): unknown[] => {
    const parsed = checkTool(tool);
    if (parsed?.success !== true) return [];
    const value = parsed.data;
    if (value.type === "function") return [echoFunction(value)];
    const inner = value.tools.flatMap((t) => {
      const fn = functionTool.safeParse(t);
      return fn.success ? [echoFunction(fn.data)] : [];
    });
    return [{ type: "namespace", name: value.name, description: value.description ?? null, tools: inner }];
  });
}
