// Every bad request is refused before the sidecar is called, with an HTTP 4xx and
// the OpenAI error shape {"error":{"message","type","param","code"}} (docs/contract.md).
import { describe, expect, it } from "vitest";
import { MAX_DISCARD_BYTES } from "../../edge/core/body.js";
import { BASE, get, post, testApp } from "../support/app.js";

const CHAT = "/v1/chat/completions";
const COMPLETIONS = "/v1/completions";
const user = [{ role: "user", content: "Hello!" }];
const weatherTool = { type: "function", function: { name: "get_weather", parameters: { type: "object" } } };

interface ErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

async function expectError(
  response: Response,
  status: number,
  expected: { param?: string | null; code?: string | null; message?: RegExp; type?: string },
): Promise<ErrorBody> {
  expect(response.status).toBe(status);
  expect(response.headers.get("content-type")).toBe("application/json");
  expect(response.headers.get("access-control-allow-origin")).toBe("*");
  const body = (await response.json()) as ErrorBody;
  expect(Object.keys(body)).toEqual(["error"]);
  expect(Object.keys(body.error).sort()).toEqual(["code", "message", "param", "type"]);
  expect(body.error.type).toBe(expected.type ?? "invalid_request_error");
  expect(typeof body.error.message).toBe("string");
  expect(body.error.message.length).toBeGreaterThan(0);
  if (expected.param !== undefined) expect(body.error.param).toBe(expected.param);
  if (expected.code !== undefined) expect(body.error.code).toBe(expected.code);
  if (expected.message !== undefined) expect(body.error.message).toMatch(expected.message);
  return body;
}

interface Case {
  name: string;
  path: string;
  body: unknown;
  status?: number;
  param: string | null;
  code?: string | null;
  message?: RegExp;
}

