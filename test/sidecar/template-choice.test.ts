// Which renders a model's chats, its template or node-llama-cpp's built-in wrapper (chat/prompt.ts,
// templateSource): the wrapper only where it renders the probe chats token for token as the
// template does. Llama 3.3's, Qwen3's and Qwen3.5's wrappers do not (their twins' real templates),
// nor the Qwen wrapper for the project's `tools` template; ChatML's does.
import { afterAll, describe, expect, it } from "vitest";
import { ensureModels, type ModelName } from "../../gguf/models.js";
import { rendersByTemplate } from "../../sidecar/engine/chat/prompt.js";
import { loadModel, type LoadedModel } from "../../sidecar/engine/llama/model.js";

const loaded: LoadedModel[] = [];
afterAll(async () => {
  for (const model of loaded) await model.dispose();
});

async function load(name: ModelName): Promise<LoadedModel> {
  const paths = await ensureModels("models", [name]);
  const model = await loadModel({
    modelPath: paths[name],
    threads: 1,
    engine: "auto",
    sequences: 1,
    contextSize: 4096,
    maxQueue: 1,
    queueTimeoutMs: 10_000,
  });
  loaded.push(model);
  return model;
}

describe("the template or the wrapper", () => {
  it.each([
    ["llama3", true],
    ["qwen3.5", true],
    ["qwen3", true],
    // Its template words the tool instructions its own way and gives results as sent: not the Qwen wrapper's.
    ["tools", true],
    ["scripted", false],
  ] as const)(
    "%s: by the template %s",
    async (name, byTemplate) => {
      expect(rendersByTemplate(await load(name))).toBe(byTemplate);
    },
    60_000,
  );
});
