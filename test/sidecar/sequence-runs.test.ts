// The pool keeps busy sequences' ids side by side on the real engine (sidecar/engine/llama/pool.ts,
// RUN_COST_TOKENS): llama.cpp evaluates a batch one run of consecutive sequence ids at a time, so
// two streams on ids apart cost two passes over the weights a step.
import { create } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GenerateRequestSchema } from "../../proto/gen/inference/v1/inference_pb.js";
import { modelPath } from "../../gguf/models.js";
import { FIRST_TOKEN_POSITION, generate } from "../../sidecar/engine/decode/generate.js";
import { sequenceIdOf } from "../../sidecar/engine/llama/llama-internals.js";
import { EngineMetrics } from "../../sidecar/engine/metrics.js";
import { loadModel, type LoadedModel } from "../../sidecar/engine/llama/model.js";
import { readAhead } from "../../sidecar/engine/streams/read-ahead.js";
import { watchBatches } from "../support/engine.js";

const SEQUENCES = 8;
// Conversations of different lengths, none sharing more than the first token with another.
const WORDS = ["Sing", "Let", "Once", "The", "A", "Llama", "Tiny", "Who"];
const conversation = (i: number): string => `${WORDS[i]} ${"la ".repeat(4 + 3 * i)}`;

describe("sequence ids side by side", () => {
  let loaded: LoadedModel;
  beforeAll(async () => {
    loaded = await loadModel({
      modelPath: modelPath("scripted"),
      threads: 1,
      engine: "auto",
      sequences: SEQUENCES,
      contextSize: 1024,
      maxQueue: 1,
      queueTimeoutMs: 10_000,
      cacheRam: 0,
    });
  });
  afterAll(() => loaded?.dispose());

  const run = async (prompt: string, maxTokens: number, onToken: () => void = () => undefined): Promise<void> => {
    const request = create(GenerateRequestSchema, { input: { case: "prompt", value: prompt }, maxTokens, sampling: { temperature: 0 } });
    const events = generate(loaded, request, new AbortController().signal, new EngineMetrics());
    for await (const { event } of readAhead(events, { atOnce: (position) => position === FIRST_TOKEN_POSITION })) if (event?.case === "token") onToken();
  };

  it("gives a new stream the free sequence beside a busy one, not the one that holds the fewest tokens", async () => {
    // Every sequence holds one conversation; the shortest loses least when taken over.
    await Promise.all(WORDS.map((_, i) => run(conversation(i), 1)));
    const holder = (i: number): number => {
      // The conversation's words, after the BOS the prompt starts with.
      const tokens = loaded.model.tokenize(conversation(i).trim());
      const sequence = loaded.pool.all().find((s) => tokens.every((t, k) => s.contextTokens[k + 1] === t));
      if (sequence === undefined) throw new Error(`no sequence holds conversation ${i}`);
      return sequenceIdOf(sequence);
    };
    const shortest = holder(0);
    // The conversation that comes back is on a sequence apart from the shortest one.
    const back = WORDS.findIndex((_, i) => Math.abs(holder(i) - shortest) > 1);
    const returning = holder(back);
    const twos: number[][] = [];
    watchBatches(loaded, (_tokens, _threads, ids) => ids.length === 2 && twos.push([...ids].sort((a, b) => a - b)));
    let started = (): void => undefined;
    const streaming = new Promise<void>((resolve) => (started = resolve));
    let seen = 0;
    const first = run(`${conversation(back)}la la`, 40, () => ++seen === 2 && started());
    await streaming;
    await run("Who are you", 6);
    await first;
    expect(twos.length).toBeGreaterThan(0);
    for (const ids of twos) {
      expect(ids).toContain(returning);
      expect(Math.abs((ids[1] ?? 0) - (ids[0] ?? 0))).toBe(1);
    }
  });
});