const cases: Case[] = [
  // the body itself
  {
    name: "invalid JSON",
    path: CHAT,
    body: '{"messages": [',
    param: null,
    code: "invalid_json",
    message: /not valid JSON/,
  },
  { name: "empty body", path: CHAT, body: "", param: null, code: "missing_body" },
  { name: "whitespace body", path: CHAT, body: " \n", param: null, code: "missing_body" },
  { name: "JSON array body", path: CHAT, body: [1, 2], param: null, message: /^Invalid request body: / },
  { name: "JSON string body", path: CHAT, body: '"hi"', param: null },
  {
    name: "invalid UTF-8 bytes",
    path: CHAT,
    body: new Uint8Array([
      ...new TextEncoder().encode('{"messages":[{"role":"user","content":"'),
      0xc3,
      0x28,
      0x22,
      0x7d,
      0x5d,
      0x7d,
    ]),
    param: null,
    code: "invalid_encoding",
  },
  // chat messages
  {
    name: "missing messages",
    path: CHAT,
    body: { model: "m" },
    param: "messages",
    message: /^Missing required parameter: 'messages'/,
  },
  { name: "messages not an array", path: CHAT, body: { messages: "hi" }, param: "messages" },
  { name: "empty messages", path: CHAT, body: { messages: [] }, param: "messages", message: /at least one message/ },
  {
    name: "unknown role",
    path: CHAT,
    body: { messages: [...user, { role: "wizard", content: "x" }] },
    param: "messages[1].role",
    message: /'system', 'developer', 'user', 'assistant', 'tool'/,
  },
  {
    name: "a non-function tool",
    path: CHAT,
    body: { messages: user, tools: [{ type: "web_search" }] },
    param: "tools[0].type",
    message: /only "function" tools/,
  },
  {
    name: "a bad tool name",
    path: CHAT,
    body: { messages: user, tools: [{ type: "function", function: { name: "get weather" } }] },
    param: "tools[0].function.name",
    message: /1 to 64 characters/,
  },
  {
    name: "a tool name twice",
    path: CHAT,
    body: { messages: user, tools: [weatherTool, weatherTool] },
    param: "tools[1].function.name",
    message: /used twice/,
  },
  {
    name: "tool parameters not an object",
    path: CHAT,
    body: { messages: user, tools: [{ type: "function", function: { name: "f", parameters: [1] } }] },
    param: "tools[0].function.parameters",
    message: /JSON schema object/,
  },
  {
    name: "a tool choice naming no tool",
    path: CHAT,
    body: { messages: user, tools: [weatherTool], tool_choice: { type: "function", function: { name: "other" } } },
    param: "tool_choice",
    message: /not among the tools/,
  },
  {
    name: "tool choice required without tools",
    path: CHAT,
    body: { messages: user, tool_choice: "required" },
    param: "tool_choice",
    message: /needs at least one tool/,
  },
  {
    name: "tools and legacy functions together",
    path: CHAT,
    body: { messages: user, tools: [weatherTool], functions: [{ name: "f" }] },
    param: "functions",
    message: /not both/,
  },
  {
    name: "a tool message without tool_call_id",
    path: CHAT,
    body: { messages: [...user, { role: "tool", content: "x" }] },
    param: "messages[1].tool_call_id",
    message: /Missing required parameter/,
  },
  {
    name: "tool result answering no call",
    path: CHAT,
    body: { messages: [{ role: "tool", content: "x", tool_call_id: "c" }] },
    param: "messages[0].tool_call_id",
    message: /answers no tool call/,
  },
  {
    name: "missing role",
    path: CHAT,
    body: { messages: [{ content: "x" }] },
    param: "messages[0].role",
    message: /Missing required parameter/,
  },
  {
    name: "content a number",
    path: CHAT,
    body: { messages: [{ role: "user", content: 5 }] },
    param: "messages[0].content",
  },
  {
    name: "user content null",
    path: CHAT,
    body: { messages: [{ role: "user", content: null }] },
    param: "messages[0].content",
    message: /needs content/,
  },
  {
    name: "audio content part",
    path: CHAT,
    body: {
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "a" },
            { type: "input_audio", input_audio: { data: "aGk=", format: "wav" } },
          ],
        },
      ],
    },
    param: "messages[0].content[1].type",
    message: /content parts of type 'input_audio' are not supported \(no audio model is served here\)/,
  },
  {
    name: "text part without text",
    path: CHAT,
    body: { messages: [{ role: "user", content: [{ type: "text" }] }] },
    param: "messages[0].content[0].text",
  },
  // max_tokens
  {
    name: "negative max_tokens",
    path: CHAT,
    body: { messages: user, max_tokens: -1 },
    param: "max_tokens",
    message: /integer of at least 1/,
  },
  { name: "zero max_tokens", path: CHAT, body: { messages: user, max_tokens: 0 }, param: "max_tokens" },
  { name: "float max_tokens", path: CHAT, body: { messages: user, max_tokens: 1.5 }, param: "max_tokens" },
  {
    name: "string max_tokens",
    path: CHAT,
    body: { messages: user, max_tokens: "16" },
    param: "max_tokens",
    message: /expected number, received string/,
  },
  {
    name: "zero max_completion_tokens",
    path: CHAT,
    body: { messages: user, max_completion_tokens: 0 },
    param: "max_completion_tokens",
  },
  {
    name: "completions negative max_tokens",
    path: COMPLETIONS,
    body: { prompt: "x", max_tokens: -5 },
    param: "max_tokens",
  },
  // n and sampling
  {
    name: "n: 129",
    path: CHAT,
    body: { messages: user, n: 129 },
    param: "n",
    message: /expected an integer from 1 to 128/,
  },
  { name: "n: 0", path: CHAT, body: { messages: user, n: 0 }, param: "n" },
  { name: "n: 1.5", path: CHAT, body: { messages: user, n: 1.5 }, param: "n" },
  { name: "completions n: 0", path: COMPLETIONS, body: { prompt: "x", n: 0 }, param: "n" },
  { name: "temperature > 2", path: CHAT, body: { messages: user, temperature: 2.5 }, param: "temperature" },
  { name: "temperature a string", path: CHAT, body: { messages: user, temperature: "hot" }, param: "temperature" },
  { name: "top_p 0", path: CHAT, body: { messages: user, top_p: 0 }, param: "top_p" },
  { name: "top_k negative", path: CHAT, body: { messages: user, top_k: -1 }, param: "top_k" },
  { name: "min_p > 1", path: CHAT, body: { messages: user, min_p: 1.5 }, param: "min_p" },
  { name: "seed a float", path: CHAT, body: { messages: user, seed: 1.5 }, param: "seed" },
  {
    name: "presence_penalty < -2",
    path: CHAT,
    body: { messages: user, presence_penalty: -3 },
    param: "presence_penalty",
  },
  {
    name: "frequency_penalty > 2",
    path: CHAT,
    body: { messages: user, frequency_penalty: 3 },
    param: "frequency_penalty",
  },
  { name: "repeat_penalty 0", path: CHAT, body: { messages: user, repeat_penalty: 0 }, param: "repeat_penalty" },
  {
    name: "logit_bias key not a token id",
    path: CHAT,
    body: { messages: user, logit_bias: { hello: 5 } },
    param: "logit_bias.hello",
    message: /token ids/,
  },
  {
    name: "logit_bias value out of range",
    path: CHAT,
    body: { messages: user, logit_bias: { "42": 101 } },
    param: "logit_bias.42",
  },
  {
    name: "17 stop sequences",
    path: CHAT,
    body: { messages: user, stop: Array.from({ length: 17 }, (_, i) => `s${i}`) },
    param: "stop",
    message: /at most 16/,
  },
  { name: "stop a number", path: CHAT, body: { messages: user, stop: 5 }, param: "stop" },
  { name: "stream a string", path: CHAT, body: { messages: user, stream: "yes" }, param: "stream" },
  {
    name: "include_usage a string",
    path: CHAT,
    body: { messages: user, stream: true, stream_options: { include_usage: "yes" } },
    param: "stream_options.include_usage",
  },
  { name: "model a number", path: CHAT, body: { messages: user, model: 7 }, param: "model" },
  // logprobs
  {
    name: "top_logprobs > 20",
    path: CHAT,
    body: { messages: user, logprobs: true, top_logprobs: 21 },
    param: "top_logprobs",
  },
  {
    name: "top_logprobs without logprobs",
    path: CHAT,
    body: { messages: user, top_logprobs: 3 },
    param: "top_logprobs",
    message: /requires logprobs/,
  },
  { name: "chat logprobs a number", path: CHAT, body: { messages: user, logprobs: 3 }, param: "logprobs" },
  { name: "completions logprobs > 5", path: COMPLETIONS, body: { prompt: "x", logprobs: 6 }, param: "logprobs" },
  // completions prompt and unsupported options
  {
    name: "missing prompt",
    path: COMPLETIONS,
    body: { max_tokens: 3 },
    param: "prompt",
    message: /^Missing required parameter: 'prompt'/,
  },
  {
    name: "several prompts",
    path: COMPLETIONS,
    body: { prompt: ["a", "b"] },
    param: "prompt",
    message: /only one prompt per request/,
  },
  { name: "empty prompt array", path: COMPLETIONS, body: { prompt: [] }, param: "prompt", message: /only one prompt/ },
  {
    name: "token-id prompt",
    path: COMPLETIONS,
    body: { prompt: [1, 2, 3] },
    param: "prompt",
    message: /token-id prompts are not supported/,
  },
  {
    name: "nested token-id prompt",
    path: COMPLETIONS,
    body: { prompt: [[1, 2]] },
    param: "prompt",
    message: /token-id prompts/,
  },
  { name: "prompt a number", path: COMPLETIONS, body: { prompt: 5 }, param: "prompt" },
  {
    name: "max_tokens 0 without echo",
    path: COMPLETIONS,
    body: { prompt: "x", max_tokens: 0 },
    param: "max_tokens",
    message: /max_tokens 0 needs echo/,
  },
  {
    name: "suffix with echo",
    path: COMPLETIONS,
    body: { prompt: "x", suffix: "end", echo: true },
    param: "echo",
    message: /echo is not supported with suffix/,
  },
  { name: "infill without input_suffix", path: "/infill", body: { input_prefix: "x" }, param: "input_suffix" },
  {
    name: "infill input_extra without text",
    path: "/infill",
    body: { input_prefix: "x", input_suffix: "", input_extra: [{ filename: "a.py" }] },
    param: "input_extra[0].text",
  },
  {
    name: "infill n_cmpl streamed",
    path: "/infill",
    body: { input_prefix: "x", input_suffix: "", n_cmpl: 3, stream: true },
    param: "n_cmpl",
    message: /not streamed/,
  },
  { name: "best_of: 2", path: COMPLETIONS, body: { prompt: "x", best_of: 2 }, param: "best_of", message: /best_of=1/ },
];

