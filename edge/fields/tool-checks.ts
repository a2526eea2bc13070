// Tool definitions and calls, protocol-neutral: the checks every protocol makes on the tools a
// request offers and on the calls and results in its history, before the sidecar is called
// (which checks them again). Each protocol's schema calls these from its superRefine, so the
// errors come out in that protocol's shape with the field's path.
import * as z from "zod";

/** A tool name as the proto allows it (`Tool.name`; the sidecar's twin is in sidecar/engine/chat/prompt.ts). */
export const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** A tool or function name as every protocol accepts it. */
export const toolName = () =>
  z.string().regex(TOOL_NAME, { error: "a tool name has 1 to 64 characters: letters, digits, '_' or '-'" });

/** A JSON schema object (tool parameters): an object, not an array or a scalar. */
export const schemaObject = () => z.record(z.string(), z.unknown(), { error: "expected a JSON schema object" });

type Issue = { readonly message: string; readonly path: readonly PropertyKey[] };

/** Names offered twice. */
export function duplicateNames(names: readonly string[], path: (index: number) => PropertyKey[]): Issue[] {
  const seen = new Set<string>();
  const issues: Issue[] = [];
  names.forEach((name, index) => {
    if (seen.has(name)) issues.push({ message: `the tool name "${name}" is used twice`, path: path(index) });
    seen.add(name);
  });
  return issues;
}

/** A tool choice that names a tool the request does not offer. */
export function unknownChoice(choice: string | undefined, names: readonly string[], path: PropertyKey[]): Issue[] {
  if (choice === undefined || names.includes(choice)) return [];
  return [{ message: `the tool choice names "${choice}", which is not among the tools`, path }];
}

/**
 * Walks a history in order: `calls` are ids an assistant message made, `results` ids a tool
 * result answers; a result must answer a call made before it.
 */
export class CallLedger {
  readonly #made = new Set<string>();
  readonly issues: Issue[] = [];

  call(id: string): void {
    this.#made.add(id);
  }

  result(id: string, path: PropertyKey[]): void {
    if (!this.#made.has(id))
      this.issues.push({ message: `"${id}" answers no tool call made earlier in the conversation`, path });
  }
}

/** Adds `issues` to a zod refinement context. */
export function report(ctx: z.RefinementCtx, issues: readonly Issue[]): void {
  for (const issue of issues) ctx.addIssue({ code: "custom", message: issue.message, path: [...issue.path] });
}
