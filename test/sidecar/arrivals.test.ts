// Prompts that arrive together go out in one batch (sidecar/engine/llama/arrivals.ts): an idle
// context's first batch waits for requests still on their way, at most ARRIVAL_WAIT_MS; a lone
// request and a stream's next token never wait.
import { create } from "@bufbuild/protobuf";
import type { LlamaContextSequence } from "node-llama-cpp";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { GenerateRequestSchema } from "../../proto/gen/inference/v1/inference_pb.js";
import { modelPath } from "../../gguf/models.js";
import { ARRIVAL_WAIT_MS, Arrivals } from "../../sidecar/engine/llama/arrivals.js";
import { generate } from "../../sidecar/engine/decode/generate.js";
import { EngineMetrics } from "../../sidecar/engine/engine-metrics.js";
import { loadModel, type LoadedModel } from "../../sidecar/engine/llama/model.js";
import { watchBatches } from "../support/engine.js";

describe("Arrivals", () => {
  afterEach(() => {
    vi.useRealTimers();
  });
  const sequence = (id: number) => ({ _sequenceId: id }) as unknown as LlamaContextSequence;

  it("dispatches at once when nobody is on the way, and holds the batch while somebody is", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setImmediate"] });
    const arrivals = new Arrivals();
    const dispatched: string[] = [];
    arrivals.schedule(() => dispatched.push("alone"));
    await vi.advanceTimersByTimeAsync(0);
    expect(dispatched).toEqual(["alone"]);
    const first = arrivals.arrive();
    const second = arrivals.arrive();
    first.bind(sequence(0));
    second.bind(sequence(1));
    arrivals.schedule(() => dispatched.push("together"));
    arrivals.queued(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(dispatched).toEqual(["alone"]);
    arrivals.queued(1);
    await vi.advanceTimersByTimeAsync(0);
    expect(dispatched).toEqual(["alone", "together"]);
  });

  it("holds the batch for the requests a caller said are right behind, until they come or the wait ends", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setImmediate"] });
    const arrivals = new Arrivals();
    const dispatched: string[] = [];
    // The first of three sent together: two are still in the caller's hands.
    const first = arrivals.arrive(2);
    first.bind(sequence(0));
    arrivals.schedule(() => dispatched.push("three"));
    arrivals.queued(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(dispatched).toEqual([]);
    const second = arrivals.arrive(1);
    const third = arrivals.arrive(0);
    second.bind(sequence(1));
    third.bind(sequence(2));
    arrivals.queued(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(dispatched).toEqual([]);
    arrivals.queued(2);
    await vi.advanceTimersByTimeAsync(0);
    expect(dispatched).toEqual(["three"]);
    // Announced ones that never come are waited for ARRIVAL_WAIT_MS at most, and then no more.
    const lone = arrivals.arrive(3);
    lone.bind(sequence(3));
    arrivals.schedule(() => dispatched.push("lone"));
    arrivals.queued(3);
    await vi.advanceTimersByTimeAsync(ARRIVAL_WAIT_MS - 1);
    expect(dispatched).toEqual(["three"]);
    await vi.advanceTimersByTimeAsync(2);
    expect(dispatched).toEqual(["three", "lone"]);
    arrivals.schedule(() => dispatched.push("after"));
    await vi.advanceTimersByTimeAsync(0);
    expect(dispatched).toEqual(["three", "lone", "after"]);
  });

  it("waits at most ARRIVAL_WAIT_MS, and not for a stream's next token", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setImmediate"] });
    const arrivals = new Arrivals();
    const dispatched: string[] = [];
    const late = arrivals.arrive();
    arrivals.schedule(() => dispatched.push("held"));
    await vi.advanceTimersByTimeAsync(ARRIVAL_WAIT_MS - 1);
    expect(dispatched).toEqual([]);
    await vi.advanceTimersByTimeAsync(2);
    expect(dispatched).toEqual(["held"]);
    arrivals.streaming = () => true;
    arrivals.schedule(() => dispatched.push("step"));
    await vi.advanceTimersByTimeAsync(0);
    expect(dispatched).toEqual(["held", "step"]);
    late.leave();
    late.leave();
    arrivals.streaming = () => false;
    arrivals.schedule(() => dispatched.push("alone again"));
    await vi.advanceTimersByTimeAsync(0);
    expect(dispatched).toEqual(["held", "step", "alone again"]);
  });
});

describe("prompts arriving together, with a model", () => {
  let loaded: LoadedModel;
  const batches: number[][] = [];
  beforeAll(async () => {
    loaded = await loadModel({
      modelPath: modelPath("scripted"),
      threads: 1,
      engine: "auto",
      sequences: 4,
      contextSize: 256,
      maxQueue: 4,
      queueTimeoutMs: 10_000,
    });
    watchBatches(loaded, (tokens) => batches.push(tokens));
  });
  afterAll(() => loaded?.dispose());

  const run = async (prompt: string, clientId: string): Promise<string> => {
    const request = create(GenerateRequestSchema, {
      input: { case: "prompt", value: prompt },
      maxTokens: 4,
      sampling: { temperature: 0 },
      clientId,
    });
    let text = "";
    for await (const { event } of generate(loaded, request, new AbortController().signal, new EngineMetrics()))
      if (event?.case === "token") text += event.value.text;
    return text;
  };

  it("evaluates a prompt that is ready with three still on their way in one first batch", async () => {
    // Three requests take their sequence 5 ms late (as one planning a long prompt would).
    const acquire = loaded.pool.acquire.bind(loaded.pool);
    loaded.pool.acquire = async (...args: Parameters<typeof acquire>) => {
      if (args[2] === "late") await new Promise((resolve) => setTimeout(resolve, 5));
      return acquire(...args);
    };
    batches.length = 0;
    const prompts = ["Once upon a time", "Let us sing. Sing", "Once upon a time there", "Let us sing."];
    const together = await Promise.all(prompts.map((prompt, i) => run(prompt, i === 0 ? "early" : "late")));
    // One first batch: every prompt whole (before, the early one went alone and the others waited for it).
    expect(batches[0]?.length).toBe(4);
    const alone: string[] = [];
    for (const prompt of prompts) alone.push(await run(prompt, "alone"));
    expect(together).toEqual(alone);
  });
});
