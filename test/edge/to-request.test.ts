// Each protocol's body is normalised once into the proto GenerateRequest.
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { GenerateRequestSchema, Role, SamplingOptionsSchema } from "../../proto/gen/inference/v1/inference_pb.js";
import { post, testApp } from "../support/app.js";

async function sent(path: string, body: unknown) {
  const { app, sidecar } = testApp();
  const response = await post(app, path, body);
  expect(response.status).toBe(200);
  const call = sidecar.lastCall;
  if (call === undefined) throw new Error("the sidecar was not called");
  return call.request;
}

describe("chat → GenerateRequest", () => {
  it("maps roles, joins text parts, passes the model name through", async () => {
    const request = await sent("/v1/chat/completions", {
      model: "local-model",
      messages: [
        { role: "system", content: "Be brief." },
        { role: "developer", content: [{ type: "text", text: "Use English." }] },
        {
          role: "user",
          content: [
            { type: "text", text: "Hello" },
            { type: "text", text: "there!" },
          ],
        },
        { role: "assistant", content: null },
        { role: "assistant", content: "Hi." },
      ],
    });
    expect(request).toEqual(
      create(GenerateRequestSchema, {
        model: "local-model",
        input: {
          case: "chat",
          value: {
            messages: [
              { role: Role.SYSTEM, content: "Be brief." },
              { role: Role.SYSTEM, content: "Use English." },
              { role: Role.USER, content: "Hello\nthere!" },
              { role: Role.ASSISTANT, content: "" },
              { role: Role.ASSISTANT, content: "Hi." },
            ],
          },
        },
        sampling: {},
        stop: [],
        // The request log's id (x-request-id), which the sidecar's Slots shows beside the request's sequence.
        requestId: "req_test0000000000000000id01",
      }),
    );
    expect(request.maxTokens).toBeUndefined();
  });

  it("maps every sampling option", async () => {
    const request = await sent("/v1/chat/completions", {
      messages: [{ role: "user", content: "x" }],
      temperature: 0,
      top_p: 0.9,
      top_k: 40,
      min_p: 0.05,
      seed: 42,
      presence_penalty: 0.5,
      frequency_penalty: -0.5,
      repeat_penalty: 1.1,
      logit_bias: { "15": -100, "7": 2.5 },
      stop: ["\n\n", "", "User:"],
      max_completion_tokens: 64,
      max_tokens: 8,
      logprobs: true,
      top_logprobs: 5,
    });
    expect(request.sampling).toEqual(
      create(SamplingOptionsSchema, {
        temperature: 0,
        topP: 0.9,
        topK: 40,
        minP: 0.05,
        seed: 42,
        presencePenalty: 0.5,
        frequencyPenalty: -0.5,
        repeatPenalty: 1.1,
        logitBias: { 15: -100, 7: 2.5 },
      }),
    );
    expect(request.stop).toEqual(["\n\n", "User:"]); // empty stop strings are dropped
    expect(request.maxTokens).toBe(64); // max_completion_tokens wins over max_tokens
    expect(request.logprobs).toBe(true);
    expect(request.topLogprobs).toBe(5);
  });

  it("reduces any integer seed modulo 2^32", async () => {
    const seeds = [-1, 2 ** 32 + 5, 0];
    const got = [];
    for (const seed of seeds) {
      got.push(
        (await sent("/v1/chat/completions", { messages: [{ role: "user", content: "x" }], seed })).sampling?.seed,
      );
    }
    expect(got).toEqual([0xffffffff, 5, 0]);
  });

  it("a single stop string becomes a one-element list; logprobs false sends no top_logprobs", async () => {
    const request = await sent("/v1/chat/completions", {
      messages: [{ role: "user", content: "x" }],
      stop: "END",
      logprobs: false,
      top_logprobs: 0,
    });
    expect(request.stop).toEqual(["END"]);
    expect(request.logprobs).toBe(false);
    expect(request.topLogprobs).toBe(0);
  });
});

describe("completions → GenerateRequest", () => {
  it("sends the prompt as is", async () => {
    const request = await sent("/v1/completions", { prompt: "Once upon a time", max_tokens: 32, model: "m" });
    expect(request.input).toEqual({ case: "prompt", value: "Once upon a time" });
    expect(request.maxTokens).toBe(32);
    expect(request.model).toBe("m");
  });

  it("legacy logprobs N asks for N alternatives; true means 1; 0 means only the sampled token", async () => {
    const n3 = await sent("/v1/completions", { prompt: "x", logprobs: 3 });
    expect([n3.logprobs, n3.topLogprobs]).toEqual([true, 3]);
    const yes = await sent("/v1/completions", { prompt: "x", logprobs: true });
    expect([yes.logprobs, yes.topLogprobs]).toEqual([true, 1]);
    const zero = await sent("/v1/completions", { prompt: "x", logprobs: 0 });
    expect([zero.logprobs, zero.topLogprobs]).toEqual([true, 0]);
    const off = await sent("/v1/completions", { prompt: "x", logprobs: false });
    expect([off.logprobs, off.topLogprobs]).toEqual([false, 0]);
  });
});
