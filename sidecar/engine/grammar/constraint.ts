// Output constraints (a JSON schema or a GBNF grammar) as node-llama-cpp grammars, and the cache
// of recently built grammars.
import { grammarSchema } from "./grammar-schema.js";
import { gbnfSyntaxError } from "./gbnf-check.js";
import { LlamaGrammarEvaluationState, LlamaText, type Llama, type LlamaGrammar } from "node-llama-cpp";
import type { OutputConstraint } from "../../../proto/gen/inference/v1/inference_pb.js";
import { createHash } from "node:crypto";
import { invalidArgument } from "../engine-errors.js";
import type { LoadedModel } from "../llama/model.js";
import { checkSchemaSize, SCHEMA_LIMITS } from "./schema-limits.js";

/** Grammars built recently, by the hash of their source: agents send the same schema every turn. */
const CACHE_SIZE = 64;
const cache = new Map<string, Promise<LlamaGrammar>>();

/** Grammar builds and cache hits, for the tests and /metrics. */
export const grammarCache = { builds: 0, hits: 0 };

export function remember(source: string, build: () => Promise<LlamaGrammar>): Promise<LlamaGrammar> {
  const key = createHash("sha256").update(source).digest("base64");
  let grammar = cache.get(key);
  if (grammar === undefined) {
    grammarCache.builds++;
    grammar = build();
    grammar.catch(() => cache.delete(key));
    cache.set(key, grammar);
    if (cache.size > CACHE_SIZE) cache.delete(cache.keys().next().value as string);
  } else {
    grammarCache.hits++;
    // Most recently used last: the oldest is dropped first.
    cache.delete(key);
    cache.set(key, grammar);
  }
  return grammar;
}

/** The exponent node-llama-cpp's JSON grammars allow on numbers: up to 16 digits. */
const EXPONENT = '([eE] [-+]? ("0" | [1-9] [0-9]{0,15}))?';

/** A string character: node-llama-cpp's rule, less the code points no valid UTF-8 encodes. */
const STRING_CHAR = 'string-char-rule ::= [^"\\\\\\x7F\\x00-\\x1F]';
const VALID_STRING_CHAR = 'string-char-rule ::= [^"\\\\\\x7F\\x00-\\x1F\\uD800-\\uDFFF\\U00110000-\\U7FFFFFFF]';

/**
 * A grammar from a JSON schema. node-llama-cpp's schema grammar lets integers have an exponent
 * (`63e6666`) and numbers an exponent of up to 16 digits (`96652e5569`, which is Infinity), and
 * lets a string take code points that no valid UTF-8 encodes (surrogates, beyond U+10FFFF: one
 * grammar character, several U+FFFD once decoded, so `maxLength` breaks): a schema validator
 * refuses all three. Integers lose the exponent, other numbers keep two digits of it, strings
 * keep to valid code points. (Overlong byte forms of valid code points still pass the grammar;
 * only a model that writes random bytes produces them.) Optional properties stay optional
 * (grammar-schema.ts).
 */
export async function schemaGrammarText(llama: Llama, schema: object): Promise<string> {
  const generated = await llama.createGrammarForJsonSchema(grammarSchema(schema) as never);
  return generated.grammar
    .replace(STRING_CHAR, VALID_STRING_CHAR)
    .split("\n")
    .map((rule) => (rule.startsWith("integer-number-rule ::=") ? rule.replace(` ${EXPONENT}`, "") : rule))
    .join("\n")
    .replaceAll(EXPONENT, "([eE] [-+]? [0-9]{1,2})?");
}

/** node-llama-cpp's JSON grammars end the value with newlines, which its stop trigger catches. */
const JSON_GRAMMAR_END = "\n\n\n\n";

async function schemaGrammar(llama: Llama, schema: object): Promise<LlamaGrammar> {
  return llama.createGrammar({
    grammar: await schemaGrammarText(llama, schema),
    stopGenerationTriggers: [LlamaText(JSON_GRAMMAR_END)],
    trimWhitespaceSuffix: true,
  });
}

export interface ConstraintState {
  readonly state: LlamaGrammarEvaluationState;
  /** Texts the grammar ends the reply with (node-llama-cpp's JSON grammars end in newlines). */
  readonly stopTexts: readonly string[];
  /** Whether whitespace at the end of the reply is dropped. */
  readonly trimWhitespaceSuffix: boolean;
}

/** A grammar llama.cpp would fail to parse is refused before it gets there (gbnf-check.ts). */
function checkGrammarSyntax(text: string): void {
  const problem = gbnfSyntaxError(text);
  if (problem !== undefined) throw invalidArgument(`the grammar does not parse: ${problem}`);
}

/**
 * The grammar a request's constraint asks for, with a fresh evaluation state for one generation;
 * undefined for free text. A schema or grammar that cannot be built is INVALID_ARGUMENT.
 */
export async function constraintState(
  loaded: LoadedModel,
  constraint: OutputConstraint | undefined,
): Promise<ConstraintState | undefined> {
  const kind = constraint?.kind;
  let grammar: Promise<LlamaGrammar>;
  switch (kind?.case) {
    case undefined:
      return undefined;
    case "jsonObject":
      if (!kind.value) return undefined;
      grammar = remember("json", () => loaded.llama.getGrammarFor("json"));
      break;
    case "jsonSchema": {
      let schema: unknown;
      try {
        schema = JSON.parse(kind.value);
      } catch {
        throw invalidArgument("the JSON schema is not valid JSON");
      }
      if (typeof schema !== "object" || schema === null) throw invalidArgument("the JSON schema must be an object");
      checkSchemaSize(schema, kind.value, "the JSON schema");
      grammar = remember(`schema:${kind.value}`, () => schemaGrammar(loaded.llama, schema as object));
      break;
    }
    case "grammar":
      if (kind.value.length > SCHEMA_LIMITS.bytes * 4)
        throw invalidArgument(
          `the grammar is ${kind.value.length} characters: at most ${SCHEMA_LIMITS.bytes * 4} are allowed`,
        );
      checkGrammarSyntax(kind.value);
      grammar = remember(`gbnf:${kind.value}`, () => loaded.llama.createGrammar({ grammar: kind.value }));
      break;
  }
  try {
    const built = await grammar;
    return {
      state: new LlamaGrammarEvaluationState({ model: loaded.model, grammar: built }),
      stopTexts: built.stopGenerationTriggers.map((t) => LlamaText(t as never).toString()).filter((t) => t.length > 0),
      trimWhitespaceSuffix: built.trimWhitespaceSuffix,
    };
  } catch (error) {
    throw invalidArgument(
      `the ${kind.case === "grammar" ? "grammar" : "JSON schema"} cannot be used: ` +
        `${error instanceof Error ? error.message : String(error)}`,
    );
  }
}
