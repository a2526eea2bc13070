// POST /v1/responses against the fake sidecar: the Response object, the request's
// translation, OpenAI's error shape, and what the stateless server refuses.
//
// Usage comes on the terminal event inside the whole Response, and a request refused before
// the stream starts is a plain JSON error with its HTTP status (docs/contract.md).
import { create } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { GenerateRequestSchema, Role } from "../../proto/gen/inference/v1/inference_pb.js";
import { FIXED_CREATED, FIXED_ID, get, post, testApp } from "../support/app.js";
import { checkResponsesStream } from "../support/contract.js";
import { delay, fail, finish, start, token, type Step } from "../support/fake-sidecar.js";
import { parseText } from "../support/sse.js";

const PATH = "/v1/responses";
const script: Step[] = [
  start("tiny-llama", 9, 2),
  token("Hi"),
  token(" there"),
  finish("stop", { promptTokens: 9, completionTokens: 2, cachedTokens: 2 }),
];

function response(fields: Record<string, unknown>): Record<string, unknown> {
  return {
    id: `resp_${FIXED_ID}`,
    object: "response",
    created_at: FIXED_CREATED,
    completed_at: FIXED_CREATED,
    status: "completed",
    error: null,
    incomplete_details: null,
    instructions: null,
    max_output_tokens: null,
    model: "tiny-llama",
    output: [],
    output_text: "",
    parallel_tool_calls: true,
    previous_response_id: null,
    store: false,
    background: false,
    service_tier: "default",
    // The sampling in effect: the sidecar's defaults unless the request set them.
    temperature: 1,
    text: { format: { type: "text" } },
    tool_choice: "auto",
    tools: [],
    top_p: 0.95,
    presence_penalty: 0,
    frequency_penalty: 0,
    top_logprobs: 0,
    reasoning: { effort: null, summary: null },
    max_tool_calls: null,
    user: null,
    safety_identifier: null,
    prompt_cache_key: null,
    truncation: "disabled",
    usage: null,
    metadata: {},
    ...fields,
  };
}

const message = (text: string, status = "completed") => ({
  id: `msg_${FIXED_ID}`,
  type: "message",
  status,
  role: "assistant",
  content: [{ type: "output_text", text, annotations: [], logprobs: [] }],
});

