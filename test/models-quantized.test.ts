// The generated quantized models (random-60m-q4k and random-60m-q8: random-60m's shape with Q4_K or Q8_0 weights
// written as blocks by the GGUF writer) through real llama.cpp: the same bytes every build, the types
// node-llama-cpp's reader and llama.cpp see, and Q4_K weights llama.cpp's CPU backend repacks at load (on x86 with
// AVX2, as users' quantized models are).
import { createHash } from "node:crypto";
import { getLlama, LlamaCompletion, LlamaLogLevel, readGgufFileInfo } from "node-llama-cpp";
import { describe, expect, it } from "vitest";
import { buildModel, ensureModels } from "../gguf/models.js";
import { encodeGguf, QUANT_BLOCK } from "../gguf/writer.js";
import { LOCAL_BUILD_CMAKE_OPTIONS } from "../sidecar/engine/llama/model.js";

const sha = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex");

/** The file's `general.file_type` and the types of its matrices, as node-llama-cpp's reader sees them. */
async function typesOf(path: string): Promise<{ fileType: unknown; matrices: number[] }> {
  const info = await readGgufFileInfo(path);
  const types = new Set(info.fullTensorInfo?.filter((t) => t.dimensions.length === 2).map((t) => t.ggmlType));
  return { fileType: info.metadata.general.file_type, matrices: [...types] };
}

/** Eight greedy tokens after a prompt, and the engine's log lines from the load on. */
async function complete(path: string): Promise<{ text: string; logs: string[] }> {
  const logs: string[] = [];
  const llama = await getLlama({
    gpu: false,
    build: "never",
    // The engine build the sidecar loads when there is one (as `npm ci` makes it on a CPU host).
    cmakeOptions: { ...LOCAL_BUILD_CMAKE_OPTIONS },
    maxThreads: 2,
    logLevel: LlamaLogLevel.debug,
    logger: (_level, message) => logs.push(message),
  });
  const model = await llama.loadModel({ modelPath: path });
  const context = await model.createContext({ contextSize: 256, threads: 2 });
  try {
    const completion = new LlamaCompletion({ contextSequence: context.getSequence() });
    const text = await completion.generateCompletion("The lighthouse keeper", { maxTokens: 8, temperature: 0 });
    return { text, logs };
  } finally {
    await context.dispose();
    await model.dispose();
  }
}

describe("random-60m-q4k", () => {
  it("builds the same bytes every time, 144 bytes a block of 256 weights", () => {
    const file = buildModel("random-60m-q4k");
    expect(sha(encodeGguf(file))).toBe(sha(encodeGguf(buildModel("random-60m-q4k"))));
    const matrix = file.tensors.find((t) => t.name === "blk.0.ffn_up.weight");
    expect(matrix?.type).toBe("Q4_K");
    expect(matrix?.data.length).toBe((512 * 1536 * QUANT_BLOCK.Q4_K.bytes) / QUANT_BLOCK.Q4_K.values);
    expect(file.tensors.find((t) => t.name === "blk.0.attn_norm.weight")?.type).toBe("F32");
  });

  it("is read as Q4_K and repacked by llama.cpp's CPU backend, and decodes", async () => {
    const { "random-60m-q4k": path } = await ensureModels("models", ["random-60m-q4k"]);
    expect(await typesOf(path)).toEqual({ fileType: 14, matrices: [12] });
    const { text, logs } = await complete(path);
    // Every matrix of the 8 blocks and the output (the embedding table is read by rows, not multiplied).
    expect(logs.filter((m) => /repack tensor .* with q4_K_8x8/.test(m)).length).toBe(8 * 7 + 1);
    expect(text.length).toBeGreaterThan(0);
  }, 120_000);
});

describe("random-60m-q8", () => {
  it("builds the same bytes every time, 34 bytes a block of 32 weights, read as Q8_0, and decodes", async () => {
    const file = buildModel("random-60m-q8");
    expect(sha(encodeGguf(file))).toBe(sha(encodeGguf(buildModel("random-60m-q8"))));
    const matrix = file.tensors.find((t) => t.name === "blk.0.ffn_up.weight");
    expect(matrix?.type).toBe("Q8_0");
    expect(matrix?.data.length).toBe((512 * 1536 * QUANT_BLOCK.Q8_0.bytes) / QUANT_BLOCK.Q8_0.values);

    const { "random-60m-q8": path } = await ensureModels("models", ["random-60m-q8"]);
    expect(await typesOf(path)).toEqual({ fileType: 7, matrices: [8] });
    const { text, logs } = await complete(path);
    expect(text.length).toBeGreaterThan(0);
    // Never in the AMX buffer, even on a CPU with AMX (the engine build leaves those kernels out: amx-off.patch).
    expect(logs.filter((m) => /\bAMX\b/.test(m))).toEqual([]);
  }, 120_000);
});
