// A GGUF header's metadata as flat keys ("general.architecture", "llama.context_length", ...), the shape
// DescribeModel answers and Ollama's `model_info` shows: numbers, strings, booleans and arrays of them; a long
// array (a tokenizer's tokens, merges, scores) is null unless asked for.
export type MetadataValue = string | number | boolean | null | MetadataValue[];
export type Metadata = Record<string, MetadataValue>;

/** Arrays longer than this are left out (null) unless `verbose`. */
const LONG_ARRAY = 64;

function plain(value: unknown): MetadataValue {
  if (typeof value === "bigint") return Number(value);
  if (typeof value === "number" || typeof value === "string" || typeof value === "boolean") return value;
  if (Array.isArray(value)) return value.map(plain);
  return null;
}

/** The header's nested metadata object, flattened to dotted keys in the file's order. */
export function flatMetadata(metadata: object, verbose: boolean): Metadata {
  const flat: Metadata = {};
  const walk = (node: object, prefix: string): void => {
    for (const [key, value] of Object.entries(node)) {
      const name = prefix === "" ? key : `${prefix}.${key}`;
      if (value !== null && typeof value === "object" && !Array.isArray(value)) walk(value, name);
      else if (Array.isArray(value) && value.length > LONG_ARRAY && !verbose) flat[name] = null;
      else flat[name] = plain(value);
    }
  };
  walk(metadata, "");
  return flat;
}
