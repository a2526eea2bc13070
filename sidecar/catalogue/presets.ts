// The presets file (`--models-preset FILE`, JSON): per-model options keyed by model name, checked
// strictly — an unknown key or a value of the wrong type stops the start with a message naming it.
import { readFileSync } from "node:fs";
import { specializedChatWrapperTypeNames } from "node-llama-cpp";
import { MAX_STEP_TOKENS } from "../engine/llama/batch-shares.js";
import type { FimOrder } from "../engine/llama/fim-tokens.js";

/** One model's options; each unset one falls back to the sidecar's flag. */
export interface Preset {
  /** A source (path, name in the models folder, hf:, https): adds the model to the catalogue. */
  readonly model?: string;
  readonly contextSize?: number | "auto";
  readonly sequences?: number;
  /** A node-llama-cpp chat wrapper name (`chatML`, `llama3.1`…) or a Jinja template's text. */
  readonly chatTemplate?: string;
  readonly gpuLayers?: number | "auto" | "max";
  /** Other names that reach the model. */
  readonly alias?: readonly string[];
  /** Tokens prompt lookup drafts at most per step; 0: none (`--spec-lookup`). */
  readonly specLookup?: number;
  /** A draft model of the same vocabulary (a source like `model`; `--model-draft`), in place of prompt lookup. */
  readonly draft?: string;
  /** The multimodal projector (a source like `model`; `--mmproj`): images (and sounds) in. */
  readonly mmproj?: string;
  /** The order its fill-in-the-middle prompts take (default prefix-suffix-middle). */
  readonly fimOrder?: FimOrder;
  /** Its LoRA adapters by name (`--lora`): each a model of its own name, loaded with this one. */
  readonly lora?: Readonly<Record<string, LoraPreset>>;
}

/** A LoRA adapter: its file (a source like `model`) and its default scale (1 unless given). */
export interface LoraPreset {
  readonly path: string;
  readonly scale?: number;
}

export type Presets = Readonly<Record<string, Preset>>;

const KEYS = [
  "model",
  "contextSize",
  "sequences",
  "chatTemplate",
  "gpuLayers",
  "alias",
  "specLookup",
  "draft",
  "mmproj",
  "fimOrder",
  "lora",
] as const;
type Key = (typeof KEYS)[number];

/** A key's value when it passes its check, else what it must be. */
type Checked = { readonly value: unknown } | { readonly error: string };
const pass = (value: unknown): Checked => ({ value });
const fail = (error: string): Checked => ({ error });
const isCount = (v: unknown, min: number): boolean => Number.isInteger(v) && (v as number) >= min;

/** A model's source: a path, a name in the models folder, hf: or https. */
const sourceCheck = (v: unknown): Checked =>
  typeof v === "string" && v !== ""
    ? pass(v)
    : fail("must be a non-empty string (a path, a name in the models folder, hf: or https)");

const CHECKS: Record<Key, (value: unknown) => Checked> = {
  model: (v) => sourceCheck(v),
  draft: (v) => sourceCheck(v),
  mmproj: (v) => sourceCheck(v),
  contextSize: (v) => (v === "auto" || isCount(v, 16) ? pass(v) : fail('must be "auto" or an integer of at least 16')),
  sequences: (v) => (isCount(v, 1) ? pass(v) : fail("must be an integer of at least 1")),
  chatTemplate: (v) =>
    typeof v === "string" && isChatTemplate(v)
      ? pass(v)
      : fail(`must be a chat wrapper name (${specializedChatWrapperTypeNames.join(", ")}) or a Jinja template`),
  gpuLayers: (v) =>
    v === "auto" || v === "max" || isCount(v, 0) ? pass(v) : fail('must be "auto", "max" or a number of layers'),
  specLookup: (v) =>
    isCount(v, 0) && (v as number) < MAX_STEP_TOKENS
      ? pass(v)
      : fail(`must be an integer from 0 to ${MAX_STEP_TOKENS - 1}`),
  fimOrder: (v) =>
    v === "prefix-suffix-middle" || v === "suffix-prefix-middle"
      ? pass(v)
      : fail('must be "prefix-suffix-middle" or "suffix-prefix-middle"'),
  lora: (v) => loraCheck(v),
  alias: (v) => {
    const names = typeof v === "string" ? [v] : v;
    const good =
      Array.isArray(names) && names.length > 0 && names.every((n) => typeof n === "string" && n.trim() !== "");
    return good ? pass(names) : fail("must be a non-empty string or a list of them");
  },
};

/** A LoRA adapter's scale: a finite number (0 turns it off; llama.cpp takes negative ones too). */
export const isLoraScale = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);

/** `lora`: an object of adapters by name, each `{ "path": source, "scale"?: number }`. */
function loraCheck(v: unknown): Checked {
  const shape = 'must be an object of adapters by name, each {"path": a source, "scale": a number}';
  if (!isObject(v) || Object.keys(v).length === 0) return fail(shape);
  for (const [name, adapter] of Object.entries(v)) {
    const good =
      name.trim() !== "" &&
      isObject(adapter) &&
      Object.keys(adapter).every((k) => k === "path" || k === "scale") &&
      typeof adapter.path === "string" &&
      adapter.path !== "" &&
      (adapter.scale === undefined || isLoraScale(adapter.scale));
    if (!good) return fail(`${shape} ("${name}" is not)`);
  }
  return pass(v);
}

function isChatTemplate(value: string): boolean {
  return (
    (specializedChatWrapperTypeNames as readonly string[]).includes(value) ||
    value.includes("{{") ||
    value.includes("{%")
  );
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** One model's entry, checked key by key. */
function presetOf(where: string, name: string, value: unknown): Preset {
  if (name.trim() === "") throw new Error(`${where}: a model name is empty`);
  if (!isObject(value)) throw new Error(`${where}: "${name}" must be an object of options (${KEYS.join(", ")})`);
  const preset: Record<string, unknown> = {};
  for (const [key, raw] of Object.entries(value)) {
    if (!(KEYS as readonly string[]).includes(key))
      throw new Error(`${where}: "${name}" has an unknown key "${key}" (known: ${KEYS.join(", ")})`);
    const checked = CHECKS[key as Key](raw);
    if ("error" in checked) throw new Error(`${where}: "${name}".${key} ${checked.error}`);
    preset[key] = checked.value;
  }
  return preset as Preset;
}

/** The presets in `text` (the file's content); `where` names the file in messages. */
export function parsePresets(text: string, where: string): Presets {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new Error(`${where} is not JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (!isObject(parsed)) throw new Error(`${where} must hold a JSON object keyed by model name`);
  return Object.fromEntries(Object.entries(parsed).map(([name, value]) => [name, presetOf(where, name, value)]));
}

/** The presets file `path` (`--models-preset`), read and checked. */
export function readPresets(path: string): Presets {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new Error(
      `--models-preset ${path} cannot be read: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  return parsePresets(text, `--models-preset ${path}`);
}
