// Compaction against the fake sidecar (docs/contract.md, "Compaction"): POST /v1/responses/compact
// asks the model for a summary with the compaction prompt and answers OpenAI's
// `response.compaction` with the input's user messages and one sealed compaction item; that item
// sent back in `input` stands for its summary as a user message; anyone else's is refused. With `return_progress`
// both compaction streams report the prompt's progress as `response.in_progress` events the `openai` SDK reads past.
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { Role } from "../../proto/gen/inference/v1/inference_pb.js";
import {
  COMPACTION_PROMPT,
  openCompaction,
  SUMMARY_OPENING,
  sealCompaction,
} from "../../edge/protocols/openai-responses/compaction/compaction-prompt.js";
import { openReasoning, sealReasoning } from "../../edge/protocols/openai-responses/encrypted-reasoning.js";
import { FIXED_CREATED, FIXED_ID, inProcessFetch, post, testApp } from "../support/app.js";
import { finish, progress, start, token, type Step } from "../support/fake-sidecar.js";
import { parseText } from "../support/sse.js";

const SUMMARY = "Task: launch on Tuesday. Done: support notified. Next: nothing.";
const script: Step[] = [
  start("tiny-llama", 40, 12),
  token("", { reasoning: "Summarise." }),
  token(SUMMARY),
  finish("stop", { promptTokens: 40, completionTokens: 12, cachedTokens: 8, reasoningTokens: 2 }),
];
const conversation = [
  { type: "message", role: "user", content: "We agreed to launch on Tuesday." },
  { type: "message", role: "assistant", content: "Understood: Tuesday." },
  { type: "function_call", call_id: "call_1", name: "notify", arguments: "{}" },
  { type: "function_call_output", call_id: "call_1", output: "notified" },
  { role: "user", content: [{ type: "input_text", text: "Anything else?" }] },
];

/** Posts `body` to `path`: a 400 with exactly this error, and nothing reached the sidecar. */
async function expectRefused(path: string, body: unknown, message: string, param: string): Promise<void> {
  const { app, sidecar } = testApp(script);
  const res = await post(app, path, body);
  expect(res.status).toBe(400);
  expect(await res.json()).toEqual({ error: { message, type: "invalid_request_error", param, code: null } });
  expect(sidecar.calls).toHaveLength(0);
}

describe("POST /v1/responses/compact", () => {
  it(
    "answers response.compaction: the user messages, then one compaction item holding the model's " + "summary",
    async () => {
      const { app } = testApp(script);
      const res = await post(app, "/v1/responses/compact", {
        model: "m",
        instructions: "Be brief.",
        input: conversation,
        prompt_cache_key: "k",
      });
      expect(res.status).toBe(200);
      const user = (text: string) => ({
        id: `msg_${FIXED_ID}`,
        type: "message",
        status: "completed",
        role: "user",
        content: [{ type: "input_text", text }],
      });
      expect(await res.json()).toEqual({
        id: `resp_${FIXED_ID}`,
        object: "response.compaction",
        created_at: FIXED_CREATED,
        output: [
          user("We agreed to launch on Tuesday."),
          user("Anything else?"),
          { id: `cmp_${FIXED_ID}`, type: "compaction", encrypted_content: sealCompaction(SUMMARY) },
        ],
        usage: {
          input_tokens: 40,
          input_tokens_details: { cached_tokens: 8 },
          output_tokens: 12,
          output_tokens_details: { reasoning_tokens: 2 },
          total_tokens: 52,
        },
      });
    },
  );

  it("asks the model with the whole conversation and the compaction prompt last, offering no tools", async () => {
    const { app, sidecar } = testApp(script);
    const tools = [{ type: "function", name: "notify", parameters: { type: "object", properties: {} } }];
    await post(app, "/v1/responses/compact", {
      model: "m",
      instructions: "Be brief.",
      input: conversation,
      tools,
      stream: true,
    });
    const request = sidecar.lastCall?.request;
    expect(request?.input.case).toBe("chat");
    const chat = request?.input.case === "chat" ? request.input.value : undefined;
    expect(chat?.tools).toEqual([]);
    expect(chat?.messages.map((m) => [m.role, m.content])).toEqual([
      [Role.SYSTEM, "Be brief."],
      [Role.USER, "We agreed to launch on Tuesday."],
      [Role.ASSISTANT, "Understood: Tuesday."],
      [Role.TOOL, "notified"],
      [Role.USER, "Anything else?"],
      [Role.USER, COMPACTION_PROMPT],
    ]);
  });

  it("requires model, as OpenAI does", async () => {
    await expectRefused(
      "/v1/responses/compact",
      { input: "Compact this conversation." },
      "Missing required parameter: 'model'.",
      "model",
    );
  });

  it("refuses previous_response_id by name", async () => {
    await expectRefused(
      "/v1/responses/compact",
      { model: "m", input: "Hi", previous_response_id: "resp_1" },
      "previous_response_id is not supported on /v1/responses/compact: send the whole conversation in 'input'.",
      "previous_response_id",
    );
  });
});

