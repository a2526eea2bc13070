// POST /v1/messages and /v1/messages/count_tokens against the fake sidecar: the
// Message object, the request's translation, Anthropic's error shape and statuses,
// the `ping` keep-alive and the `request-id` header.
//
// Errors before the stream starts are an HTTP 4xx with {"type":"error","error":{…}}; during
// it, `event: error` (docs/contract.md, "Anthropic Messages").
import { create } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { GenerateRequestSchema, Role } from "../../proto/gen/inference/v1/inference_pb.js";
import { BASE, FIXED_ID, get, post, testApp } from "../support/app.js";
import { checkAnthropicStream } from "../support/contract.js";
import { delay, fail, finish, start, token, type Step } from "../support/fake-sidecar.js";
import { parseText } from "../support/sse.js";

const PATH = "/v1/messages";
const body = { model: "claude-sonnet-4-5", max_tokens: 64, messages: [{ role: "user", content: "Hello!" }] };
const script: Step[] = [
  start("tiny-llama", 9, 2),
  token("Hi"),
  token(" there"),
  finish("stop", { promptTokens: 9, completionTokens: 2, cachedTokens: 2 }),
];

interface AnthropicError {
  type: "error";
  error: { type: string; message: string };
}

async function expectError(
  response: Response,
  status: number,
  type: string,
  message?: RegExp,
): Promise<AnthropicError> {
  expect(response.status).toBe(status);
  expect(response.headers.get("content-type")).toBe("application/json");
  expect(response.headers.get("request-id")).toBe(`req_${FIXED_ID}`);
  const error = (await response.json()) as AnthropicError;
  expect(Object.keys(error).sort()).toEqual(["error", "type"]);
  expect(Object.keys(error.error).sort()).toEqual(["message", "type"]);
  expect(error.type).toBe("error");
  expect(error.error.type).toBe(type);
  if (message !== undefined) expect(error.error.message).toMatch(message);
  return error;
}