describe("bad requests are refused before the sidecar is called", () => {
  it.each(cases)("$name → $param", async (c) => {
    const { app, sidecar } = testApp();
    const response = await post(app, c.path, c.body);
    await expectError(response, c.status ?? 400, {
      param: c.param,
      ...(c.code === undefined ? {} : { code: c.code }),
      ...(c.message === undefined ? {} : { message: c.message }),
    });
    expect(sidecar.calls).toHaveLength(0);
  });

  it("the same errors for streaming requests (HTTP status, not SSE)", async () => {
    const { app, sidecar } = testApp();
    const response = await post(app, CHAT, { messages: [], stream: true });
    await expectError(response, 400, { param: "messages" });
    expect(sidecar.calls).toHaveLength(0);
  });

  it("a missing body (no body at all) is a 400", async () => {
    const { app, sidecar } = testApp();
    const response = await app.fetch(new Request(`${BASE}${CHAT}`, { method: "POST" }));
    await expectError(response, 400, { param: null, code: "missing_body" });
    expect(sidecar.calls).toHaveLength(0);
  });
});

describe("body size limit", () => {
  const tenMegabytes = 33 * 1024 * 1024;

  it("a 10 MB body gets a 413 in the OpenAI shape", async () => {
    const { app, sidecar } = testApp();
    const content = "x".repeat(tenMegabytes);
    const response = await post(app, CHAT, { messages: [{ role: "user", content }] });
    await expectError(response, 413, { param: null, code: "request_too_large", message: /33554432 bytes/ });
    expect(sidecar.calls).toHaveLength(0);
  });

  it("a declared content-length over the limit is refused without reading the body", async () => {
    const { app, sidecar } = testApp();
    let pulls = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulls++;
        controller.enqueue(new Uint8Array(64 * 1024));
      },
    });
    const request = new Request(`${BASE}${CHAT}`, { method: "POST", body, duplex: "half" } as RequestInit);
    // undici's Request drops a content-length given in init; a server adapter sets it from the wire.
    const withLength = new Proxy(request, {
      get(target, key) {
        if (key === "headers") return new Headers({ "content-length": String(tenMegabytes) });
        const value: unknown = Reflect.get(target, key, target);
        return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const response = await app.fetch(withLength);
    await expectError(response, 413, { code: "request_too_large" });
    expect(pulls).toBeLessThanOrEqual(1); // at most the stream's own initial fill
    expect(sidecar.calls).toHaveLength(0);
  });

  it("without content-length, bytes are counted; past the limit the rest is dropped, not kept", async () => {
    const { app, sidecar } = testApp(undefined, { maxBodyBytes: 1024 * 1024 });
    const chunk = 64 * 1024;
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= tenMegabytes) controller.close();
        else {
          controller.enqueue(new Uint8Array(chunk).fill(0x20));
          sent += chunk;
        }
      },
    });
    const response = await app.fetch(
      new Request(`${BASE}${CHAT}`, { method: "POST", body, duplex: "half" } as RequestInit),
    );
    await expectError(response, 413, { code: "request_too_large", message: /1048576 bytes/ });
    expect(sidecar.calls).toHaveLength(0);
  });

  it("an endless body: reading stops after the limit plus MAX_DISCARD_BYTES", async () => {
    const { app } = testApp(undefined, { maxBodyBytes: 1024 });
    const chunk = 1024 * 1024;
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.enqueue(new Uint8Array(chunk));
        sent += chunk;
      },
    });
    const response = await app.fetch(
      new Request(`${BASE}${CHAT}`, { method: "POST", body, duplex: "half" } as RequestInit),
    );
    await expectError(response, 413, { code: "request_too_large" });
    expect(sent).toBeLessThanOrEqual(MAX_DISCARD_BYTES + 4 * chunk);
  });

  it("a body just under the limit is accepted", async () => {
    const { app, sidecar } = testApp(undefined, { maxBodyBytes: 4096 });
    const content = "x".repeat(3000);
    const response = await post(app, CHAT, { messages: [{ role: "user", content }] });
    expect(response.status).toBe(200);
    expect(sidecar.calls).toHaveLength(1);
  });
});

