// The sidecar's embedder on the real engine (scripted model): its own context size, a queue that
// refuses callers past the limit, and CANCELLED for a caller that left.
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EmbedInputSchema } from "../../proto/gen/inference/v1/inference_pb.js";
import { modelPath } from "../../gguf/models.js";
import { unitLength } from "../../sidecar/engine/llama/embedder.js";
import { loadModel, type LoadedModel } from "../../sidecar/engine/llama/model.js";

let loaded: LoadedModel;
beforeAll(async () => {
  loaded = await loadModel({
    modelPath: modelPath("scripted"),
    threads: 1,
    engine: "auto",
    sequences: 1,
    contextSize: 256,
    maxQueue: 1,
    queueTimeoutMs: 10_000,
    embeddingContextSize: 64,
  });
}, 60_000);
afterAll(() => loaded?.dispose());

const text = (value: string) => create(EmbedInputSchema, { input: { case: "text", value } });
const codeOf = async (promise: Promise<unknown>) =>
  promise.then(
    () => "ok",
    (error: unknown) => (error instanceof ConnectError ? Code[error.code] : String(error)),
  );

describe("Embedder", () => {
  it("caps an input at the configured embedding context, not the generation context", () => {
    expect(loaded.embedder.contextSize).toBe(64);
    expect(loaded.embedder.dimensions).toBe(loaded.model.embeddingVectorSize);
  });

  it(
    "lets one call run and max-queue wait; the next is refused with RESOURCE_EXHAUSTED, and the queue " + "recovers",
    async () => {
      const signal = new AbortController().signal;
      const calls = [1, 2, 3].map((i) => loaded.embedder.embed([text(`Once upon a time ${i}`)], signal));
      expect(await Promise.all(calls.map(codeOf))).toEqual(["ok", "ok", "ResourceExhausted"]);
      expect(await codeOf(loaded.embedder.embed([text("Hello!")], signal))).toBe("ok");
    },
  );

  it("a caller that left gets CANCELLED and the next caller is served", async () => {
    const gone = new AbortController();
    gone.abort();
    expect(await codeOf(loaded.embedder.embed([text("Hello!")], gone.signal))).toBe("Canceled");
    const [result] = await loaded.embedder.embed([text("Hello!")], new AbortController().signal);
    expect(result?.values).toHaveLength(loaded.embedder.dimensions);
  });

  it("--embedding-model: a separate model's vectors, the served model untouched", async () => {
    const other = await loadModel({
      modelPath: modelPath("scripted"),
      threads: 1,
      engine: "auto",
      sequences: 1,
      contextSize: 256,
      maxQueue: 1,
      queueTimeoutMs: 10_000,
      embeddingModelPath: modelPath("random-tiny"),
    });
    try {
      const signal = new AbortController().signal;
      const [own] = await loaded.embedder.embed([text("Hello!")], signal);
      const [separate] = await other.embedder.embed([text("Hello!")], signal);
      expect(other.embedder.dimensions).not.toBe(loaded.embedder.dimensions);
      expect(separate?.values).toHaveLength(other.embedder.dimensions);
      expect(own?.values).toHaveLength(loaded.embedder.dimensions);
      expect(other.id).toBe("scripted");
    } finally {
      await other.dispose();
    }
  });

  it("scales vectors to unit length and leaves a zero vector alone", () => {
    expect(unitLength([3, 4])).toEqual([0.6, 0.8]);
    expect(unitLength([0, 0])).toEqual([0, 0]);
  });
});
