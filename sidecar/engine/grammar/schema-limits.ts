// How large a JSON schema (an output constraint's, or a tool's parameters) may be. A grammar is
// checked against every candidate token at every step, and a step is shared by every sequence of
// the batch: a schema with thousands of `enum` values made every token of every request slow
// (measured on the 60M test model: 8 ms a token free, 70 ms with a 1,000-value enum, 300 ms with
// 5,000). Within these limits a grammar builds in a few milliseconds, so it is built on the
// request's own turn; over one, the request is refused naming the limit (docs/contract.md,
// "Limits"). The edge's body limit comes first; these protect the sidecar from direct callers too.
import { invalidArgument } from "../engine-errors.js";

export const SCHEMA_LIMITS = {
  /** The schema's JSON text, in bytes. */
  bytes: 32 * 1024,
  /** `enum` values and `const`s, all of the schema's together. */
  enumValues: 256,
  /** Nesting of objects and arrays. */
  depth: 16,
  /** Properties of all of the schema's objects together. */
  properties: 256,
} as const;

/** Tools one request may offer. */
export const MAX_TOOLS = 128;

interface Counts {
  enumValues: number;
  properties: number;
  depth: number;
}

function walk(node: unknown, depth: number, counts: Counts): void {
  if (depth > counts.depth) counts.depth = depth;
  if (Array.isArray(node)) {
    for (const item of node) walk(item, depth + 1, counts);
    return;
  }
  if (node === null || typeof node !== "object") return;
  const record = node as Record<string, unknown>;
  if (Array.isArray(record["enum"])) counts.enumValues += record["enum"].length;
  if ("const" in record) counts.enumValues += 1;
  const properties = record["properties"];
  if (properties !== null && typeof properties === "object" && !Array.isArray(properties))
    counts.properties += Object.keys(properties).length;
  for (const value of Object.values(record)) walk(value, depth + 1, counts);
}

/** Refuses a schema over a limit, naming it; `what` says whose schema it is. */
export function checkSchemaSize(schema: unknown, text: string, what: string): void {
  const bytes = new TextEncoder().encode(text).byteLength;
  if (bytes > SCHEMA_LIMITS.bytes)
    throw invalidArgument(`${what} is ${bytes} bytes: at most ${SCHEMA_LIMITS.bytes} bytes are allowed`);
  const counts: Counts = { enumValues: 0, properties: 0, depth: 0 };
  walk(schema, 0, counts);
  if (counts.enumValues > SCHEMA_LIMITS.enumValues) {
    throw invalidArgument(
      `${what} has ${counts.enumValues} enum values: at most ${SCHEMA_LIMITS.enumValues} are allowed`,
    );
  }
  if (counts.properties > SCHEMA_LIMITS.properties) {
    throw invalidArgument(
      `${what} has ${counts.properties} properties: at most ${SCHEMA_LIMITS.properties} are allowed`,
    );
  }
  if (counts.depth > SCHEMA_LIMITS.depth * 2) {
    // Each level of a schema is two levels of JSON (a keyword, then its value).
    throw invalidArgument(
      `${what} nests ${Math.ceil(counts.depth / 2)} levels deep: at most ${SCHEMA_LIMITS.depth} are allowed`,
    );
  }
}
