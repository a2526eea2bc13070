// POST /v1/embeddings through the official `openai` client, the edge on Node and the real sidecar
// (scripted model), checked against the sidecar's own Embed and Tokenize RPCs.
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type Stack } from "../support/edge.js";
import { clientsFor } from "../support/sidecar.js";

let stack: Stack;
let client: OpenAI;
beforeAll(async () => {
  stack = await startStack();
  client = new OpenAI({ baseURL: stack.baseURL, apiKey: "none", maxRetries: 0 });
}, 60_000);
afterAll(() => stack?.stop());

const grpc = () => clientsFor(stack.sidecar.url).grpc;
const norm = (v: readonly number[]) => Math.sqrt(v.reduce((sum, x) => sum + x * x, 0));
const post = async (body: unknown) => {
  const response = await fetch(`${stack.baseURL}/embeddings`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
};

describe("POST /v1/embeddings", () => {
  it(
    "answers OpenAI's list shape: one unit-length vector per input, of the model's dimensions, with " + "usage",
    async () => {
      const { models } = await grpc().listModels({});
      const info = models[0]!;
      const texts = ["Once upon a time", "Hello!"];
      const answer = await client.embeddings.create({ model: info.id, input: texts, encoding_format: "float" });
      const counts = await Promise.all(
        texts.map(async (t) => (await grpc().tokenize({ input: { case: "text", value: t } })).tokens.length),
      );
      expect(answer.object).toBe("list");
      expect(answer.model).toBe(info.id);
      expect(answer.data.map((d) => [d.object, d.index, d.embedding.length])).toEqual([
        ["embedding", 0, info.embeddingDimensions],
        ["embedding", 1, info.embeddingDimensions],
      ]);
      expect(info.embeddingDimensions).toBeGreaterThan(0);
      for (const d of answer.data) expect(norm(d.embedding)).toBeCloseTo(1, 5);
      expect(answer.data[0]!.embedding).not.toEqual(answer.data[1]!.embedding);
      expect(answer.usage).toEqual({ prompt_tokens: counts[0]! + counts[1]!, total_tokens: counts[0]! + counts[1]! });
    },
  );

  it("same text, same vector: across calls, within one call, as token ids, and through the Embed RPC", async () => {
    const text = "Once upon a time";
    const first = await client.embeddings.create({ model: "m", input: text, encoding_format: "float" });
    const again = await client.embeddings.create({ model: "m", input: [text, text], encoding_format: "float" });
    const { tokens } = await grpc().tokenize({ input: { case: "text", value: text } });
    const asTokens = await client.embeddings.create({ model: "m", input: tokens, encoding_format: "float" });
    const rpc = await grpc().embed({ inputs: [{ input: { case: "text", value: text } }] });
    const vector = first.data[0]!.embedding;
    expect(again.data.map((d) => d.embedding)).toEqual([vector, vector]);
    expect(asTokens.data[0]!.embedding).toEqual(vector);
    expect(rpc.embeddings[0]!.values).toEqual(vector);
    expect(rpc.promptTokens).toBe(tokens.length);
  });

  it("concurrent clients each get what they would alone", async () => {
    const texts = Array.from({ length: 8 }, (_, i) => `Once upon a time ${i}`);
    const alone = [];
    for (const text of texts)
      alone.push(
        (await client.embeddings.create({ model: "m", input: text, encoding_format: "float" })).data[0]!.embedding,
      );
    const together = await Promise.all(
      texts.map((text) => client.embeddings.create({ model: "m", input: text, encoding_format: "float" })),
    );
    expect(together.map((a) => a.data[0]!.embedding)).toEqual(alone);
  });

  it("the base64 form (what the client asks for by default) decodes to the float form", async () => {
    const input = ["Hello!", "Once upon a time"];
    const floats = await client.embeddings.create({ model: "m", input, encoding_format: "float" });
    const decoded = await client.embeddings.create({ model: "m", input });
    expect(decoded.data.map((d) => d.embedding)).toEqual(floats.data.map((d) => d.embedding));
    const raw = await post({ model: "m", input: "Hello!", encoding_format: "base64" });
    const base64 = (raw.json["data"] as { embedding: string }[])[0]!.embedding;
    const bytes = Buffer.from(base64, "base64");
    expect(Array.from(new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4))).toEqual(
      floats.data[0]!.embedding,
    );
  });

  it(
    "takes `dimensions` only when it is the model's own; refuses empty inputs, unknown tokens and too many inputs, " +
      "in OpenAI's shape",
    async () => {
      const { models } = await grpc().listModels({});
      const own = models[0]!.embeddingDimensions;
      expect(
        (await client.embeddings.create({ model: "m", input: "Hi", dimensions: own, encoding_format: "float" }))
          .data[0]!.embedding,
      ).toHaveLength(own);
      const refusals = [
        [{ input: "Hi", dimensions: own - 1 }, `this model's embeddings have ${own} dimensions`],
        [{ input: "" }, "an input must not be empty"],
        [{ input: [] }, "input"],
        [{ input: ["a", ""] }, "an input must not be empty"],
        [{ input: [[1, 4_000_000]] }, "token 4000000 is not in the model's vocabulary"],
        [{ input: Array.from({ length: 2049 }, () => "a") }, "input"],
        [{ input: "Hi", encoding_format: "int8" }, "encoding_format"],
      ] as const;
      for (const [body, words] of refusals) {
        const answer = await post({ model: "m", ...body });
        expect(answer.status, JSON.stringify(body).slice(0, 80)).toBe(400);
        expect(answer.json).toMatchObject({
          error: { type: "invalid_request_error", message: expect.stringContaining(words) },
        });
      }
    },
  );

  it("refuses an input longer than an embedding input may be, naming the limit", async () => {
    const { models } = await grpc().listModels({});
    const limit = models[0]!.embeddingContextSize;
    const answer = await post({ model: "m", input: [Array.from({ length: limit }, () => 5)] });
    expect(answer.status).toBe(400);
    expect(answer.json).toMatchObject({ error: { message: expect.stringContaining(`at most ${limit - 2}`) } });
  });
});
