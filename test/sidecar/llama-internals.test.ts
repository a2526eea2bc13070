// The node-llama-cpp internals the engine reads (sidecar/engine/llama/llama-internals.ts): all there in
// the installed version, and a clear start-up failure naming what is missing when they are not.
import { readFileSync } from "node:fs";
import {
  LlamaGrammarEvaluationState,
  type Llama,
  type LlamaContext,
  type LlamaModel,
  type Token,
} from "node-llama-cpp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { modelPath } from "../../gguf/models.js";
import {
  checkLlamaInternals,
  decodeQueue,
  grammarStepper,
  installedVersion,
  sequenceIdOf,
  SUPPORTED_NODE_LLAMA_CPP,
  threadsPerBatch,
  vocabularyEntry,
} from "../../sidecar/engine/llama/llama-internals.js";
import { loadModel, type LoadedModel } from "../../sidecar/engine/llama/model.js";

describe("node-llama-cpp internals", () => {
  let loaded: LoadedModel;
  beforeAll(async () => {
    loaded = await loadModel({
      modelPath: modelPath("scripted"),
      threads: 1,
      engine: "auto",
      sequences: 2,
      contextSize: 256,
      maxQueue: 1,
      queueTimeoutMs: 10_000,
    });
  });
  afterAll(() => loaded?.dispose());

  it("are read from the version the project pins", () => {
    const pinned = (JSON.parse(readFileSync("package.json", "utf8")) as { dependencies: Record<string, string> })
      .dependencies["node-llama-cpp"];
    expect(installedVersion()).toBe(SUPPORTED_NODE_LLAMA_CPP);
    expect(pinned).toBe(SUPPORTED_NODE_LLAMA_CPP);
  });

  it("are all there in the installed version, and the start-up check gives back the sequence it takes", async () => {
    // loadModel ran the check: every sequence still went to the pool.
    expect(loaded.pool.size).toBe(2);
    const context = await loaded.model.createContext({ sequences: 1, contextSize: 64, threads: 1 });
    try {
      await expect(checkLlamaInternals({ llama: loaded.llama, model: loaded.model, context })).resolves.toBeUndefined();
      expect(context.sequencesLeft).toBe(1);
    } finally {
      await context.dispose();
    }
  });

  it("read what they stand for", async () => {
    const queue = decodeQueue(loaded.context);
    expect(queue.queued).toEqual([]);
    // The llama emoji is four byte tokens in the scripted model, the first one 0xF0.
    const [byte] = loaded.model.tokenize("🦙", false);
    expect(vocabularyEntry(loaded.model, byte as Token)).toBe("<0xF0>");
    const grammar = await loaded.llama.createGrammar({ grammar: 'root ::= "ab"' });
    const state = new LlamaGrammarEvaluationState({ model: loaded.model, grammar });
    const stepper = grammarStepper(loaded.llama);
    const [a] = loaded.model.tokenize("a", false);
    expect(stepper.canBeNext(state, a as Token)).toBe(true);
    stepper.accept(state, a as Token);
    expect(stepper.canBeNext(state, a as Token)).toBe(false);
  });

  it("fail the start-up clearly for another node-llama-cpp version", async () => {
    await expect(checkLlamaInternals(loaded, "3.22.0")).rejects.toThrow(
      `node-llama-cpp 3.22.0 is installed, but llm-edge reads its internals as of ${SUPPORTED_NODE_LLAMA_CPP}`,
    );
  });

  it("fail the start-up clearly, naming the internal that is missing", async () => {
    const missing = (what: string) =>
      `node-llama-cpp internals changed: ${what} is missing (llm-edge reads it as of node-llama-cpp ` +
      `${SUPPORTED_NODE_LLAMA_CPP}`;
    await expect(checkLlamaInternals({ ...loaded, context: {} as LlamaContext })).rejects.toThrow(
      missing("LlamaContext._decodeTokens"),
    );
    expect(() => decodeQueue({ _decodeTokens: () => undefined } as unknown as LlamaContext)).toThrow(
      missing("LlamaContext._queuedDecodes"),
    );
    expect(() => threadsPerBatch({ _ctx: { initBatch: () => undefined } } as unknown as LlamaContext, () => 1)).toThrow(
      missing("LlamaContext._ctx.setThreads"),
    );
    expect(() => vocabularyEntry({} as LlamaModel, 0 as Token)).toThrow(missing("LlamaModel._model.getTokenString"));
    expect(() => grammarStepper({} as Llama)).toThrow(
      missing("Llama._bindings.AddonSampler.canBeNextTokenForGrammarEvaluationState"),
    );
    expect(() => sequenceIdOf({} as never)).toThrow(missing("LlamaContextSequence._sequenceId"));
  });
});