describe("POST /v1/messages (stream off)", () => {
  it("returns the Message: content blocks, stop_reason, usage", async () => {
    const { app } = testApp(script);
    const response = await post(app, PATH, body, {
      headers: { "x-api-key": "sk-ant-anything", "anthropic-version": "2023-06-01" },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/json");
    expect(response.headers.get("request-id")).toBe(`req_${FIXED_ID}`);
    expect(await response.json()).toEqual({
      id: `msg_${FIXED_ID}`,
      type: "message",
      role: "assistant",
      model: "tiny-llama",
      content: [{ type: "text", text: "Hi there" }],
      stop_reason: "end_turn",
      stop_sequence: null,
      // Anthropic counts cache reads apart: input_tokens + cache_read_input_tokens = the prompt.
      usage: { input_tokens: 7, cache_creation_input_tokens: 0, cache_read_input_tokens: 2, output_tokens: 2 },
    });
  });

  it.each([
    ["stop_sequence", [finish("stop", { completionTokens: 1, stopSequence: "Tokyo" })], "stop_sequence", "Tokyo"],
    ["max_tokens", [finish("length", { completionTokens: 64 })], "max_tokens", null],
    // The sidecar names the cause: no guess from the counts (10 < max_tokens 64 is still max_tokens).
    ["max_tokens below the body's max_tokens", [finish("length", { completionTokens: 10 })], "max_tokens", null],
    ["a full context", [finish("context_full", { completionTokens: 10 })], "model_context_window_exceeded", null],
  ] as const)("stop_reason for %s", async (_, ending, reason, sequence) => {
    const { app } = testApp([start(), token("It is sunny in "), ...ending]);
    const message = (await (await post(app, PATH, body)).json()) as Record<string, unknown>;
    expect(message).toMatchObject({ stop_reason: reason, stop_sequence: sequence });
  });

  it("an empty reply has no content blocks", async () => {
    const { app } = testApp([start(), token("", { piece: "\n" }), finish("stop", { completionTokens: 1 })]);
    const message = (await (await post(app, PATH, body)).json()) as Record<string, unknown>;
    expect(message).toMatchObject({ content: [], stop_reason: "end_turn" });
  });

  it("includes text the sidecar held back to the end (Finish.text)", async () => {
    const { app } = testApp([
      start(),
      token("It is sunny in "),
      token("", { piece: "Tok" }),
      finish("stop", { text: "Tok" }),
    ]);
    const message = (await (await post(app, PATH, body)).json()) as Record<string, unknown>;
    expect(message["content"]).toEqual([{ type: "text", text: "It is sunny in Tok" }]);
  });

  it("a failure during generation is a 500 api_error", async () => {
    const { app } = testApp([start(), token("Hi"), fail(Code.Internal, "engine failed")]);
    await expectError(await post(app, PATH, body), 500, "api_error", /^engine failed$/);
  });
});

describe("POST /v1/messages (stream on)", () => {
  it("streams named events in Anthropic's order, held-back text in its block", async () => {
    const { app } = testApp([
      start("tiny-llama", 9),
      token("It is"),
      token("", { piece: " sun" }),
      finish("stop", { completionTokens: 2, text: " sun" }),
    ]);
    const response = await post(app, PATH, { ...body, stream: true });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    expect(response.headers.get("request-id")).toBe(`req_${FIXED_ID}`);
    const events = parseText(await response.text());
    expect(events.map((e) => e.event)).toEqual([
      "message_start",
      "content_block_start",
      "content_block_delta",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    expect(checkAnthropicStream(events)).toMatchObject({ text: "It is sun", stopReason: "end_turn", done: true });
  });

  it("an empty reply opens no block", async () => {
    const { app } = testApp([start(), finish("stop", { completionTokens: 1 })]);
    const events = parseText(await (await post(app, PATH, { ...body, stream: true })).text());
    expect(events.map((e) => e.event)).toEqual(["message_start", "message_delta", "message_stop"]);
    checkAnthropicStream(events);
  });

  it("sends `event: ping` while the sidecar is silent (the keep-alive)", async () => {
    const { app } = testApp([start(), delay(120), token("Hi"), finish("stop", { completionTokens: 1 })], {
      keepAliveMs: 30,
    });
    const text = await (await post(app, PATH, { ...body, stream: true })).text();
    expect(text).toContain('event: ping\ndata: {"type":"ping"}\n\n');
    expect(text).not.toMatch(/^: ping$/m); // not the OpenAI-style comment
    const summary = checkAnthropicStream(parseText(text));
    expect(summary.pings).toBeGreaterThan(0);
    expect(summary.text).toBe("Hi");
  });

  it("the client leaving mid-stream aborts the sidecar call and writes nothing more", async () => {
    const { app, sidecar } = testApp([start(), token("Hi"), delay(60_000), finish()]);
    const response = await post(app, PATH, { ...body, stream: true });
    const reader = response.body!.getReader();
    await reader.read();
    await reader.cancel();
    const deadline = Date.now() + 2000;
    while (sidecar.lastCall?.signal?.aborted !== true && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 5));
    expect(sidecar.lastCall?.signal?.aborted).toBe(true);
  });
});

describe("Messages → GenerateRequest", () => {
  it("system first, text blocks joined, sampling, stop sequences, max_tokens, model", async () => {
    const { app, sidecar } = testApp();
    const response = await post(app, PATH, {
      model: "claude-haiku-4-5",
      max_tokens: 100,
      system: [
        { type: "text", text: "Be brief." },
        { type: "text", text: "Use English.", cache_control: { type: "ephemeral" } },
      ],
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "Hello" },
            { type: "text", text: "there!" },
          ],
        },
        { role: "assistant", content: "Hi." },
        { role: "user", content: "Weather?" },
      ],
      stop_sequences: ["Tokyo", ""],
      temperature: 0.5,
      top_p: 0.9,
      top_k: 20,
      metadata: { user_id: "u-1" },
      thinking: { type: "disabled" },
      tools: [],
    });
    expect(response.status).toBe(200);
    expect(sidecar.lastCall?.request).toEqual(
      create(GenerateRequestSchema, {
        model: "claude-haiku-4-5",
        input: {
          case: "chat",
          value: {
            // thinking disabled: no reasoning at all.
            reasoningBudget: 0,
            messages: [
              { role: Role.SYSTEM, content: "Be brief.\nUse English." },
              { role: Role.USER, content: "Hello\nthere!" },
              { role: Role.ASSISTANT, content: "Hi." },
              { role: Role.USER, content: "Weather?" },
            ],
          },
        },
        sampling: { temperature: 0.5, topP: 0.9, topK: 20 },
        maxTokens: 100,
        stop: ["Tokyo"],
        // The system block's cache_control: the prompt through the system message, 5 minutes.
        cacheMarks: [{ messages: 1, ttlSeconds: 300 }],
        // The request log's id (x-request-id), which the sidecar's Slots shows beside the request's sequence.
        requestId: "req_test0000000000000000id01",
      }),
    );
  });

  it("a string system prompt; no system message when there is none; huge max_tokens capped", async () => {
    const { app, sidecar } = testApp();
    await post(app, PATH, { ...body, system: "Be brief." });
    expect(sidecar.lastCall?.request.input).toEqual({
      case: "chat",
      value: expect.objectContaining({
        messages: [
          expect.objectContaining({ role: Role.SYSTEM, content: "Be brief." }),
          expect.objectContaining({ role: Role.USER, content: "Hello!" }),
        ],
      }),
    });
    await post(app, PATH, { ...body, max_tokens: 1e12, system: null });
    const request = sidecar.lastCall?.request;
    expect(request?.input.case === "chat" ? request.input.value.messages.map((m) => m.role) : []).toEqual([Role.USER]);
    expect(request?.maxTokens).toBe(0xffffffff);
  });
});