describe("tolerated input", () => {
  it("accepts any content-type (curl -d sends application/x-www-form-urlencoded)", async () => {
    for (const type of ["application/x-www-form-urlencoded", "text/plain", ""]) {
      const { app, sidecar } = testApp();
      const response = await post(
        app,
        CHAT,
        { messages: user },
        { headers: type === "" ? {} : { "content-type": type } },
      );
      expect(response.status, type).toBe(200);
      expect(sidecar.calls).toHaveLength(1);
    }
  });

  it("ignores fields it does not use and accepts nulls for optional ones", async () => {
    const { app, sidecar } = testApp();
    const response = await post(app, CHAT, {
      model: "gpt-4o",
      messages: [{ role: "user", content: "Hello!", name: "ann" }],
      user: "user-123",
      metadata: { a: "b" },
      store: false,
      parallel_tool_calls: null,
      temperature: null,
      top_p: null,
      max_tokens: null,
      stop: null,
      n: 1,
      seed: null,
      stream: null,
      stream_options: null,
      logprobs: null,
      top_logprobs: null,
      frequency_penalty: null,
      service_tier: "auto",
    });
    expect(response.status).toBe(200);
    expect(sidecar.calls).toHaveLength(1);
  });

  it("accepts a huge max_tokens (the sidecar caps it by the context)", async () => {
    const { app, sidecar } = testApp();
    for (const max of [1_000_000, 2 ** 40, 1e20]) {
      const response = await post(app, CHAT, { messages: user, max_tokens: max });
      expect(response.status).toBe(200);
    }
    expect(sidecar.calls.map((c) => c.request.maxTokens)).toEqual([1_000_000, 0xffffffff, 0xffffffff]);
  });

  it('accepts echo: false, suffix: null/"", best_of: 1 and a one-element prompt array', async () => {
    const { app, sidecar } = testApp();
    const response = await post(app, COMPLETIONS, { prompt: ["Once"], echo: false, suffix: "", best_of: 1 });
    expect(response.status).toBe(200);
    expect(sidecar.lastCall?.request.input).toEqual({ case: "prompt", value: "Once" });
  });
});

describe("routing", () => {
  it("unknown route → 404 in the OpenAI shape", async () => {
    const { app, sidecar } = testApp();
    await expectError(await get(app, "/v1/nope"), 404, { param: null, code: "unknown_route" });
    await expectError(await post(app, "/v2/chat/completions", { messages: user }), 404, { code: "unknown_route" });
    expect(sidecar.calls).toHaveLength(0);
  });

  it("wrong method → 405 with Allow", async () => {
    const { app, sidecar } = testApp();
    const response = await get(app, CHAT);
    expect(response.headers.get("allow")).toBe("POST");
    await expectError(response, 405, { code: "method_not_allowed" });
    const models = await post(app, "/v1/models", {});
    expect(models.headers.get("allow")).toBe("GET");
    await expectError(models, 405, { code: "method_not_allowed" });
    expect(sidecar.calls).toHaveLength(0);
  });
});
