// The generated LoRA adapters (gguf/lora.ts) through real llama.cpp (node-llama-cpp): the base
// `adapted` model and each adapter in a context of its own on the same loaded model, exact replies;
// the scale changed after the context was made (scale 0: the base's reply).
import { getLlama, LlamaChatSession, type Llama, type LlamaContext, type LlamaModel } from "node-llama-cpp";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADAPTED_REPLIES, ensureModels } from "../gguf/models.js";

let llama: Llama;
let model: LlamaModel;
let dir: string;
let paths: Record<"adapted" | "pirate-lora" | "french-lora", string>;
const contexts: LlamaContext[] = [];

async function context(adapter?: "pirate-lora" | "french-lora"): Promise<LlamaContext> {
  const lora = adapter === undefined ? undefined : { adapters: [{ filePath: paths[adapter] }] };
  const made = await model.createContext({ contextSize: 512, threads: 1, ...(lora ? { lora } : {}) });
  contexts.push(made);
  return made;
}
async function chat(ctx: LlamaContext): Promise<string> {
  const sequence = ctx.getSequence();
  try {
    return await new LlamaChatSession({ contextSequence: sequence }).prompt("Hello", { maxTokens: 20 });
  } finally {
    sequence.dispose();
  }
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "lora-"));
  paths = await ensureModels(dir, ["adapted", "pirate-lora", "french-lora"]);
  llama = await getLlama({ gpu: false, build: "never", maxThreads: 1 });
  model = await llama.loadModel({ modelPath: paths.adapted });
});
afterAll(async () => {
  for (const c of contexts) await c.dispose();
  await model?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

describe("the LoRA adapters of the adapted model", () => {
  it("answer with their own reply, each in its own context on one loaded model, at once", async () => {
    const [base, pirate, french] = await Promise.all([context(), context("pirate-lora"), context("french-lora")]);
    const replies = await Promise.all([chat(base), chat(pirate), chat(french)]);
    expect(replies).toEqual([ADAPTED_REPLIES.adapted, ADAPTED_REPLIES["pirate-lora"], ADAPTED_REPLIES["french-lora"]]);
  });

  it("follow the scale set after the context was made: 0 is the base's reply", async () => {
    const pirate = await context("pirate-lora");
    // node-llama-cpp's internal setter (the sidecar's llama-internals.ts wraps it).
    const setLoras = (pirate as unknown as { _setLoras(l: unknown[]): Promise<void> })._setLoras.bind(pirate);
    await setLoras([{ filePath: paths["pirate-lora"], scale: 0 }]);
    expect(await chat(pirate)).toBe(ADAPTED_REPLIES.adapted);
    await setLoras([{ filePath: paths["pirate-lora"], scale: 0.5 }]);
    expect(await chat(pirate)).toBe(ADAPTED_REPLIES["pirate-lora"]);
  });
});
