// POST /infill on the edge alone (a fake sidecar): the body mapped to GenerateRequest.infill field by
// field, llama-server's answer and stream frames exactly (held-back text first, the final object, no
// [DONE]), an in-stream failure as `data: {"error":…}`, keys as on every generation endpoint. The
// real model's answers are in test/e2e/infill.test.ts.
import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { post, testApp } from "../support/app.js";
import { fail, finish, start, token } from "../support/fake-sidecar.js";

const BODY = { input_prefix: "def f():\n", input_suffix: "\nf()\n" };
const SCRIPT = [
  start("coder", 12, 4),
  token("return", { id: 7 }),
  token(" 1", { id: 8 }),
  finish("stop", { promptTokens: 12, completionTokens: 2, cachedTokens: 4, text: "\n" }),
];

describe("POST /infill", () => {
  it("maps llama-server's fields to the infill, its sampling and its limits", async () => {
    const { app, sidecar } = testApp(SCRIPT);
    const response = await post(app, "/infill", {
      ...BODY,
      prompt: "    ",
      input_extra: [{ text: "X = 1\n", filename: "a.py", time: 5 }, { text: "Y = 2\n" }],
      n_predict: 16,
      n_indent: 4,
      t_max_predict_ms: 250,
      temperature: 0.2,
      top_k: 40,
      top_p: 0.99,
      stop: ["\n\n"],
      samplers: ["top_k", "top_p", "infill"],
      cache_prompt: true,
    });
    expect(response.status).toBe(200);
    const request = sidecar.lastCall?.request;
    expect(request?.input).toEqual({
      case: "infill",
      value: expect.objectContaining({
        prefix: BODY.input_prefix,
        suffix: BODY.input_suffix,
        prompt: "    ",
        files: [
          expect.objectContaining({ filename: "a.py", text: "X = 1\n" }),
          expect.objectContaining({ filename: "", text: "Y = 2\n" }),
        ],
        minIndent: 4,
        timeLimitMs: 250,
      }),
    });
    expect([request?.maxTokens, request?.stop, request?.sampling?.topK]).toEqual([16, ["\n\n"], 40]);
    // -1 is no limit, as llama-server reads it.
    await post(app, "/infill", { ...BODY, n_predict: -1 });
    expect(sidecar.lastCall?.request.maxTokens).toBeUndefined();
  });

  it("answers llama-server's /completion object", async () => {
    const { app } = testApp(SCRIPT);
    const body = await (await post(app, "/infill", { ...BODY, return_tokens: true })).json();
    expect(body).toEqual({
      index: 0,
      content: "return 1\n",
      tokens: [7, 8],
      stop: true,
      model: "coder",
      tokens_predicted: 2,
      tokens_evaluated: 12,
      generation_settings: { n_predict: -1, n_indent: 0, t_max_predict_ms: -1, stream: false },
      has_new_line: true,
      truncated: false,
      stop_type: "eos",
      stopping_word: "",
      tokens_cached: 14,
      timings: expect.objectContaining({ cache_n: 4, prompt_n: 8, predicted_n: 2 }),
    });
  });

  it("streams a data event per token, the held-back text, then the final object, and no [DONE]", async () => {
    const { app } = testApp(SCRIPT);
    const text = await (await post(app, "/infill", { ...BODY, stream: true })).text();
    const events = text.split("\n\n").filter((e) => e.startsWith("data: "));
    const frames = events.map((e) => JSON.parse(e.slice("data: ".length)) as Record<string, unknown>);
    expect(frames.slice(0, 3)).toEqual([
      { index: 0, content: "return", tokens: [], stop: false, tokens_predicted: 1, tokens_evaluated: 12 },
      { index: 0, content: " 1", tokens: [], stop: false, tokens_predicted: 2, tokens_evaluated: 12 },
      { index: 0, content: "\n", tokens: [], stop: false, tokens_predicted: 2, tokens_evaluated: 12 },
    ]);
    expect(frames[3]).toMatchObject({ content: "", stop: true, stop_type: "eos", tokens_predicted: 2 });
    expect(frames).toHaveLength(4);
    expect(text).not.toContain("[DONE]");
  });

  it("says stop_type word for a stop sequence and limit for n_predict", async () => {
    const word = testApp([start(), token("a"), finish("stop", { completionTokens: 1, stopSequence: "\n\n" })]);
    expect(await (await post(word.app, "/infill", BODY)).json()).toMatchObject({
      stop_type: "word",
      stopping_word: "\n\n",
    });
    const limit = testApp([start(), token("a"), finish("length", { completionTokens: 1 })]);
    expect(await (await post(limit.app, "/infill", BODY)).json()).toMatchObject({ stop_type: "limit" });
  });

  it("ends a stream that fails after its start with data: {error}", async () => {
    const { app } = testApp([start(), token("a"), fail(Code.Internal, "boom")]);
    const text = await (await post(app, "/infill", { ...BODY, stream: true })).text();
    const last =
      text
        .split("\n\n")
        .filter((e) => e.startsWith("data: "))
        .at(-1) ?? "";
    expect(JSON.parse(last.slice("data: ".length))).toEqual({
      error: expect.objectContaining({ type: "server_error" }),
    });
  });

  it("needs a key when the server has keys", async () => {
    const { app } = testApp(SCRIPT, { access: { apiKeys: "k1" } });
    expect((await post(app, "/infill", BODY)).status).toBe(401);
    const keyed = await post(app, "/infill", BODY, {
      headers: { "content-type": "application/json", authorization: "Bearer k1" },
    });
    expect(keyed.status).toBe(200);
  });
});
