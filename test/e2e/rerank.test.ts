// POST /v1/rerank and POST /rerank through the edge on Node and the real sidecar serving the
// generated ranking model (gguf/rerank.ts): the exact answer, against scores computed here on the
// input llama-server builds (the rerank template filled in, tokenized whole), evaluated by
// node-llama-cpp's ranking context on the same file; the sidecar's refusals in OpenAI's shape;
// a chat sent to the reranker.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { modelPath } from "../../gguf/models.js";
import { RERANK_TEMPLATE } from "../../gguf/rerank.js";
import { startStack, type Stack } from "../support/edge.js";
import {
  disposeReference,
  expectedRanking,
  rankingReference,
  serverInput,
  type RankingReference,
} from "../support/rerank.js";

/** Tokens one (query, document) pair may hold on the sidecar here (--embedding-context-size). */
const PAIR_TOKENS = 128;
const QUERY = "what do llamas eat";
const DOCUMENTS = [
  "llamas eat grass and hay",
  "the sky is blue today",
  "a recipe for bread",
  "llamas eat grass and hay",
];

let stack: Stack;
let reference: RankingReference;
beforeAll(async () => {
  stack = await startStack({
    model: modelPath("rerank"),
    sequences: 1,
    contextSize: 128,
    embeddingContextSize: PAIR_TOKENS,
  });
  reference = await rankingReference(modelPath("rerank"), RERANK_TEMPLATE, PAIR_TOKENS);
}, 60_000);
afterAll(async () => {
  await stack?.stop();
  await disposeReference(reference);
});

const post = async (path: string, body: unknown) => {
  const response = await fetch(`${stack.edge.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
};

/** The answer llama-server's inputs make for QUERY. */
const expectedResults = (documents: readonly string[]) => expectedRanking(reference, QUERY, documents);

describe.each(["/v1/rerank", "/rerank"])("POST %s on the real sidecar", (path) => {
  it("answers the model's scores, best first, with usage and the documents", async () => {
    const { results, tokens } = await expectedResults(DOCUMENTS);
    const { status, json } = await post(path, { model: "rerank", query: QUERY, documents: DOCUMENTS });
    expect(status).toBe(200);
    expect(json["id"]).toMatch(/^rerank-[0-9A-Za-z]{24}$/);
    expect(json).toEqual({
      id: json["id"],
      object: "list",
      model: "rerank",
      usage: { prompt_tokens: tokens, total_tokens: tokens },
      results,
    });
    // The same document twice: the same score, side by side (a tie keeps the request's order).
    const twins = (json["results"] as { index: number }[]).map((r) => r.index).filter((i) => i === 0 || i === 3);
    expect(twins).toEqual([0, 3]);
  });

  it("objects with a text field, top_n and return_documents: false, as Jina's clients send them", async () => {
    const { results } = await expectedResults(DOCUMENTS.slice(0, 3));
    const documents = DOCUMENTS.slice(0, 3).map((text) => ({ text }));
    const { json } = await post(path, { model: "rerank", query: QUERY, documents, top_n: 2, return_documents: false });
    expect(json["results"]).toEqual(
      results.slice(0, 2).map(({ index, relevance_score }) => ({ index, relevance_score })),
    );
  });
});

describe("the sidecar's refusals through the edge", () => {
  it("a document that does not fit beside the query: a 400 naming it and the limit", async () => {
    const long = "llamas eat grass ".repeat(60);
    const tokens = serverInput(reference, QUERY, long).length;
    const { status, json } = await post("/v1/rerank", { query: QUERY, documents: ["hay", long] });
    expect(status).toBe(400);
    expect(json).toEqual({
      error: {
        message: `document 1 and the query take ${tokens} tokens, but a ranking input holds at most ${PAIR_TOKENS - 1}`,
        type: "invalid_request_error",
        param: null,
        code: null,
      },
    });
  });

  it("a chat sent to the reranker: a 400 saying what the model is for", async () => {
    const { status, json } = await post("/v1/chat/completions", {
      model: "rerank",
      messages: [{ role: "user", content: "Hello!" }],
    });
    expect(status).toBe(400);
    expect(json).toEqual({
      error: {
        message: 'model "rerank" is a reranking model: it ranks documents, it does not generate text',
        type: "invalid_request_error",
        param: null,
        code: null,
      },
    });
  });
});
