// The catalogue: every model this sidecar may serve, by name, whether loaded or not — each
// `--model`, each preset with a `model`, every `.gguf` of `--models-dir` when that folder was given,
// else the demo model alone — and which entry a request's model name reaches
// (docs/decisions.md, "Many models on one sidecar").
import path from "node:path";
import { alreadyExists, notFound } from "../engine/engine-errors.js";
import { isRemoteModel, knownFileName, modelsInFolder } from "./model-source.js";
import type { Preset, Presets } from "./presets.js";

/** A LoRA adapter of a catalogue model: a model of its own name, served by its base's weights. */
export interface AdapterEntry {
  readonly name: string;
  /** Its file, as given: a path, a name in the models folder, hf: or https. */
  readonly source: string;
  /** Its default scale: given at start, changed by POST /lora-adapters (SetLoraScale), kept across loads. */
  scale: number;
}

export interface CatalogueEntry {
  /** The name clients use (ModelInfo.id). */
  readonly name: string;
  /** Where it comes from, as given: a path, a name in the models folder, hf: or https. */
  readonly source: string;
  readonly aliases: readonly string[];
  /** Its own options (the presets file); unset ones follow the sidecar's flags. */
  readonly preset: Preset;
  /** Its LoRA adapters (`--lora`, a preset's `lora`); none for most. */
  readonly adapters?: readonly AdapterEntry[];
}

export interface CatalogueSources {
  /** Every `--model` (MODEL may hold several, comma-separated). */
  readonly models: readonly string[];
  /** `--model-id`: the name of the one `--model`. */
  readonly modelId?: string | undefined;
  /** The models folder: where names are looked up and downloads land. */
  readonly folder: string;
  /** Whether every `.gguf` in the folder is served (`--models-dir` given explicitly). */
  readonly serveFolder: boolean;
  readonly presets?: Presets | undefined;
  /** `--default-model`: the model that serves names the catalogue does not know. */
  readonly defaultModel?: string | undefined;
  /** `--mmproj`: the projector of the `--model` entries (a preset's `mmproj` wins). */
  readonly mmproj?: string | undefined;
  /** `--model-draft`: the draft model of the `--model` entries (a preset's `draft` wins). */
  readonly modelDraft?: string | undefined;
  /** `--lora`: the adapters of the one `--model` (a preset's `lora` is added to them). */
  readonly lora?: readonly { readonly name: string; readonly path: string; readonly scale: number }[] | undefined;
  /** Served when nothing else is (the demo model's path). */
  readonly fallback?: string | undefined;
}

