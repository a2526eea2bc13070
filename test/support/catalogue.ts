// A real sidecar serving a catalogue of test models (gguf/models.ts), and what the catalogue tests
// read back: each model's status over ListModels, the per-model gauges of /metrics, the registry's
// event log, and the few requests each test model answers exactly.
import parsePrometheusTextFormat from "parse-prometheus-text-format";
import { ModelStatus, Role, type GenerateResponse } from "../../proto/gen/inference/v1/inference_pb.js";
import { modelPath, type ModelName } from "../../gguf/models.js";
import { buildCatalogue, type CatalogueSources } from "../../sidecar/catalogue/model-catalogue.js";
import type { RegistryEvent } from "../../sidecar/catalogue/registry.js";
import type { RunningSidecar, StartOptions } from "../../sidecar/start-sidecar.js";
import { collect, startTestSidecar, type InferenceClient } from "./sidecar.js";

/** A sidecar whose catalogue holds `models` (test model names, or paths), each named by its file name. */
export function startCatalogue(
  models: readonly (ModelName | string)[],
  options: Partial<StartOptions> = {},
  sources: Partial<CatalogueSources> = {},
): Promise<RunningSidecar> {
  const paths = models.map((m) => (m.endsWith(".gguf") ? m : modelPath(m as ModelName)));
  const catalogue = buildCatalogue({ models: paths, folder: "models", serveFolder: false, ...sources });
  return startTestSidecar({ catalogue, sequences: 1, contextSize: 512, ...options });
}

/** Each model's status by id, as ListModels says (AVAILABLE, LOADING, LOADED, FAILED). */
export async function statuses(client: InferenceClient): Promise<Record<string, string>> {
  const { models } = await client.listModels({});
  return Object.fromEntries(models.map((m) => [m.id, ModelStatus[m.status]]));
}

/** A per-model gauge of /metrics (`sidecar_model_*{model}`); NaN when the model has no series. */
export async function modelGauge(url: string, name: string, model: string): Promise<number> {
  const families = parsePrometheusTextFormat(await (await fetch(`${url}/metrics`)).text());
  const sample = families.find((f) => f.name === name)?.metrics.find((m) => m.labels?.["model"] === model);
  return Number(sample?.value);
}

/**
 * The most models loaded at once according to the registry's own log (counted from the start of a load to its unload).
 */
export function mostLoadedAtOnce(history: readonly RegistryEvent[]): number {
  let loaded = 0;
  let most = 0;
  for (const event of history) {
    if (event.type === "loading") loaded++;
    if (event.type === "unloaded" || event.type === "failed") loaded--;
    most = Math.max(most, loaded);
  }
  return most;
}

/** How many times the registry began loading `model`. */
export const loadsOf = (history: readonly RegistryEvent[], model: string): number =>
  history.filter((e) => e.type === "loading" && e.model === model).length;

type Events = GenerateResponse["event"][];

/**
 * What each test model answers exactly (gguf/models.ts): demo and scripted a prompt, tools a chat, random-60m any 4
 * tokens.
 */
export const ASK: Record<string, { input: object; maxTokens: number }> = {
  demo: { input: { case: "prompt", value: "Once upon a time" }, maxTokens: 16 },
  tools: { input: { case: "chat", value: { messages: [{ role: Role.USER, content: "Hello!" }] } }, maxTokens: 64 },
  "random-60m": { input: { case: "prompt", value: "Hello" }, maxTokens: 4 },
};

/** Asks `model` (by the name given) what ASK holds for `as` (default: the same model). */
export function ask(client: InferenceClient, model: string, as = model, more: object = {}): Promise<Events> {
  const question = ASK[as];
  if (question === undefined) throw new Error(`no question for ${as}`);
  return collect(client.generate({ model, ...question, sampling: { temperature: 0 }, ...more } as never));
}

/** The start event's model and the reply's text and reasoning. */
export function answer(events: Events): { model: string; text: string; reasoning: string; tokens: number } {
  let [model, text, reasoning, tokens] = ["", "", "", 0];
  for (const e of events) {
    if (e.case === "start") model = e.value.model;
    if (e.case === "token")
      [text, reasoning, tokens] = [text + e.value.text, reasoning + e.value.reasoning, tokens + 1];
    if (e.case === "finish") text += e.value.text;
  }
  return { model, text, reasoning, tokens };
}