describe("POST /v1/responses (stream off)", () => {
  it("returns the Response: one message item, output_text, usage from the sidecar's counts", async () => {
    const { app } = testApp(script);
    const res = await post(app, PATH, {
      model: "local-model",
      input: "Hello!",
      instructions: "Be brief.",
      temperature: 0.5,
      top_p: 0.9,
      store: true,
      metadata: { k: "v" },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(await res.json()).toEqual(
      response({
        instructions: "Be brief.",
        temperature: 0.5,
        top_p: 0.9,
        metadata: { k: "v" },
        output: [message("Hi there")],
        output_text: "Hi there",
        usage: {
          input_tokens: 9,
          input_tokens_details: { cached_tokens: 2 },
          output_tokens: 2,
          output_tokens_details: { reasoning_tokens: 0 },
          total_tokens: 11,
        },
      }),
    );
  });

  it("max_output_tokens reached: status incomplete with incomplete_details", async () => {
    const { app } = testApp([start(), token("Hi"), finish("length", { completionTokens: 1 })]);
    const body = (await (await post(app, PATH, { input: "Hello!", max_output_tokens: 1 })).json()) as Record<
      string,
      unknown
    >;
    expect(body).toMatchObject({
      status: "incomplete",
      incomplete_details: { reason: "max_output_tokens" },
      max_output_tokens: 1,
      output: [message("Hi", "incomplete")],
      output_text: "Hi",
    });
  });

  it("an empty reply has no output items; held-back text is part of the reply", async () => {
    const empty = testApp([start(), finish("stop", { completionTokens: 1 })]);
    expect(await (await post(empty.app, PATH, { input: "x" })).json()).toMatchObject({
      output: [],
      output_text: "",
      status: "completed",
    });
    const held = testApp([start(), token("It is"), finish("stop", { completionTokens: 2, text: " sun" })]);
    expect(await (await post(held.app, PATH, { input: "x" })).json()).toMatchObject({
      output: [message("It is sun")],
      output_text: "It is sun",
    });
  });

  it("a failure during generation is a 500 in OpenAI's shape", async () => {
    const { app } = testApp([start(), token("Hi"), fail(Code.Internal, "engine failed")]);
    const res = await post(app, PATH, { input: "x" });
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({
      error: { message: "engine failed", type: "server_error", param: null, code: null },
    });
  });
});

describe("POST /v1/responses (stream on)", () => {
  it("streams typed events with sequence numbers, held-back text before the item closes", async () => {
    const { app } = testApp([
      start("tiny-llama", 9),
      token("It is"),
      token("", { piece: " sun" }),
      finish("stop", { promptTokens: 9, completionTokens: 2, text: " sun" }),
    ]);
    const res = await post(app, PATH, { input: "Hello!", stream: true });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    const events = parseText(await res.text());
    expect(events.map((e) => (e.data === "[DONE]" ? "[DONE]" : (JSON.parse(e.data) as { type: string }).type))).toEqual(
      [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
        "response.output_text.delta",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
        "[DONE]",
      ],
    );
    const summary = checkResponsesStream(events);
    expect(summary).toMatchObject({ text: "It is sun", terminal: "response.completed" });
    expect(summary.response).toEqual(
      response({
        output: [message("It is sun")],
        output_text: "It is sun",
        usage: {
          input_tokens: 9,
          input_tokens_details: { cached_tokens: 0 },
          output_tokens: 2,
          output_tokens_details: { reasoning_tokens: 0 },
          total_tokens: 11,
        },
      }),
    );
  });

  it("an empty reply: no items, then response.completed", async () => {
    const { app } = testApp([start(), finish("stop", { completionTokens: 1 })]);
    const events = parseText(await (await post(app, PATH, { input: "x", stream: true })).text());
    expect(checkResponsesStream(events)).toMatchObject({ text: "", items: [], terminal: "response.completed" });
    expect(events).toHaveLength(4);
  });

  it("keep-alive is an SSE comment, so sequence numbers stay contiguous", async () => {
    const { app } = testApp([start(), delay(120), token("Hi"), finish("stop", { completionTokens: 1 })], {
      keepAliveMs: 30,
    });
    const text = await (await post(app, PATH, { input: "x", stream: true })).text();
    expect(text).toMatch(/^: ping$/m);
    expect(checkResponsesStream(parseText(text)).text).toBe("Hi");
  });
});

describe("Responses → GenerateRequest", () => {
  it("instructions first, message items with roles, text parts joined, sampling, max_output_tokens", async () => {
    const { app, sidecar } = testApp();
    const res = await post(app, PATH, {
      model: "local-model",
      instructions: "Be brief.",
      input: [
        { role: "developer", content: "Use English." },
        {
          type: "message",
          role: "user",
          content: [
            { type: "input_text", text: "Hello" },
            { type: "input_text", text: "there!" },
          ],
        },
        {
          type: "message",
          role: "assistant",
          id: "msg_1",
          status: "completed",
          content: [{ type: "output_text", text: "Hi.", annotations: [] }],
        },
        { role: "user", content: "Weather?" },
      ],
      max_output_tokens: 50,
      temperature: 0.2,
      top_p: 0.8,
      tools: [],
      store: false,
      reasoning: { effort: "low" },
      truncation: "disabled",
    });
    expect(res.status).toBe(200);
    expect(sidecar.lastCall?.request).toEqual(
      create(GenerateRequestSchema, {
        model: "local-model",
        input: {
          case: "chat",
          value: {
            // reasoning.effort low: 512 reasoning tokens (edge/fields/reasoning-effort.ts).
            reasoningBudget: 512,
            messages: [
              { role: Role.SYSTEM, content: "Be brief." },
              { role: Role.SYSTEM, content: "Use English." },
              { role: Role.USER, content: "Hello\nthere!" },
              { role: Role.ASSISTANT, content: "Hi." },
              { role: Role.USER, content: "Weather?" },
            ],
          },
        },
        sampling: { temperature: 0.2, topP: 0.8 },
        maxTokens: 50,
        // The request log's id (x-request-id), which the sidecar's Slots shows beside the request's sequence.
        requestId: "req_test0000000000000000id01",
      }),
    );
  });

  it("a string input is one user message; no max_output_tokens means no limit", async () => {
    const { app, sidecar } = testApp();
    await post(app, PATH, { input: "Hello!" });
    expect(sidecar.lastCall?.request).toEqual(
      create(GenerateRequestSchema, {
        input: { case: "chat", value: { messages: [{ role: Role.USER, content: "Hello!" }] } },
        sampling: {},
        requestId: "req_test0000000000000000id01",
      }),
    );
  });
});

describe("bad requests: OpenAI's error shape, refused before the sidecar is called", () => {
  const cases: { name: string; body: unknown; param: string | null; message: RegExp; status?: number }[] = [
    { name: "not JSON", body: "{", param: null, message: /not valid JSON/ },
    { name: "missing input", body: { model: "m" }, param: "input", message: /^Missing required parameter: 'input'\.$/ },
    { name: "input a number", body: { input: 5 }, param: "input", message: /expected string or array/ },
    { name: "empty input list", body: { input: [] }, param: "input", message: /at least one input item/ },
    {
      name: "previous_response_id without a store",
      body: { input: "x", previous_response_id: "resp_abc" },
      param: "previous_response_id",
      message: /not supported by this server without a store/,
    },
    {
      name: "conversation",
      body: { input: "x", conversation: "conv_1" },
      param: "conversation",
      message: /stores no responses/,
    },
    {
      name: "a function tool with a bad name",
      body: { input: "x", tools: [{ type: "function", name: "get weather", parameters: {} }] },
      param: "tools[0].name",
      message: /1 to 64 characters/,
    },
    {
      name: "a function tool named twice",
      body: {
        input: "x",
        tools: [
          { type: "function", name: "f" },
          { type: "function", name: "f" },
        ],
      },
      param: "tools[1].name",
      message: /used twice/,
    },
    {
      name: "a tool choice naming no tool",
      body: { input: "x", tools: [{ type: "function", name: "f" }], tool_choice: { type: "function", name: "g" } },
      param: "tool_choice.name",
      message: /not among the tools/,
    },
    {
      name: "tool choice required without function tools",
      body: { input: "x", tools: [{ type: "web_search" }], tool_choice: "required" },
      param: "tool_choice",
      message: /needs at least one function tool/,
    },
    {
      name: "a function_call_output answering no call",
      body: { input: [{ type: "function_call_output", call_id: "c", output: "x" }] },
      param: "input[0].call_id",
      message: /answers no tool call/,
    },
    {
      name: "a function_call item without call_id",
      body: { input: [{ type: "function_call", role: "assistant", content: "x" }] },
      param: "input[0].call_id",
      message: /Missing required parameter/,
    },
    {
      name: "an item_reference",
      body: { input: [{ type: "item_reference", role: "user", content: "x" }] },
      param: "input[0].type",
      message: /stores nothing/,
    },
    {
      name: "an image part without its image",
      body: { input: [{ role: "user", content: [{ type: "input_image", detail: "auto" }] }] },
      param: "input[0].content[0].image_url",
      message: /Missing required parameter: 'input\[0\]\.content\[0\]\.image_url'/,
    },
    {
      name: "an image in an assistant message",
      body: { input: [{ role: "assistant", content: [{ type: "input_image", image_url: "data:," }] }] },
      param: "input[0].content[0].type",
      message: /images go in user messages only/,
    },
    {
      name: "a file part",
      body: { input: [{ role: "user", content: [{ type: "input_file", file_id: "file-1" }] }] },
      param: "input[0].content[0].type",
      message: /'input_file' are not supported; supported: 'input_text', 'output_text', 'input_image'/,
    },
    {
      name: "a tool role",
      body: { input: [{ role: "tool", content: "x" }] },
      param: "input[0].role",
      message: /'system', 'developer', 'user', 'assistant'/,
    },
    {
      name: "an unknown input item type",
      body: { input: [{ type: "computer_call_output", role: "user", content: "x" }] },
      param: "input[0].type",
      message: /'computer_call_output' are not supported/,
    },
    {
      name: "max_output_tokens 0",
      body: { input: "x", max_output_tokens: 0 },
      param: "max_output_tokens",
      message: /at least 1/,
    },
    { name: "temperature 3", body: { input: "x", temperature: 3 }, param: "temperature", message: /temperature/ },
    {
      name: "metadata values not strings",
      body: { input: "x", metadata: { a: 1 } },
      param: "metadata.a",
      message: /metadata\.a/,
    },
    { name: "store a string", body: { input: "x", store: "yes" }, param: "store", message: /store/ },
    {
      name: "a 33 MiB body",
      body: { input: "x".repeat(33 * 1024 * 1024) },
      param: null,
      message: /33554432 bytes/,
      status: 413,
    },
  ];

  it.each(cases)("$name", async (c) => {
    const { app, sidecar } = testApp();
    for (const stream of [false, true]) {
      const payload = typeof c.body === "object" && c.body !== null ? { ...c.body, stream } : c.body;
      const res = await post(app, PATH, payload);
      expect(res.status).toBe(c.status ?? 400);
      expect(res.headers.get("content-type")).toBe("application/json");
      const body = (await res.json()) as { error: { message: string; type: string; param: string | null } };
      expect(Object.keys(body)).toEqual(["error"]);
      expect(body.error.type).toBe("invalid_request_error");
      expect(body.error.param).toBe(c.param);
      expect(body.error.message).toMatch(c.message);
    }
    expect(sidecar.calls).toHaveLength(0);
  });
});

describe("sidecar failures before the stream starts: HTTP errors, streaming or not", () => {
  it.each([
    { code: Code.InvalidArgument, status: 400, type: "invalid_request_error" },
    { code: Code.NotFound, status: 404, type: "invalid_request_error" },
    { code: Code.ResourceExhausted, status: 429, type: "rate_limit_error" },
    { code: Code.Unavailable, status: 503, type: "server_error" },
  ])("gRPC $code → HTTP $status", async (c) => {
    for (const stream of [false, true]) {
      const { app } = testApp([fail(c.code, "sidecar says no")]);
      const res = await post(app, PATH, { input: "x", stream });
      expect(res.status).toBe(c.status);
      expect(res.headers.get("content-type")).toBe("application/json");
      expect(((await res.json()) as { error: { type: string; message: string } }).error).toMatchObject({
        type: c.type,
        message: "sidecar says no",
      });
    }
  });
});

describe("Response fields the Open Responses schema requires", () => {
  it("echo what the request set, forward what changes the reply, and refuse what this server cannot do", async () => {
    const { app, sidecar } = testApp(script);
    const sent = {
      input: "Hello!",
      temperature: 0.2,
      top_p: 0.5,
      presence_penalty: 0.5,
      frequency_penalty: -0.5,
      max_tool_calls: 1,
      reasoning: { effort: "low", summary: "auto" },
      safety_identifier: "user-hash-1",
      prompt_cache_key: "thread-7",
      user: "u1",
      service_tier: "auto",
    };
    const body = (await (await post(app, PATH, sent)).json()) as Record<string, unknown>;
    const { input: _input, ...echoed } = sent;
    expect(body).toMatchObject({
      ...echoed,
      // One tier: the Response says which was used.
      service_tier: "default",
      background: false,
      completed_at: FIXED_CREATED,
    });
    const request = sidecar.lastCall?.request;
    expect(request?.sampling).toMatchObject({ presencePenalty: 0.5, frequencyPenalty: -0.5 });
    expect(request?.input.case === "chat" ? request.input.value.parallelToolCalls : undefined).toBe(false);
    const refused = await post(app, PATH, { input: "x", top_logprobs: 3 });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: { param: string } }).error.param).toBe("top_logprobs");
  });

  it(
    "background without a stream: the sidecar is asked for a detached resumable job and the answer is queued at " +
      "once",
    async () => {
      const { app, sidecar } = testApp(script);
      const response = await post(app, PATH, { input: "Hello!", background: true });
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({
        object: "response",
        status: "queued",
        background: true,
        output: [],
        usage: null,
        completed_at: null,
      });
      expect(sidecar.lastCall?.request).toMatchObject({ resumable: true, detached: true });
    },
  );

  it("names every stream event with an event: line equal to its type", async () => {
    const { app } = testApp(script);
    const text = await (await post(app, PATH, { input: "Hello!", stream: true })).text();
    const events = parseText(text);
    for (const event of events.filter((e) => e.data !== "[DONE]"))
      expect(event.event).toBe((JSON.parse(event.data) as { type: string }).type);
    const created = JSON.parse(events[0]!.data) as { response: { completed_at: unknown } };
    expect(created.response.completed_at).toBeNull();
  });
});

describe("GET /v1/responses (the WebSocket mode)", () => {
  it("on an app built without WebSockets, an upgrade is refused by name with a 400, not a 405", async () => {
    const { app, sidecar } = testApp(script);
    const upgrade = {
      connection: "Upgrade",
      upgrade: "websocket",
      "sec-websocket-version": "13",
      "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==",
    };
    const response = await get(app, PATH, { headers: upgrade });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      error: {
        message:
          "The WebSocket mode of /v1/responses is not served by this host; POST /v1/responses (with stream: true for " +
          "server-sent events).",
        type: "invalid_request_error",
        param: null,
        code: "unsupported_endpoint",
      },
    });
    expect(sidecar.calls).toHaveLength(0);
  });

  it("without an upgrade is a 400 that says it needs one", async () => {
    const { app, sidecar } = testApp(script);
    const response = await get(app, PATH);
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      error: {
        message:
          "GET /v1/responses is the WebSocket mode: open it with a WebSocket upgrade and send response.create " +
          "messages; or POST /v1/responses.",
        type: "invalid_request_error",
        param: null,
        code: "websocket_upgrade_required",
      },
    });
    expect(sidecar.calls).toHaveLength(0);
  });
});
