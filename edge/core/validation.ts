// zod result → InvalidRequestError naming the field at fault (`param`), e.g.
// `messages[0].role`. One issue is reported: the first one, or for a union the
// branch that got furthest into the input.
import type * as z from "zod";
import { InvalidRequestError } from "../base/errors.js";

type Path = readonly PropertyKey[];
type Issue = z.core.$ZodIssue;

/** `["messages", 0, "role"]` → `messages[0].role`; the root → null. */
export function formatParam(path: Path): string | null {
  let out = "";
  for (const key of path) {
    if (typeof key === "number") out += `[${key}]`;
    else out += out === "" ? String(key) : `.${String(key)}`;
  }
  return out === "" ? null : out;
}

/** How far an issue got into the input: deeper is better, a type mismatch is worst. */
function rank(found: { issue: Issue; path: Path }): number {
  return found.path.length * 2 + (found.issue.code === "invalid_type" ? 0 : 1);
}

/**
 * The issue worth reporting, with its full path: for a union, the branch that got
 * furthest into the input; for a bad record key, the key's own issue.
 */
function deepest(issue: Issue, base: Path): { issue: Issue; path: Path } {
  const path = [...base, ...issue.path];
  if (issue.code === "invalid_key") {
    const inner = issue.issues[0];
    return inner === undefined ? { issue, path } : { issue: inner, path };
  }
  if (issue.code !== "invalid_union" || issue.errors.length === 0) return { issue, path };
  let best: { issue: Issue; path: Path } | undefined;
  for (const branch of issue.errors) {
    const first = branch[0];
    if (first === undefined) continue;
    const candidate = deepest(first, path);
    if (best === undefined || rank(candidate) > rank(best)) best = candidate;
  }
  // When every branch failed on the type of the value itself, the union says more.
  return best !== undefined && rank(best) > path.length * 2 ? best : { issue, path };
}

function valueAt(root: unknown, path: Path): unknown {
  let value = root;
  for (const key of path) {
    if (value === null || typeof value !== "object") return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

function expectedTypes(issue: Issue): string {
  if (issue.code !== "invalid_union") return "";
  const types = issue.errors.flatMap((branch) =>
    branch.flatMap((inner) => (inner.code === "invalid_type" ? [inner.expected] : [])),
  );
  return [...new Set(types)].join(" or ");
}

function describe(issue: Issue, param: string | null, input: unknown, path: Path): string {
  const message = issue.message.replace(/^Invalid input: /, "");
  if (param === null) return `Invalid request body: ${message}`;
  if (valueAt(input, path) === undefined) return `Missing required parameter: '${param}'.`;
  if (issue.code === "invalid_union") {
    // A union with its own message (an unknown discriminator, say) says it best.
    if (issue.errors.length === 0 && message !== "Invalid input") return `Invalid '${param}': ${message}`;
    const expected = expectedTypes(issue);
    return expected === "" ? `Invalid value for '${param}'.` : `Invalid type for '${param}': expected ${expected}.`;
  }
  return `Invalid '${param}': ${message}`;
}

/** Parses `input` with `schema` or throws an InvalidRequestError (HTTP 400). */
export function parseRequest<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const first = result.error.issues[0];
  if (first === undefined) throw new InvalidRequestError("Invalid request body.");
  const { issue, path } = deepest(first, []);
  const param = formatParam(path);
  return throwInvalid(describe(issue, param, input, path), param);
}

function throwInvalid(message: string, param: string | null): never {
  throw new InvalidRequestError(message, { param });
}
