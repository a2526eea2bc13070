// A JSON schema as node-llama-cpp's grammar generator should see it. The generator makes every
// property of an object required (its types say `required` has no effect) and knows `oneOf` but
// not `anyOf`: a tool whose schema has optional properties then forces the model to fill them
// all (Claude Code's Read got a made-up `pages`, and the call was refused). Here an object's
// optional properties become alternatives of the object (each with the required ones and some of
// the optional ones, in their order), and `anyOf` becomes `oneOf`, which for a grammar is the same.

/** Optional properties up to which every combination is an alternative (2^4 = 16 objects). */
export const MAX_COMBINED_OPTIONAL = 4;

type Schema = Record<string, unknown>;

const isSchema = (value: unknown): value is Schema =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** Which optional properties each alternative has: every subset for a few, else none, each alone, and all. */
function optionalSets(optional: readonly string[]): string[][] {
  if (optional.length <= MAX_COMBINED_OPTIONAL) {
    return Array.from({ length: 2 ** optional.length }, (_, mask) =>
      optional.filter((_, i) => (mask & (1 << i)) !== 0),
    );
  }
  return [[], ...optional.map((name) => [name]), [...optional]];
}

function objectAlternatives(schema: Schema, properties: Schema): Schema {
  const names = Object.keys(properties);
  const required = Array.isArray(schema["required"])
    ? new Set(schema["required"].filter((n): n is string => typeof n === "string"))
    : new Set<string>();
  const optional = names.filter((name) => !required.has(name));
  if (optional.length === 0) return schema;
  const min = typeof schema["minProperties"] === "number" ? schema["minProperties"] : 0;
  const max = typeof schema["maxProperties"] === "number" ? schema["maxProperties"] : Infinity;
  const { required: _required, minProperties: _min, maxProperties: _max, ...rest } = schema;
  const alternatives = optionalSets(optional)
    .map((chosen) => names.filter((name) => required.has(name) || chosen.includes(name)))
    .filter((kept) => kept.length >= min && kept.length <= max)
    .map((kept) => ({ ...rest, properties: Object.fromEntries(kept.map((name) => [name, properties[name]])) }));
  return alternatives.length === 1 ? (alternatives[0] as Schema) : { oneOf: alternatives };
}

/** The schema with optional properties as alternatives and `anyOf` as `oneOf`, at every depth. */
export function grammarSchema(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(grammarSchema);
  if (!isSchema(value)) return value;
  const out: Schema = {};
  for (const [key, child] of Object.entries(value)) {
    if (key === "properties" && isSchema(child))
      out[key] = Object.fromEntries(Object.entries(child).map(([name, s]) => [name, grammarSchema(s)]));
    else if (key === "$defs" && isSchema(child))
      out[key] = Object.fromEntries(Object.entries(child).map(([name, s]) => [name, grammarSchema(s)]));
    else if (key === "anyOf") out["oneOf"] = grammarSchema(child);
    else if (["items", "prefixItems", "oneOf", "additionalProperties"].includes(key)) out[key] = grammarSchema(child);
    else out[key] = child;
  }
  const properties = out["properties"];
  return isSchema(properties) ? objectAlternatives(out, properties) : out;
}
