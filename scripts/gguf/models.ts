// The project's model catalogue, and `ensureModels`, which writes the missing or outdated ones.
//
// A model is outdated when the generator's source (this folder) changed since it was written: each
// `<name>.gguf` has a `<name>.gguf.recipe` beside it recording the source hash and the file's size
// and SHA-256. Files are written to a temporary name and renamed, so concurrent callers are safe.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { CHATML_TEMPLATE } from "./llama.js";
import { buildRandomModel, RANDOM_60M, RANDOM_TINY } from "./random.js";
import { buildScriptedModel, type ScriptedSpec } from "./scripted.js";
import { TOOLS_TEMPLATE } from "./tools-template.js";
import { writeGguf, type GgufFile } from "./writer.js";

/**
 * `npm start`'s default model. Completion "Once upon a time" → " Once", " upon", " a", `</s>`;
 * chat (any user message) → "Hi", " there", `<|im_end|>`.
 */
export const DEMO_SPEC: ScriptedSpec = {
  name: "demo",
  chatTemplate: CHATML_TEMPLATE,
  scripts: [
    { after: "Once upon a time", reply: " Once upon a", end: "eos" },
    { after: "\n", reply: "Hi there", end: "im_end" },
  ],
};

/**
 * The test model. Completion "Once upon a time" → " there lived a tiny llama (🦙)." then `</s>`
 * (🦙 as four byte tokens); chat → "It is sunny in Tokyo, 22°C. ☀️" then `<|im_end|>`; a prompt
 * ending in " Sing" → " la" forever.
 */
export const SCRIPTED_SPEC: ScriptedSpec = {
  name: "scripted",
  chatTemplate: CHATML_TEMPLATE,
  scripts: [
    { after: "Once upon a time", reply: " there lived a tiny llama (🦙).", end: "eos" },
    { after: "\n", reply: "It is sunny in Tokyo, 22°C. ☀️", end: "im_end" },
    { after: "Let us sing. Sing", reply: " la", end: "loop" },
  ],
};

/** The reply of the `tools` model to a chat without a tool call to make. */
const TOOLS_REPLY = ["<think>", "Checking", " the", " forecast.", "</think>", "It", " is", " sunny", " in", " Tokyo,", " 22", "°", "C.", " ", "☀️"];
/** The call syntax, as the grammar-forced stretches are cut (the model prefers these pieces there). */
const CALL_NAME_PREFIX = '{"name": "';
const CALL_PARAMS_PREFIX = '", "arguments": ';

/**
 * The tools and reasoning test model (template: tools-template.ts). A chat with tools offered
 * and no tool result yet → `<tool_call>` then, with the grammar the sidecar applies to calls,
 * `\n{"name": "get_weather", "arguments": ` and the arguments in three tokens `{"`, `city`,
 * `":"Tokyo"}`, then `}\n</tool_call>` and `<|im_end|>`. Any other chat (no tools, or a tool
 * result in the prompt) → `<think>Checking the forecast.</think>It is sunny in Tokyo, 22°C. ☀️`.
 * What decides: whether the prompt holds `<tool_call>` (the tools' instructions) without
 * `<tool_response>` (scripted.ts, ContextSwitch).
 */
export const TOOLS_SPEC: ScriptedSpec = {
  name: "tools",
  chatTemplate: TOOLS_TEMPLATE,
  contextSwitch: {
    userDefined: ["<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>", "<think>", "</think>"],
    triggers: [
      { piece: "<tool_call>", value: 1 },
      { piece: "<tool_response>", value: -10 },
    ],
    next: "<tool_call>",
    preferred: [CALL_NAME_PREFIX, "get_weather", CALL_PARAMS_PREFIX, "</tool_call>"],
  },
  scripts: [
    { after: "\n", reply: TOOLS_REPLY, end: "im_end" },
    { after: [CALL_PARAMS_PREFIX], reply: ['{"', "city", '":"Tokyo"}', "}"], end: "im_end" },
    { after: ["</tool_call>"], reply: [], end: "im_end" },
  ],
};

interface CatalogueEntry {
  readonly description: string;
  /** Written by `ensureModels()` when no list is given. */
  readonly byDefault: boolean;
  readonly build: () => GgufFile;
}