describe("a compaction item in input", () => {
  it("stands for its summary: a user message with the summary's opening", async () => {
    const { app, sidecar } = testApp(script);
    const input = [
      { type: "message", role: "user", content: "We agreed to launch on Tuesday." },
      { type: "compaction", id: "cmp_1", encrypted_content: sealCompaction(SUMMARY) },
      { type: "message", role: "user", content: "Go on." },
    ];
    const res = await post(app, "/v1/responses", { model: "m", input });
    expect(res.status).toBe(200);
    const chat = sidecar.lastCall?.request.input;
    expect(chat?.case === "chat" ? chat.value.messages.map((m) => [m.role, m.content]) : undefined).toEqual([
      [Role.USER, "We agreed to launch on Tuesday."],
      [Role.USER, `${SUMMARY_OPENING}${SUMMARY}`],
      [Role.USER, "Go on."],
    ]);
  });

  it("is refused when this server did not make it: another server's, a damaged one, a reasoning item's", async () => {
    for (const encrypted of ["gAAAAABo-compacted-by-someone-else", "llm-edge.c1.!!!", sealReasoning(SUMMARY)]) {
      await expectRefused(
        "/v1/responses",
        { model: "m", input: [{ type: "compaction", encrypted_content: encrypted }] },
        "Invalid 'input[0].encrypted_content': is not a compaction this server made: send back the compaction item " +
          "this server's " +
          "/v1/responses/compact returned, unchanged",
        "input[0].encrypted_content",
      );
    }
  });
});

describe("sealed compaction", () => {
  it("opens what it sealed, and is not read as reasoning (nor reasoning as a compaction)", () => {
    for (const text of ["", SUMMARY, "22°C ☀️ 🦙\n<|im_end|>", "x".repeat(10_000)]) {
      const sealed = sealCompaction(text);
      expect(sealed).toMatch(/^llm-edge\.c1\.[A-Za-z0-9_-]*$/);
      expect(openCompaction(sealed)).toBe(text);
      expect(openReasoning(sealed)).toBeUndefined();
      expect(openCompaction(sealReasoning(text))).toBeUndefined();
    }
    // Bytes that are not UTF-8 (0xff) are refused, not turned into U+FFFD.
    expect(openCompaction("llm-edge.c1._w")).toBeUndefined();
  });
});

describe("a compaction_trigger as the last input item of /v1/responses (Codex's remote compaction)", () => {
  const input = [...conversation, { type: "compaction_trigger" }];
  const item = { id: `cmp_${FIXED_ID}`, type: "compaction", encrypted_content: sealCompaction(SUMMARY) };

  it("streams one compaction item in place of the reply, then response.completed", async () => {
    const { app, sidecar } = testApp(script);
    const tools = [{ type: "function", name: "notify", parameters: { type: "object", properties: {} } }];
    const res = await post(app, "/v1/responses", { model: "m", input, tools, stream: true });
    expect(res.status).toBe(200);
    const events = parseText(await res.text());
    expect(events.map((e) => (e.data === "[DONE]" ? e.data : e.event))).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.output_item.done",
      "response.completed",
      "[DONE]",
    ]);
    expect(JSON.parse(events[3]!.data)).toEqual({
      type: "response.output_item.done",
      output_index: 0,
      item,
      sequence_number: 3,
    });
    const completed = JSON.parse(events[4]!.data) as { response: Record<string, unknown> };
    expect(completed.response).toMatchObject({
      status: "completed",
      output: [item],
      output_text: "",
      usage: { input_tokens: 40, output_tokens: 12 },
    });
    const chat = sidecar.lastCall?.request.input;
    expect(chat?.case === "chat" ? [chat.value.tools, chat.value.messages.at(-1)?.content] : undefined).toEqual([
      [],
      COMPACTION_PROMPT,
    ]);
  });

  it("answers the same item in a whole Response", async () => {
    const { app } = testApp(script);
    const res = await post(app, "/v1/responses", { model: "m", input });
    expect(await res.json()).toMatchObject({ object: "response", status: "completed", output: [item] });
  });

  it("is refused anywhere but last", async () => {
    await expectRefused(
      "/v1/responses",
      { model: "m", input: [{ type: "compaction_trigger" }, ...conversation] },
      "Invalid 'input[0].type': a 'compaction_trigger' item must be the last input item",
      "input[0].type",
    );
  });
});