describe("system messages inside messages (as Claude Code sends them)", () => {
  it("stay where they stand, as system messages, cache_control and all", async () => {
    const { app, sidecar } = testApp();
    const response = await post(app, PATH, {
      ...body,
      system: "You are Claude Code.",
      messages: [
        { role: "user", content: "Hello!" },
        { role: "system", content: [{ type: "text", text: "<env>linux</env>", cache_control: { type: "ephemeral" } }] },
        { role: "user", content: "Go on." },
      ],
    });
    expect(response.status).toBe(200);
    const input = sidecar.lastCall?.request.input;
    const messages = input?.case === "chat" ? input.value.messages.map((m) => [m.role, m.content]) : [];
    expect(messages).toEqual([
      [Role.SYSTEM, "You are Claude Code."],
      [Role.USER, "Hello!"],
      [Role.SYSTEM, "<env>linux</env>"],
      [Role.USER, "Go on."],
    ]);
  });
});

describe("bad requests: Anthropic's error shape, refused before the sidecar is called", () => {
  const user = [{ role: "user", content: "Hello!" }];
  const cases: { name: string; body: unknown; message: RegExp; status?: number; type?: string }[] = [
    { name: "not JSON", body: '{"model":', message: /not valid JSON/ },
    { name: "empty body", body: "", message: /empty/ },
    {
      name: "missing max_tokens (required, as Anthropic requires)",
      body: { model: "m", messages: user },
      message: /^Missing required parameter: 'max_tokens'\.$/,
    },
    { name: "missing model", body: { max_tokens: 5, messages: user }, message: /'model'/ },
    { name: "max_tokens 0", body: { ...body, max_tokens: 0 }, message: /'max_tokens'.*at least 1/ },
    { name: "max_tokens a string", body: { ...body, max_tokens: "5" }, message: /'max_tokens'/ },
    { name: "missing messages", body: { model: "m", max_tokens: 5 }, message: /'messages'/ },
    { name: "no messages", body: { ...body, messages: [] }, message: /at least one message/ },
    {
      name: "an unknown role in messages",
      body: { ...body, messages: [{ role: "developer", content: "x" }, ...user] },
      message: /'messages\[0\]\.role'.*'user', 'assistant' or 'system'/,
    },
    {
      name: "a tool_use block in a system message",
      body: {
        ...body,
        messages: [{ role: "system", content: [{ type: "tool_use", id: "t", name: "f", input: {} }] }, ...user],
      },
      message: /cannot hold 'tool_use'/,
    },
    {
      name: "an image block without a source",
      body: { ...body, messages: [{ role: "user", content: [{ type: "image", source: {} }] }] },
      message: /Missing required parameter: 'messages\[0\]\.content\[0\]\.source\.type'/,
    },
    {
      name: "an image block from the assistant",
      body: {
        ...body,
        messages: [
          ...user,
          {
            role: "assistant",
            content: [{ type: "image", source: { type: "url", url: "https://example.com/a.png" } }],
          },
          ...user,
        ],
      },
      message: /'messages\[1\]\.content\[0\]\.type'.*cannot hold 'image'/,
    },
    {
      name: "a document block",
      body: { ...body, messages: [{ role: "user", content: [{ type: "document", source: {} }] }] },
      message: /'messages\[0\]\.content\[0\]\.type'.*'document' are not supported/,
    },
    {
      name: "a tool_result answering no tool_use",
      body: {
        ...body,
        messages: [{ role: "user", content: [{ type: "tool_result", tool_use_id: "t", content: "x" }] }],
      },
      message: /'messages\[0\]\.content\[0\]\.tool_use_id'.*answers no tool call/,
    },
    {
      name: "a tool_use block from the user",
      body: { ...body, messages: [{ role: "user", content: [{ type: "tool_use", id: "t", name: "f", input: {} }] }] },
      message: /'messages\[0\]\.content\[0\]\.type'.*cannot hold 'tool_use'/,
    },
    {
      name: "a server tool",
      body: { ...body, tools: [{ type: "web_search_20250305", name: "web_search" }] },
      message: /'tools\[0\]\.type'.*server tools \('web_search_20250305'\)/,
    },
    {
      name: "a tool without input_schema",
      body: { ...body, tools: [{ name: "get_weather" }] },
      message: /'tools\[0\]\.input_schema'/,
    },
    {
      name: "a bad tool name",
      body: { ...body, tools: [{ name: "get weather", input_schema: { type: "object" } }] },
      message: /'tools\[0\]\.name'.*1 to 64/,
    },
    {
      name: "a tool name twice",
      body: {
        ...body,
        tools: [
          { name: "f", input_schema: {} },
          { name: "f", input_schema: {} },
        ],
      },
      message: /'tools\[1\]\.name'.*used twice/,
    },
    {
      name: "a tool choice naming no tool",
      body: { ...body, tools: [{ name: "f", input_schema: {} }], tool_choice: { type: "tool", name: "g" } },
      message: /'tool_choice\.name'.*not among the tools/,
    },
    {
      name: "tool choice any without tools",
      body: { ...body, tool_choice: { type: "any" } },
      message: /'tool_choice'.*needs at least one tool/,
    },
    {
      name: "an unknown tool choice",
      body: { ...body, tool_choice: { type: "sometimes" } },
      message: /'tool_choice\.type'.*'auto', 'any', 'tool'/,
    },
    {
      name: "a text block without text",
      body: { ...body, messages: [{ role: "user", content: [{ type: "text" }] }] },
      message: /'messages\[0\]\.content\[0\]\.text'/,
    },
    { name: "system an image block", body: { ...body, system: [{ type: "image" }] }, message: /'system\[0\]\.type'/ },
    { name: "temperature above Anthropic's 1", body: { ...body, temperature: 1.5 }, message: /'temperature'/ },
    { name: "top_p 0", body: { ...body, top_p: 0 }, message: /'top_p'/ },
    { name: "top_k negative", body: { ...body, top_k: -1 }, message: /'top_k'/ },
    {
      name: "17 stop sequences",
      body: { ...body, stop_sequences: Array.from({ length: 17 }, (_, i) => `s${i}`) },
      message: /at most 16/,
    },
    { name: "stream a string", body: { ...body, stream: "yes" }, message: /'stream'/ },
    {
      name: "a last assistant message (prefill)",
      body: { ...body, messages: [...user, { role: "assistant", content: "The answer is" }] },
      message: /'messages\[1\]\.role'.*prefill/,
    },
    {
      name: "a 33 MiB body",
      body: { ...body, system: "x".repeat(33 * 1024 * 1024) },
      status: 413,
      type: "request_too_large",
      message: /33554432 bytes/,
    },
  ];

  it.each(cases)("$name", async (c) => {
    const { app, sidecar } = testApp();
    for (const stream of [false, true]) {
      const payload =
        typeof c.body === "object" && c.body !== null
          ? { ...c.body, stream: (c.body as { stream?: unknown }).stream ?? stream }
          : c.body;
      await expectError(await post(app, PATH, payload), c.status ?? 400, c.type ?? "invalid_request_error", c.message);
    }
    expect(sidecar.calls).toHaveLength(0);
  });
});