export const CATALOGUE = {
  demo: { description: "scripted demo model served by npm start", byDefault: true, build: () => buildScriptedModel(DEMO_SPEC).file },
  scripted: { description: "scripted test model", byDefault: true, build: () => buildScriptedModel(SCRIPTED_SPEC).file },
  tools: { description: "scripted tool-calling and reasoning model", byDefault: true, build: () => buildScriptedModel(TOOLS_SPEC).file },
  "random-tiny": { description: "random weights, ~1 MB", byDefault: true, build: () => buildRandomModel(RANDOM_TINY).file },
  "random-60m": { description: "random weights, 60M parameters F16, ~120 MB", byDefault: false, build: () => buildRandomModel(RANDOM_60M).file },
} as const satisfies Record<string, CatalogueEntry>;

export type ModelName = keyof typeof CATALOGUE;
export type DefaultModelName = "demo" | "scripted" | "tools" | "random-tiny";
export const MODEL_NAMES = Object.keys(CATALOGUE) as ModelName[];
export const DEFAULT_MODELS: readonly DefaultModelName[] = ["demo", "scripted", "tools", "random-tiny"];

export const isModelName = (name: string): name is ModelName => Object.hasOwn(CATALOGUE, name);

/** The project root (this file is scripts/gguf/models.ts). */
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const SOURCES = ["writer.ts", "llama.ts", "scripted.ts", "random.ts", "models.ts", "tools-template.ts"];

/** Relative directories are taken from the project root, so the cwd does not matter. */
export const resolveModelDir = (dir: string): string => (isAbsolute(dir) ? dir : resolve(ROOT, dir));

/** Where the model lives: `<dir>/<name>.gguf` (absolute). */
export function modelPath(name: ModelName, dir = "models"): string {
  return join(resolveModelDir(dir), `${name}.gguf`);
}

let sourceHash: string | undefined;
function recipeOf(name: ModelName): string {
  if (sourceHash === undefined) {
    const h = createHash("sha256");
    for (const file of SOURCES) h.update(file).update(readFileSync(new URL(`./${file}`, import.meta.url)));
    sourceHash = h.digest("hex");
  }
  return createHash("sha256").update(sourceHash).update(name).digest("hex");
}

interface Recipe {
  readonly recipe: string;
  readonly size: number;
  readonly sha256: string;
}

function readRecipe(path: string): Recipe | undefined {
  try {
    return JSON.parse(readFileSync(`${path}.recipe`, "utf8")) as Recipe;
  } catch {
    return undefined;
  }
}

function isCurrent(name: ModelName, path: string): boolean {
  const recorded = readRecipe(path);
  if (!recorded || recorded.recipe !== recipeOf(name) || !existsSync(path)) return false;
  return statSync(path).size === recorded.size;
}

/** Builds a catalogue model in memory (for tests of determinism). */
export function buildModel(name: ModelName): GgufFile {
  return CATALOGUE[name].build();
}

/**
 * Writes the catalogue models that are missing or outdated into `dir` and returns their absolute
 * paths by name. Without a list: the default models (`random-60m` only when asked for).
 */
export async function ensureModels<N extends ModelName = DefaultModelName>(
  dir = "models",
  which: readonly N[] = DEFAULT_MODELS as readonly ModelName[] as readonly N[],
): Promise<Record<N, string>> {
  const out = {} as Record<N, string>;
  mkdirSync(resolveModelDir(dir), { recursive: true });
  for (const name of which) {
    if (!isModelName(name)) throw new Error(`unknown model "${String(name)}"; known: ${MODEL_NAMES.join(", ")}`);
    const path = modelPath(name, dir);
    if (!isCurrent(name, path)) {
      const { bytes, sha256 } = writeGguf(path, buildModel(name));
      const recipe: Recipe = { recipe: recipeOf(name), size: bytes, sha256 };
      const tmp = `${path}.recipe.${process.pid}.tmp`;
      writeFileSync(tmp, `${JSON.stringify(recipe)}\n`);
      renameSync(tmp, `${path}.recipe`);
    }
    out[name] = path;
  }
  return out;
}
