// The Rank RPC over real gRPC and gRPC-Web, on the generated ranking model (gguf/rerank.ts): the
// scores of the input llama-server builds for each pair (its rerank template filled in and
// tokenized whole, nothing added; computed here as the reference on node-llama-cpp's ranking
// context), in the documents' order; the refusals; a reranker asked to generate or embed; the
// ranker's queue and cancellation on the real engine.
import { Code, ConnectError } from "@connectrpc/connect";
import type { LlamaModel, LlamaRankingContext } from "node-llama-cpp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { modelPath } from "../../gguf/models.js";
import { RERANK_TEMPLATE } from "../../gguf/rerank.js";
import { rankTokens } from "../../sidecar/engine/llama/llama-internals.js";
import { loadLlama, loadModel, type LoadedModel } from "../../sidecar/engine/llama/model.js";
import type { RunningSidecar } from "../../sidecar/start-sidecar.js";
import { clientsFor, collect, startTestSidecar } from "../support/sidecar.js";

/** Tokens one (query, document) pair may hold on the sidecars here (--embedding-context-size). */
const PAIR_TOKENS = 96;
const QUERY = "what do llamas eat";
const DOCUMENTS = [
  "llamas eat grass and hay",
  "the sky is blue today",
  "llamas eat grass and hay",
  "a recipe for bread",
];

let sidecar: RunningSidecar;
let reference: { model: LlamaModel; context: LlamaRankingContext };
beforeAll(async () => {
  sidecar = await startTestSidecar({
    model: modelPath("rerank"),
    sequences: 1,
    contextSize: 128,
    embeddingContextSize: PAIR_TOKENS,
    maxQueue: 1,
  });
  // The reference: node-llama-cpp's ranking context on the same file, sized and threaded as the sidecar's.
  const model = await (await loadLlama()).loadModel({ modelPath: modelPath("rerank") });
  reference = {
    model,
    context: await model.createRankingContext({ contextSize: PAIR_TOKENS, batchSize: PAIR_TOKENS, threads: 1 }),
  };
}, 60_000);
afterAll(async () => {
  await sidecar?.stop();
  await reference?.context.dispose();
  await reference?.model.dispose();
});

/**
 * llama-server's input for a pair: the model's rerank template with the two texts in, tokenized at once with its
 * special tokens.
 */
const serverInput = (query: string, document: string) =>
  reference.model.tokenize(RERANK_TEMPLATE.replace("{query}", query).replace("{document}", document), true);
/** The reference score of a pair: llama-server's input on node-llama-cpp's ranking context. */
const serverScore = (query: string, document: string) => rankTokens(reference.context, serverInput(query, document));

const codeOf = async (promise: Promise<unknown>): Promise<string> =>
  promise.then(
    () => "ok",
    (error: unknown) => (error instanceof ConnectError ? `${Code[error.code]}: ${error.rawMessage}` : String(error)),
  );

