// POST /v1/rerank and POST /rerank against the fake sidecar: the exact answer (best first, ties in
// the request's order, cut to top_n, documents unless return_documents is false), the RankRequest
// sent, the refusals in OpenAI's shape, the sidecar's errors, keys, and the caller's signal.
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { FIXED_ID, post, testApp } from "../support/app.js";

const QUERY = "what do llamas eat";
const DOCUMENTS = ["grass", "the sky", "hay", { text: "bread" }];
/** Scores the fake sidecar gives the four documents: "hay" ties "the sky" (a tie keeps the request's order). */
const SCORES = [0.25, 0.75, 0.75, 0.5];

function scripted() {
  const test = testApp();
  test.sidecar.rankResult = SCORES;
  return test;
}

describe.each(["/v1/rerank", "/rerank"])("POST %s", (path) => {
  it("answers every document, best first, with its text, and sends the texts in order", async () => {
    const { app, sidecar } = scripted();
    const response = await post(app, path, { model: "reranker", query: QUERY, documents: DOCUMENTS });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/json");
    expect(await response.json()).toEqual({
      id: `rerank-${FIXED_ID}`,
      object: "list",
      model: "reranker",
      usage: { prompt_tokens: 12, total_tokens: 12 },
      results: [
        { index: 1, relevance_score: 0.75, document: { text: "the sky" } },
        { index: 2, relevance_score: 0.75, document: { text: "hay" } },
        { index: 3, relevance_score: 0.5, document: { text: "bread" } },
        { index: 0, relevance_score: 0.25, document: { text: "grass" } },
      ],
    });
    expect(sidecar.rankCalls.map((c) => [c.request.model, c.request.query, c.request.documents])).toEqual([
      ["reranker", QUERY, ["grass", "the sky", "hay", "bread"]],
    ]);
  });

  it(
    "cuts to top_n, leaves documents out with return_documents false, and names the served model when the body " +
      "names none",
    async () => {
      const { app } = scripted();
      const response = await post(app, path, { query: QUERY, documents: DOCUMENTS, top_n: 2, return_documents: false });
      expect(await response.json()).toEqual({
        id: `rerank-${FIXED_ID}`,
        object: "list",
        model: "fake-model",
        usage: { prompt_tokens: 12, total_tokens: 12 },
        results: [
          { index: 1, relevance_score: 0.75 },
          { index: 2, relevance_score: 0.75 },
        ],
      });
      const all = await post(app, path, { query: QUERY, documents: ["grass"], top_n: 5 });
      expect(((await all.json()) as { results: unknown[] }).results).toEqual([
        { index: 0, relevance_score: 0.25, document: { text: "grass" } },
      ]);
    },
  );

  it.each([
    ["no query", { documents: ["grass"] }, "Missing required parameter: 'query'.", "query"],
    ["an empty query", { query: "", documents: ["grass"] }, "Invalid 'query': query must not be empty", "query"],
    ["no documents", { query: QUERY }, "Missing required parameter: 'documents'.", "documents"],
    ["an empty list", { query: QUERY, documents: [] }, "Invalid 'documents': documents must not be empty", "documents"],
    [
      "an empty document",
      { query: QUERY, documents: ["grass", ""] },
      "Invalid 'documents[1]': a document must not be empty",
      "documents[1]",
    ],
    [
      "an image",
      { query: QUERY, documents: [{ image: "https://example.com/llama.png" }] },
      "Missing required parameter: 'documents[0].text'.",
      "documents[0].text",
    ],
    [
      "a number",
      { query: QUERY, documents: [7] },
      "Invalid type for 'documents[0]': expected string or object.",
      "documents[0]",
    ],
    [
      "top_n 0",
      { query: QUERY, documents: ["grass"], top_n: 0 },
      "Invalid 'top_n': Too small: expected number to be >=1",
      "top_n",
    ],
    [
      "2,049 documents",
      { query: QUERY, documents: Array.from({ length: 2049 }, () => "a") },
      "Invalid 'documents': Too big: expected array to have <=2048 items",
      "documents",
    ],
  ])("refuses %s with a 400 in OpenAI's shape, before the sidecar", async (_name, body, message, param) => {
    const { app, sidecar } = scripted();
    const response = await post(app, path, body);
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: { message, type: "invalid_request_error", param, code: null } });
    expect(sidecar.rankCalls).toEqual([]);
  });
});

describe("POST /v1/rerank: the sidecar's answers and the caller", () => {
  it.each([
    [Code.InvalidArgument, 400, "invalid_request_error", null],
    [Code.ResourceExhausted, 429, "rate_limit_error", "rate_limit_exceeded"],
    [Code.NotFound, 404, "invalid_request_error", "model_not_found"],
  ])("gRPC %s → HTTP %i in OpenAI's shape", async (code, status, type, errorCode) => {
    const { app, sidecar } = scripted();
    sidecar.rankResult = new ConnectError(
      "document 0 and the query take 600 tokens, but a ranking input holds at most 511",
      code,
    );
    const response = await post(app, "/v1/rerank", { query: QUERY, documents: ["grass"] });
    expect(response.status).toBe(status);
    expect(await response.json()).toEqual({
      error: {
        message: "document 0 and the query take 600 tokens, but a ranking input holds at most 511",
        type,
        param: null,
        code: errorCode,
      },
    });
  });

  it("needs a key when keys are set, and passes the caller's signal to the sidecar", async () => {
    const { app, sidecar } = testApp(undefined, { access: { apiKeys: "sk-rerank-0123456789" } });
    sidecar.rankResult = SCORES;
    const body = { query: QUERY, documents: ["grass"] };
    expect((await post(app, "/v1/rerank", body)).status).toBe(401);
    expect(sidecar.rankCalls).toEqual([]);
    const caller = new AbortController();
    const answered = await post(app, "/v1/rerank", body, {
      headers: { "content-type": "application/json", authorization: "Bearer sk-rerank-0123456789" },
      signal: caller.signal,
    });
    expect(answered.status).toBe(200);
    const sent = sidecar.rankCalls[0]?.signal;
    expect(sent?.aborted).toBe(false);
    caller.abort();
    expect(sent?.aborted).toBe(true);
  });

  it("sends keep_alive as keep_alive_seconds, and refuses a bad one naming it", async () => {
    const { app, sidecar } = scripted();
    const body = { query: QUERY, documents: ["grass"] };
    expect((await post(app, "/v1/rerank", { ...body, keep_alive: "2m" })).status).toBe(200);
    expect((await post(app, "/v1/rerank", body)).status).toBe(200);
    expect(sidecar.rankCalls.map((c) => c.request.keepAliveSeconds)).toEqual([120, undefined]);
    const refused = await post(app, "/v1/rerank", { ...body, keep_alive: "soon" });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: { param: string } }).error.param).toBe("keep_alive");
    expect(sidecar.rankCalls).toHaveLength(2);
  });
});