describe("context_management: [{type: 'compaction'}] on /v1/responses (server-side compaction)", () => {
  const item = { id: `cmp_${FIXED_ID}`, type: "compaction", encrypted_content: sealCompaction(SUMMARY) };
  const tools = [{ type: "function", name: "notify", parameters: { type: "object", properties: {} } }];
  const roles = (call: { request: { input: { case: string | undefined; value?: unknown } } } | undefined) => {
    const input = call?.request.input;
    return input?.case === "chat"
      ? (input.value as { messages: { role: Role; content: string }[] }).messages.map((m) => [m.role, m.content])
      : undefined;
  };

  it("answers as usual while the prompt stays under compact_threshold", async () => {
    const { app, sidecar } = testApp(script);
    sidecar.tokenizeResult = Array.from({ length: 99 }, (_, i) => i);
    const res = await post(app, "/v1/responses", {
      model: "m",
      input: conversation,
      context_management: [{ type: "compaction", compact_threshold: 100 }],
    });
    expect(res.status).toBe(200);
    expect(sidecar.calls).toHaveLength(1);
    expect((await res.json()).output.map((o: { type: string }) => o.type)).toEqual(["reasoning", "message"]);
  });

  it(
    "at the threshold, summarises first, answers from the user messages and the summary, and opens the output with " +
      "the compaction item",
    async () => {
      const { app, sidecar } = testApp(script);
      sidecar.tokenizeResult = Array.from({ length: 100 }, (_, i) => i);
      const body = {
        model: "m",
        instructions: "Be brief.",
        input: conversation,
        tools,
        context_management: [{ type: "compaction", compact_threshold: 100 }],
      };
      const res = await post(app, "/v1/responses", body);
      expect(res.status).toBe(200);
      expect(sidecar.calls).toHaveLength(2);
      expect(roles(sidecar.calls[0])?.at(-1)).toEqual([Role.USER, COMPACTION_PROMPT]);
      expect(roles(sidecar.calls[1])).toEqual([
        [Role.SYSTEM, "Be brief."],
        [Role.USER, "We agreed to launch on Tuesday."],
        [Role.USER, "Anything else?"],
        [Role.USER, `${SUMMARY_OPENING}${SUMMARY}`],
      ]);
      const answer = sidecar.calls[1]?.request.input;
      expect(answer?.case === "chat" ? answer.value.tools.map((t) => t.name) : undefined).toEqual(["notify"]);
      const response = (await res.json()) as { output: { type: string }[]; output_text: string };
      expect(response.output[0]).toEqual(item);
      expect(response.output.map((o) => o.type)).toEqual(["compaction", "reasoning", "message"]);
      expect(response.output_text).toBe(SUMMARY);
    },
  );

  it("streams the compaction item first, at output_index 0, and the reply's items after it", async () => {
    const { app, sidecar } = testApp(script);
    sidecar.tokenizeResult = [1, 2, 3];
    const res = await post(app, "/v1/responses", {
      model: "m",
      input: conversation,
      stream: true,
      context_management: [{ type: "compaction", compact_threshold: 3 }],
    });
    const events = parseText(await res.text()).filter((e) => e.data !== "[DONE]");
    const added = events
      .filter((e) => e.event === "response.output_item.added")
      .map((e) => JSON.parse(e.data) as { output_index: number; item: { type: string } });
    expect(added.map((a) => [a.output_index, a.item.type])).toEqual([
      [0, "compaction"],
      [1, "reasoning"],
      [2, "message"],
    ]);
    expect(events.slice(0, 4).map((e) => e.event)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.output_item.done",
    ]);
    expect(JSON.parse(events[0]!.data).response.output).toEqual([]);
    expect(JSON.parse(events[3]!.data)).toEqual({
      type: "response.output_item.done",
      output_index: 0,
      item,
      sequence_number: 3,
    });
    const completed = JSON.parse(events.at(-1)!.data) as { type: string; response: { output: unknown[] } };
    expect(completed.type).toBe("response.completed");
    expect(completed.response.output[0]).toEqual(item);
  });

  it(
    "without compact_threshold, compacts when the prompt leaves the reply less than its room in the model's " +
      "context",
    async () => {
      // The fake model's context is 4,096 tokens: max_output_tokens 96 leaves a prompt 4,000.
      for (const [size, calls] of [
        [3_999, 1],
        [4_000, 2],
      ] as const) {
        const { app, sidecar } = testApp(script);
        sidecar.tokenizeResult = Array.from({ length: size }, () => 7);
        await post(app, "/v1/responses", {
          model: "m",
          input: conversation,
          max_output_tokens: 96,
          context_management: [{ type: "compaction" }],
        });
        expect(sidecar.calls).toHaveLength(calls);
      }
    },
  );

  it("refuses a context_management type other than compaction", async () => {
    await expectRefused(
      "/v1/responses",
      { model: "m", input: "Hi", context_management: [{ type: "truncation" }] },
      "Invalid 'context_management[0].type': the only context_management type is 'compaction'",
      "context_management[0].type",
    );
  });

  it("renders a later turn from the latest compaction item on, with the user messages before it", async () => {
    const { app, sidecar } = testApp(script);
    const input = [
      ...conversation,
      { type: "compaction", encrypted_content: sealCompaction(SUMMARY) },
      { type: "message", role: "assistant", content: "Nothing else." },
      { type: "message", role: "user", content: "Thanks." },
    ];
    await post(app, "/v1/responses", { model: "m", input });
    expect(roles(sidecar.lastCall)).toEqual([
      [Role.USER, "We agreed to launch on Tuesday."],
      [Role.USER, "Anything else?"],
      [Role.USER, `${SUMMARY_OPENING}${SUMMARY}`],
      [Role.ASSISTANT, "Nothing else."],
      [Role.USER, "Thanks."],
    ]);
  });
});