describe.each(["grpc", "grpc-web"] as const)("Rank over %s", (transport) => {
  const client = () => clientsFor(sidecar.url)[transport];

  it("scores every document on the input llama-server builds, in the documents' order", async () => {
    const expected: number[] = [];
    for (const document of DOCUMENTS) expected.push(await serverScore(QUERY, document));
    const tokens = DOCUMENTS.map((d) => serverInput(QUERY, d).length).reduce((a, b) => a + b, 0);
    const answer = await client().rank({ model: "any", query: QUERY, documents: DOCUMENTS });
    // node-llama-cpp's own input is another (a BOS first, the query tokenized apart), with other scores.
    expect(reference.context.calculateInputLength(QUERY, DOCUMENTS[0]!)).toBe(
      serverInput(QUERY, DOCUMENTS[0]!).length + 1,
    );
    expect(answer.scores[0]).not.toBe(Math.fround(await reference.context.rank(QUERY, DOCUMENTS[0]!)));
    // Scores travel as proto floats.
    expect(answer.scores).toEqual(expected.map(Math.fround));
    expect(answer.promptTokens).toBe(tokens);
    // By construction: the same pair, the same score; P("yes") of a softmax over two labels.
    expect(answer.scores[2]).toBe(answer.scores[0]);
    for (const score of answer.scores) expect(score > 0 && score < 1).toBe(true);
    // The model tells the three different documents apart (the reference run shows it).
    expect(new Set(answer.scores).size).toBe(3);
  });

  it("gives a document the same score alone as among others", async () => {
    const together = await client().rank({ query: QUERY, documents: DOCUMENTS });
    const alone = await client().rank({ query: QUERY, documents: [DOCUMENTS[1]!] });
    expect(alone.scores).toEqual([together.scores[1]]);
  });

  it.each([
    ["no documents", { query: QUERY, documents: [] }, "InvalidArgument: rank needs at least one document"],
    ["an empty document", { query: QUERY, documents: ["hay", ""] }, "InvalidArgument: document 1 is empty"],
    ["an empty query", { query: "", documents: ["hay"] }, "InvalidArgument: the query is empty"],
  ])("refuses %s with INVALID_ARGUMENT", async (_name, request, message) => {
    expect(await codeOf(client().rank(request))).toBe(message);
  });

  it("refuses a document that does not fit beside the query, naming it and the limit", async () => {
    const long = "llamas eat grass ".repeat(40);
    const tokens = serverInput(QUERY, long).length;
    expect(tokens).toBeGreaterThanOrEqual(PAIR_TOKENS);
    expect(await codeOf(client().rank({ query: QUERY, documents: ["hay", long] }))).toBe(
      `InvalidArgument: document 1 and the query take ${tokens} tokens, but a ranking input holds at most ` +
        `${PAIR_TOKENS - 1}`,
    );
  });

  it("lists the model as kind rank; refuses to generate or embed with it", async () => {
    const { models } = await client().listModels({});
    expect(models.map((m) => [m.id, m.kind, m.architecture])).toEqual([["rerank", "rank", "qwen3"]]);
    const generating = collect(client().generate({ input: { case: "prompt", value: "Once upon a time" } }));
    expect(await codeOf(generating)).toBe(
      'InvalidArgument: model "rerank" is a reranking model: it ranks documents, it does not generate text',
    );
    const embedding = client().embed({ inputs: [{ input: { case: "text", value: "hay" } }] });
    expect(await codeOf(embedding)).toBe(
      "InvalidArgument: this model is a reranking model: it ranks documents, it has no embeddings",
    );
  });
});

describe("Ranker on the real engine", () => {
  let scripted: LoadedModel;
  beforeAll(async () => {
    scripted = await loadModel({
      modelPath: modelPath("scripted"),
      threads: 1,
      engine: "auto",
      sequences: 1,
      contextSize: 64,
      maxQueue: 1,
      queueTimeoutMs: 10_000,
    });
  }, 60_000);
  afterAll(() => scripted?.dispose());
  const ranker = () => sidecar.models[0]!.ranker;

  it("a model without a ranking head is kind generate and refuses Rank", async () => {
    expect(scripted.kind).toBe("generate");
    expect(await codeOf(scripted.ranker.rank(QUERY, ["hay"], new AbortController().signal))).toBe(
      "InvalidArgument: this model has no ranking head (cls.output.weight or cls.weight): Rank needs a reranking model",
    );
  });

  it(
    "lets one call run and max-queue wait; the next is refused with RESOURCE_EXHAUSTED, and the queue " + "recovers",
    async () => {
      const signal = new AbortController().signal;
      const calls = [1, 2, 3].map((i) => ranker().rank(`${QUERY} ${i}`, DOCUMENTS, signal));
      expect((await Promise.all(calls.map(codeOf))).map((c) => c.split(":")[0])).toEqual([
        "ok",
        "ok",
        "ResourceExhausted",
      ]);
      expect(await codeOf(ranker().rank(QUERY, ["hay"], signal))).toBe("ok");
    },
  );

  it("a caller that left gets CANCELLED and the next caller is served", async () => {
    const gone = new AbortController();
    gone.abort();
    expect(await codeOf(ranker().rank(QUERY, ["hay"], gone.signal))).toBe("Canceled: the request was cancelled");
    const { scores } = await ranker().rank(QUERY, ["hay"], new AbortController().signal);
    expect(scores).toEqual([await serverScore(QUERY, "hay")]);
  });
});
