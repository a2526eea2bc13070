// The generated ranking model (gguf/rerank.ts) through real llama.cpp (node-llama-cpp): the same
// bytes every build, a ranking context node-llama-cpp agrees to make, and a score that is what the
// layout says — P(first label) of a softmax over the ranking head's rows — shown on two variants
// of the file: equal rows score every pair 1/2, swapped rows score it 1 − score.
import { getLlama, type Llama, type LlamaModel, type LlamaRankingContext } from "node-llama-cpp";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildModel, ensureModels } from "../gguf/models.js";
import { RERANK_LABELS, RERANK_TEMPLATE } from "../gguf/rerank.js";
import { encodeGguf, writeGguf, type GgufFile } from "../gguf/writer.js";

const QUERY = "what do llamas eat";
const DOCUMENTS = ["llamas eat grass and hay", "the sky is blue today", "a recipe for bread"];

/** The model with the ranking head's two rows (ggml order: each row of `embedding` values) rewritten. */
function withHead(
  file: GgufFile,
  rows: (yes: Float32Array, no: Float32Array) => [Float32Array, Float32Array],
): GgufFile {
  const tensors = file.tensors.map((t) => {
    if (t.name !== "cls.output.weight" || t.type !== "F32") return t;
    const width = t.shape[0] ?? 0;
    const [yes, no] = rows(t.data.slice(0, width), t.data.slice(width));
    const data = new Float32Array(t.data.length);
    data.set(yes, 0);
    data.set(no, width);
    return { ...t, data };
  });
  return { metadata: file.metadata, tensors };
}

let llama: Llama;
let dir: string;
const opened: Array<{ model: LlamaModel; context: LlamaRankingContext }> = [];
async function ranking(path: string): Promise<LlamaRankingContext> {
  const model = await llama.loadModel({ modelPath: path });
  const context = await model.createRankingContext({ contextSize: 256, threads: 1 });
  opened.push({ model, context });
  return context;
}

beforeAll(async () => {
  llama = await getLlama({ gpu: false, build: "never", maxThreads: 1 });
  dir = mkdtempSync(join(tmpdir(), "rerank-"));
});
afterAll(async () => {
  for (const { model, context } of opened) {
    await context.dispose();
    await model.dispose();
  }
  rmSync(dir, { recursive: true, force: true });
});

describe("the rerank model", () => {
  it("builds the same bytes every time", () => {
    const sha256 = () =>
      createHash("sha256")
        .update(encodeGguf(buildModel("rerank")))
        .digest("hex");
    expect(sha256()).toBe(sha256());
    expect(sha256()).toBe("733fef0eebbe047b03d96617ec7ace8fcce1e394aae9722f20fe9580a39de823");
  });

  it("is a Qwen3 reranker to node-llama-cpp: ranking head, rank pooling, yes/no labels, its template", async () => {
    const { rerank: path } = await ensureModels("models", ["rerank"]);
    const context = await ranking(path);
    const { model } = context;
    expect(model.fileInsights.supportsRanking).toBe(true);
    expect(model.getWarnings()).toEqual([]);
    const metadata = model.fileInfo.metadata as unknown as Record<string, Record<string, unknown>>;
    expect(metadata.general?.architecture).toBe("qwen3");
    expect(metadata.qwen3).toMatchObject({ pooling_type: 4, classifier: { output_labels: RERANK_LABELS } });
    expect(metadata.tokenizer?.["chat_template.rerank"]).toBe(RERANK_TEMPLATE);
    const head = model.fileInfo.tensorInfo?.find((t) => t.name === "cls.output.weight");
    expect(head?.dimensions).toEqual([64, 2]);
    const scores = await context.rankAll(QUERY, DOCUMENTS);
    for (const score of scores) expect(score > 0 && score < 1).toBe(true);
  });

  it("scores P(yes) of a softmax over the head's rows: equal rows give 1/2, swapped rows 1 − score", async () => {
    const file = buildModel("rerank");
    writeGguf(
      join(dir, "equal.gguf"),
      withHead(file, (yes) => [yes, yes]),
    );
    writeGguf(
      join(dir, "swapped.gguf"),
      withHead(file, (yes, no) => [no, yes]),
    );
    const original = await (await ranking((await ensureModels("models", ["rerank"])).rerank)).rankAll(QUERY, DOCUMENTS);
    expect(await (await ranking(join(dir, "equal.gguf"))).rankAll(QUERY, DOCUMENTS)).toEqual([0.5, 0.5, 0.5]);
    const swapped = await (await ranking(join(dir, "swapped.gguf"))).rankAll(QUERY, DOCUMENTS);
    for (const [i, score] of swapped.entries()) expect(score).toBeCloseTo(1 - (original[i] ?? 0), 6);
  });
});
