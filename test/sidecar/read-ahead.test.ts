// readAhead on its own: the source runs ahead of its reader (up to a limit), errors reach the
// reader, and a reader that leaves early ends the source (its `finally` runs); over a real
// generation, each token reaches the reader after the next decode step was dispatched.
import { create } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GenerateRequestSchema } from "../../proto/gen/inference/v1/inference_pb.js";
import { modelPath } from "../../gguf/models.js";
import { FIRST_TOKEN_POSITION, generate } from "../../sidecar/engine/decode/generate.js";
import { EngineMetrics } from "../../sidecar/engine/engine-metrics.js";
import { loadModel, type LoadedModel } from "../../sidecar/engine/llama/model.js";
import { readAhead } from "../../sidecar/engine/streams/read-ahead.js";
import { watchBatches } from "../support/engine.js";

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function counting(count: number, log: string[]): AsyncGenerator<number, void, undefined> {
  return (async function* () {
    try {
      for (let i = 0; i < count; i++) {
        await tick();
        log.push(`made ${i}`);
        yield i;
      }
    } finally {
      log.push("source finally");
    }
  })();
}

describe("readAhead", () => {
  it("pulls the source before the reader asks, up to the limit", async () => {
    const log: string[] = [];
    const reader = readAhead(counting(10, log), { limit: 3 });
    expect(await reader.next()).toEqual({ value: 0, done: false });
    for (let i = 0; i < 10; i++) await tick();
    // 0 was read; 1, 2, 3 wait in the queue; the source stops there until the reader takes one.
    expect(log).toEqual(["made 0", "made 1", "made 2", "made 3"]);
    const rest: number[] = [];
    for await (const value of reader) rest.push(value);
    expect(rest).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(log.at(-1)).toBe("source finally");
  });

  it("a reader that leaves early ends the source", async () => {
    const log: string[] = [];
    for await (const value of readAhead(counting(100, log))) if (value === 2) break;
    expect(log.at(-1)).toBe("source finally");
    expect(log.length).toBeLessThan(100);
  });

  it("passes the source's error to the reader, after the items before it", async () => {
    const source = (async function* () {
      yield 1;
      throw new Error("broken");
    })();
    const seen: number[] = [];
    await expect(
      (async () => {
        for await (const value of readAhead(source)) seen.push(value);
      })(),
    ).rejects.toThrow("broken");
    expect(seen).toEqual([1]);
  });
});

/**
 * Every decode of `loaded` takes at least `ms`, as a real model's does: the scripted model's take microseconds, less
 * than the event-loop turn a reader waits, and with the token sampled in the decode's own worker (presampling.ts) a
 * whole step could then pass while the reader waits, which no real model's step does.
 */
function realisticDecodes(loaded: LoadedModel, ms: number): void {
  const context = loaded.context as unknown as { _ctx: Record<string | symbol, unknown> };
  context._ctx = new Proxy(context._ctx, {
    get(target, key) {
      const value = target[key];
      if (typeof value !== "function") return value;
      // Bound: a native method called on a proxy is an illegal invocation.
      if (key !== "decodeBatch") return value.bind(target);
      return async (...args: unknown[]): Promise<unknown> => {
        const [done] = await Promise.all([value.apply(target, args), new Promise((r) => setTimeout(r, ms))]);
        return done;
      };
    },
  });
}

describe("readAhead over a real generation", () => {
  let loaded: LoadedModel;
  beforeAll(async () => {
    // Two sequences, as a server has several: node-llama-cpp dispatches at once only when every
    // sequence has a step queued, otherwise on the next immediate.
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

  it("hands the first token over at once, each later one after the next decode step went to llama.cpp", async () => {
    const log: string[] = [];
    realisticDecodes(loaded, 2);
    watchBatches(loaded, () => log.push("decode"));
    const request = create(GenerateRequestSchema, {
      input: { case: "prompt", value: "Hello" },
      maxTokens: 6,
      sampling: { temperature: 0 },
    });
    const events = generate(loaded, request, new AbortController().signal, new EngineMetrics());
    for await (const { event } of readAhead(events, { atOnce: (position) => position === FIRST_TOKEN_POSITION }))
      log.push(event?.case ?? "?");
    // The prompt's step goes out before `start`. The first token goes out at once; each later
    // token but the last after the step that decodes it (the last ends the reply: no step follows).
    expect(log).toEqual([
      "decode",
      "start",
      "token",
      "decode",
      ...Array.from({ length: 4 }, () => ["decode", "token"]).flat(),
      "token",
      "finish",
    ]);
  });
});