/** The name a source gets: its file name without `.gguf`; a remote one without a file name, its address less `hf:`. */
export function nameOf(source: string): string {
  if (!isRemoteModel(source)) return path.basename(source).replace(/\.gguf$/i, "");
  const file = knownFileName(source);
  if (file !== undefined) return file.replace(/\.gguf$/i, "");
  if (/^https?:\/\//i.test(source))
    return decodeURIComponent(new URL(source).pathname.split("/").filter(Boolean).at(-1) ?? source);
  return source.replace(/^(hf|huggingface):/i, "");
}

/** The entries before presets apply: --model, presets with a `model`, the folder's files. */
function sourcesOf(
  sources: CatalogueSources,
  list: (folder: string) => string[],
): { name: string; source: string; given?: boolean }[] {
  if (sources.modelId !== undefined && sources.models.length > 1) {
    throw new Error("--model-id names a single --model; with several, name each in the presets file (--models-preset)");
  }
  const given = sources.models.map((source) => ({ name: sources.modelId ?? nameOf(source), source, given: true }));
  const preset = Object.entries(sources.presets ?? {}).flatMap(([name, p]) =>
    p.model === undefined ? [] : [{ name, source: p.model }],
  );
  const explicit = [...given, ...preset];
  for (const [i, entry] of explicit.entries()) {
    const earlier = explicit.slice(0, i).find((e) => e.name === entry.name);
    if (earlier !== undefined)
      throw new Error(
        `two models are named "${entry.name}" (${earlier.source}, ${entry.source}): name one in --models-preset`,
      );
  }
  const taken = new Set(explicit.map((e) => e.name));
  const folder = sources.serveFolder ? list(sources.folder).filter((name) => !taken.has(name)) : [];
  const all = [...explicit, ...folder.map((name) => ({ name, source: path.join(sources.folder, `${name}.gguf`) }))];
  if (all.length === 0 && sources.fallback !== undefined)
    return [{ name: sources.modelId ?? nameOf(sources.fallback), source: sources.fallback }];
  if (all.length === 0) throw new Error(`no model to serve: --models-dir ${sources.folder} holds no .gguf file`);
  return all;
}

/**
 * The catalogue of `sources`; a preset naming no model, a name or alias used twice, or an unknown --default-model stop
 * the start.
 */
export function buildCatalogue(
  sources: CatalogueSources,
  list: (folder: string) => string[] = modelsInFolder,
): Catalogue {
  const found = sourcesOf(sources, list);
  const presets = sources.presets ?? {};
  const names = new Set(found.map((e) => e.name));
  for (const name of Object.keys(presets)) {
    if (!names.has(name))
      throw new Error(
        `--models-preset: "${name}" is no model of the catalogue (${[...names].join(", ")}) and has no "model"`,
      );
  }
  const draft = sources.modelDraft;
  const entries = found.map(({ name, source, given }) => ({
    name,
    source,
    aliases: presets[name]?.alias ?? [],
    preset: {
      ...(given === true && draft !== undefined ? { draft } : {}),
      ...(given === true && sources.mmproj !== undefined ? { mmproj: sources.mmproj } : {}),
      ...presets[name],
    },
  }));
  const withAdapters = entries.map((entry, i) => ({ ...entry, adapters: adaptersOf(sources, found[i]?.given, entry) }));
  const seen = new Map<string, string>();
  for (const entry of withAdapters) {
    for (const alias of [entry.name, ...entry.aliases, ...entry.adapters.map((a) => a.name)]) {
      const owner = seen.get(alias);
      if (owner !== undefined) throw new Error(`--models-preset: "${alias}" names both "${owner}" and "${entry.name}"`);
      seen.set(alias, entry.name);
    }
  }
  return new Catalogue(withAdapters, sources.defaultModel);
}

/** An entry's adapters: `--lora` for the one `--model`, then its preset's `lora`. */
function adaptersOf(sources: CatalogueSources, given: boolean | undefined, entry: CatalogueEntry): AdapterEntry[] {
  const flags = sources.lora ?? [];
  if (flags.length > 0 && sources.models.length !== 1)
    throw new Error("--lora names adapters of the one --model; with several, give each its own in --models-preset");
  const fromFlags = given === true ? flags.map(({ name, path: source, scale }) => ({ name, source, scale })) : [];
  const fromPreset = Object.entries(entry.preset.lora ?? {}).map(([name, a]) => ({
    name,
    source: a.path,
    scale: a.scale ?? 1,
  }));
  return [...fromFlags, ...fromPreset];
}

export class Catalogue {
  #entries: readonly CatalogueEntry[];
  /** The entry that serves names the catalogue does not know (`--default-model`), if any. */
  readonly defaultEntry: CatalogueEntry | undefined;

  constructor(entries: readonly CatalogueEntry[], defaultModel?: string) {
    this.#entries = entries;
    this.defaultEntry = defaultModel === undefined ? undefined : this.find(defaultModel);
    if (defaultModel !== undefined && this.defaultEntry === undefined) {
      throw new Error(`--default-model ${defaultModel} is not in the catalogue (${this.names()})`);
    }
  }

  get entries(): readonly CatalogueEntry[] {
    return this.#entries;
  }

  /** Adds an entry while the sidecar runs (PullModel); ALREADY_EXISTS when its name or an alias is taken. */
  add(entry: CatalogueEntry): void {
    const taken = [entry.name, ...entry.aliases].find((name) => this.find(name) !== undefined);
    if (taken !== undefined) throw alreadyExists(`the catalogue already has a model named "${taken}"`);
    this.#entries = [...this.#entries, entry];
  }

  /** Drops the entry named `name` (DeleteModel); the default model stays (its entry is not removed). */
  remove(name: string): void {
    this.#entries = this.#entries.filter((e) => e.name !== name);
  }

  /** The entry named `name`, one of its aliases, or the base of the adapter named `name`. */
  find(name: string): CatalogueEntry | undefined {
    return (
      this.entries.find((e) => e.name === name) ??
      this.entries.find((e) => e.aliases.includes(name)) ??
      this.entries.find((e) => e.adapters?.some((a) => a.name === name))
    );
  }

  /** The adapter named `name` and its base; undefined when `name` names no adapter. */
  adapter(name: string): { readonly base: CatalogueEntry; readonly adapter: AdapterEntry } | undefined {
    for (const base of this.entries) {
      const adapter = base.adapters?.find((a) => a.name === name);
      if (adapter !== undefined) return { base, adapter };
    }
    return undefined;
  }

  /**
   * The entry a request naming `name` reaches: that model; with one model, any name; an empty name
   * or an unknown one, the default model. NOT_FOUND otherwise.
   */
  resolve(name: string): CatalogueEntry {
    const [only, ...others] = this.entries;
    if (only !== undefined && others.length === 0) return only;
    const found = this.find(name) ?? this.defaultEntry ?? (name === "" ? only : undefined);
    if (found === undefined) throw notFound(`model "${name}" is not served here (served: ${this.names()})`);
    return found;
  }

  names(): string {
    return this.entries.map((e) => e.name).join(", ");
  }
}