describe("return_progress on the compaction streams", () => {
  // The prompt's progress between `start` and the first token, as the sidecar reports it.
  const withProgress: Step[] = [
    start("tiny-llama", 1100, 12),
    progress(1100, 12, 524),
    progress(1100, 12, 1036),
    progress(1100, 12, 1100),
    ...script.slice(1),
  ];
  const openai = (app: ReturnType<typeof testApp>["app"]) =>
    new OpenAI({ apiKey: "none", baseURL: "http://edge.test/v1", fetch: inProcessFetch(app), maxRetries: 0 });
  const progressOf = (events: { data: string }[]) =>
    events
      .filter((e) => e.data !== "[DONE]")
      .map((e) => JSON.parse(e.data) as Record<string, unknown>)
      .filter((data) => data["prompt_progress"] !== undefined);

  it("a compaction_trigger: response.in_progress again per progress event, then the item", async () => {
    const { app } = testApp(withProgress);
    const input = [...conversation, { type: "compaction_trigger" }];
    const res = await post(app, "/v1/responses", { model: "m", input, stream: true, return_progress: true });
    const events = parseText(await res.text());
    expect(events.map((e) => (e.data === "[DONE]" ? e.data : e.event))).toEqual([
      "response.created",
      ...Array(4).fill("response.in_progress"),
      "response.output_item.added",
      "response.output_item.done",
      "response.completed",
      "[DONE]",
    ]);
    const announced = (JSON.parse(events[1]?.data ?? "{}") as { response: unknown }).response;
    expect(progressOf(events)).toEqual(
      [524, 1036, 1100].map((processed, i) => ({
        type: "response.in_progress",
        response: announced,
        prompt_progress: { total: 1100, cache: 12, processed, time_ms: Math.round(processed / 10) },
        sequence_number: 2 + i,
      })),
    );
    const body = { model: "m", input, return_progress: true };
    const response = await openai(testApp(withProgress).app)
      .responses.stream(body as never)
      .finalResponse();
    expect(response.output.map((item) => item.type)).toEqual(["compaction"]);
  });

  it("server-side compaction: the progress events keep the compaction item the Response opens with", async () => {
    const { app, sidecar } = testApp(withProgress);
    sidecar.tokenizeResult = [1, 2, 3];
    const body = {
      model: "m",
      input: conversation,
      stream: true,
      return_progress: true,
      context_management: [{ type: "compaction", compact_threshold: 3 }],
    };
    const events = parseText(await (await post(app, "/v1/responses", body)).text());
    const item = { id: `cmp_${FIXED_ID}`, type: "compaction", encrypted_content: sealCompaction(SUMMARY) };
    expect(events.slice(0, 7).map((e) => e.event)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.output_item.done",
      ...Array(3).fill("response.in_progress"),
    ]);
    expect(progressOf(events).map((data) => [data["sequence_number"], data["response"]])).toEqual(
      [4, 5, 6].map((n) => [n, expect.objectContaining({ status: "in_progress", output: [item] })]),
    );
    // The SDK's snapshot takes each event's Response: with the item kept, the reply's items land after it.
    const other = testApp(withProgress);
    other.sidecar.tokenizeResult = [1, 2, 3];
    const { stream: _, ...rest } = body;
    const response = await openai(other.app)
      .responses.stream(rest as never)
      .finalResponse();
    expect(response.output.map((o) => o.type)).toEqual(["compaction", "reasoning", "message"]);
    expect(response.output_text).toBe(SUMMARY);
  });
});