describe("sidecar failures before the stream starts: HTTP errors, streaming or not", () => {
  const statuses: { code: Code; status: number; type: string; retryAfter?: string }[] = [
    { code: Code.InvalidArgument, status: 400, type: "invalid_request_error" },
    { code: Code.FailedPrecondition, status: 400, type: "invalid_request_error" },
    { code: Code.NotFound, status: 404, type: "not_found_error" },
    { code: Code.ResourceExhausted, status: 529, type: "overloaded_error", retryAfter: "1" },
    { code: Code.DeadlineExceeded, status: 504, type: "timeout_error" },
    { code: Code.Unavailable, status: 503, type: "api_error", retryAfter: "1" },
    { code: Code.Internal, status: 500, type: "api_error" },
  ];
  it.each(statuses)("gRPC $code → HTTP $status $type", async (c) => {
    for (const stream of [false, true]) {
      const { app } = testApp([fail(c.code, "sidecar says no")]);
      const response = await post(app, PATH, { ...body, stream });
      expect(response.headers.get("retry-after")).toBe(c.retryAfter ?? null);
      await expectError(response, c.status, c.type, /^sidecar says no$/);
    }
  });
});

describe("routes under /v1/messages answer in Anthropic's shape", () => {
  it("wrong method → 405, unknown path → 404", async () => {
    const { app } = testApp();
    const wrongMethod = await get(app, PATH);
    expect(wrongMethod.headers.get("allow")).toBe("POST");
    await expectError(wrongMethod, 405, "invalid_request_error", /Method GET is not allowed/);
    await expectError(await post(app, "/v1/messages/batches", body), 404, "not_found_error", /Unknown route/);
  });

  it("CORS preflight allows the headers the Anthropic SDK sends", async () => {
    const { app } = testApp();
    const response = await app.fetch(new Request(`${BASE}${PATH}`, { method: "OPTIONS" }));
    expect(response.status).toBe(204);
    expect(response.headers.get("access-control-allow-headers")).toContain("x-api-key");
    expect(response.headers.get("access-control-allow-headers")).toContain("anthropic-version");
  });
});

