// Non-streaming responses: the stream is collected into one JSON body.
import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { FIXED_CREATED, post, testApp } from "../support/app.js";
import { fail, finish, start, token } from "../support/fake-sidecar.js";

const emoji = new Uint8Array([0xf0, 0x9f, 0xa6, 0x99]);
const script = [
  start("tiny-llama", 9, 2),
  token("Hi", { logprob: -0.25, top: [["Hi", -0.25]] }),
  token("", { piece: emoji.subarray(0, 2), logprob: -0.5, top: [[emoji.subarray(0, 2), -0.5]] }),
  token(" 🦙", { piece: new Uint8Array([0x20, ...emoji.subarray(2)]), logprob: -1, top: [] }),
  finish("length", { promptTokens: 9, completionTokens: 3, cachedTokens: 2 }),
];
const usage = {
  prompt_tokens: 9,
  completion_tokens: 3,
  total_tokens: 12,
  prompt_tokens_details: { cached_tokens: 2 },
  completion_tokens_details: { reasoning_tokens: 0 },
};

describe("POST /v1/chat/completions (stream off)", () => {
  it("returns a chat.completion", async () => {
    const { app } = testApp(script);
    const response = await post(app, "/v1/chat/completions", { messages: [{ role: "user", content: "Hello!" }] });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/json");
    expect(await response.json()).toEqual({
      id: "chatcmpl-test0000000000000000id01",
      object: "chat.completion",
      created: FIXED_CREATED,
      model: "tiny-llama",
      choices: [
        {
          index: 0,
          message: { role: "assistant", content: "Hi 🦙", refusal: null },
          logprobs: null,
          finish_reason: "length",
        },
      ],
      usage,
    });
  });

  it("with logprobs: one entry per generated token", async () => {
    const { app } = testApp(script);
    const response = await post(app, "/v1/chat/completions", {
      messages: [{ role: "user", content: "Hello!" }],
      logprobs: true,
      top_logprobs: 1,
    });
    const body = (await response.json()) as { choices: { logprobs: unknown }[] };
    expect(body.choices[0]?.logprobs).toEqual({
      content: [
        {
          token: "Hi",
          logprob: -0.25,
          bytes: [72, 105],
          top_logprobs: [{ token: "Hi", logprob: -0.25, bytes: [72, 105] }],
        },
        {
          token: "bytes:\\xf0\\x9f",
          logprob: -0.5,
          bytes: [240, 159],
          top_logprobs: [{ token: "bytes:\\xf0\\x9f", logprob: -0.5, bytes: [240, 159] }],
        },
        { token: "bytes:\\x20\\xa6\\x99", logprob: -1, bytes: [32, 166, 153], top_logprobs: [] },
      ],
      refusal: null,
    });
  });

  it("uses the requested name when the sidecar reports no model id", async () => {
    const { app } = testApp([start(""), token("x"), finish()]);
    const response = await post(app, "/v1/chat/completions", {
      model: "local-model",
      messages: [{ role: "user", content: "x" }],
    });
    expect(((await response.json()) as { model: string }).model).toBe("local-model");
  });

  it("sidecar failures are HTTP errors, before or after start", async () => {
    const before = testApp([fail(Code.InvalidArgument, "the prompt does not fit the context")]);
    const r1 = await post(before.app, "/v1/chat/completions", { messages: [{ role: "user", content: "x" }] });
    expect(r1.status).toBe(400);
    expect(await r1.json()).toEqual({
      error: { message: "the prompt does not fit the context", type: "invalid_request_error", param: null, code: null },
    });
    const during = testApp([start(), token("x"), fail(Code.Internal, "engine failed")]);
    const r2 = await post(during.app, "/v1/chat/completions", { messages: [{ role: "user", content: "x" }] });
    expect(r2.status).toBe(500);
    expect(await r2.json()).toEqual({
      error: { message: "engine failed", type: "server_error", param: null, code: null },
    });
  });
});

describe("POST /v1/completions (stream off)", () => {
  it("returns a text_completion", async () => {
    const { app } = testApp(script);
    const response = await post(app, "/v1/completions", { prompt: "Once upon a time" });
    expect(await response.json()).toEqual({
      id: "cmpl-test0000000000000000id01",
      object: "text_completion",
      created: FIXED_CREATED,
      model: "tiny-llama",
      choices: [{ text: "Hi 🦙", index: 0, logprobs: null, finish_reason: "length" }],
      usage,
    });
  });

  it("with legacy logprobs", async () => {
    const { app } = testApp(script);
    const response = await post(app, "/v1/completions", { prompt: "Once upon a time", logprobs: 1 });
    const body = (await response.json()) as { choices: { logprobs: unknown }[] };
    expect(body.choices[0]?.logprobs).toEqual({
      tokens: ["Hi", "bytes:\\xf0\\x9f", "bytes:\\x20\\xa6\\x99"],
      token_logprobs: [-0.25, -0.5, -1],
      top_logprobs: [{ Hi: -0.25 }, { "bytes:\\xf0\\x9f": -0.5 }, {}],
      // Offsets count from the start of the prompt "Once upon a time" (16 characters).
      text_offset: [16, 18, 18],
    });
  });

  it("a protocol violation by the sidecar is a 500, not a hang", async () => {
    const noFinish = testApp([start(), token("x")]);
    const r1 = await post(noFinish.app, "/v1/completions", { prompt: "x" });
    expect(r1.status).toBe(500);
    expect(((await r1.json()) as { error: { message: string } }).error.message).toMatch(/without a finish event/);
    const noStart = testApp([token("x"), finish()]);
    const r2 = await post(noStart.app, "/v1/completions", { prompt: "x" });
    expect(r2.status).toBe(500);
    const empty = testApp([]);
    const r3 = await post(empty.app, "/v1/completions", { prompt: "x", stream: true });
    expect(r3.status).toBe(500);
  });
});