describe("POST /v1/messages/count_tokens", () => {
  it("counts the rendered prompt with the sidecar's Tokenize", async () => {
    const { app, sidecar } = testApp();
    sidecar.tokenizeResult = [1, 2, 3, 4, 5, 6, 7];
    const response = await post(app, `${PATH}/count_tokens`, {
      model: "claude-sonnet-4-5",
      system: "Be brief.",
      messages: [{ role: "user", content: [{ type: "text", text: "Hello!" }] }],
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("request-id")).toBe(`req_${FIXED_ID}`);
    expect(await response.json()).toEqual({ input_tokens: 7 });
    expect(sidecar.tokenizeCalls).toHaveLength(1);
    expect(sidecar.tokenizeCalls[0]?.model).toBe("claude-sonnet-4-5");
    expect(sidecar.tokenizeCalls[0]?.input).toEqual({
      case: "chat",
      value: expect.objectContaining({
        messages: [
          expect.objectContaining({ role: Role.SYSTEM, content: "Be brief." }),
          expect.objectContaining({ role: Role.USER, content: "Hello!" }),
        ],
      }),
    });
    expect(sidecar.calls).toHaveLength(0);
  });

  it("bad input and sidecar failures in Anthropic's shape", async () => {
    const { app, sidecar } = testApp();
    await expectError(
      await post(app, `${PATH}/count_tokens`, { model: "m", messages: [] }),
      400,
      "invalid_request_error",
      /at least one message/,
    );
    expect(sidecar.tokenizeCalls).toHaveLength(0);
    sidecar.tokenizeResult = new (await import("@connectrpc/connect")).ConnectError(
      "model is loading",
      Code.Unavailable,
    );
    await expectError(
      await post(app, `${PATH}/count_tokens`, { model: "m", messages: [{ role: "user", content: "x" }] }),
      503,
      "api_error",
      /model is loading/,
    );
  });
});
