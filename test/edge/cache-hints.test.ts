// Cache hints (docs/contract.md, "Cache hints") through the edge to a fake sidecar: Anthropic
// `cache_control` breakpoints and OpenAI `prompt_cache_retention` become the request's cache marks,
// refused ones are 400s in each protocol's shape, and Anthropic's usage splits the prompt by the
// sidecar's `cached_tokens` and `cache_written_tokens`.
import { describe, expect, it } from "vitest";
import { post, testApp } from "../support/app.js";
import { finish, start, token, type Step } from "../support/fake-sidecar.js";

const MESSAGES = "/v1/messages";
const EPHEMERAL = { type: "ephemeral" };
const base = { model: "m", max_tokens: 16 };

const marksOf = async (body: unknown, path = MESSAGES): Promise<unknown> => {
  const { app, sidecar } = testApp();
  const response = await post(app, path, body);
  expect(response.status).toBe(200);
  return sidecar.lastCall?.request.cacheMarks.map(({ messages, ttlSeconds }) => ({ messages, ttlSeconds }));
};

const toolTurn = [
  { role: "user", content: "Call f." },
  { role: "assistant", content: [{ type: "tool_use", id: "c1", name: "f", input: {} }] },
  {
    role: "user",
    content: [
      { type: "tool_result", tool_use_id: "c1", content: "ok" },
      { type: "text", text: "Go on." },
    ],
  },
];
const tools = [{ name: "f", input_schema: { type: "object" } }];

/** `toolTurn` with cache_control on the blocks named `[message, block]`. */
function markedTurn(...at: [number, number][]): unknown[] {
  return toolTurn.map((message, i) =>
    typeof message.content === "string"
      ? message
      : {
          ...message,
          content: message.content.map((block, j) =>
            at.some(([m, b]) => m === i && b === j) ? { ...block, cache_control: EPHEMERAL } : block,
          ),
        },
  );
}

describe("Anthropic cache_control → cache marks", () => {
  it("a block marks through the chat message it becomes; a tool result is a message of its own", async () => {
    // Chat: system (1), user (2), assistant (3), tool (4), user (5).
    const marks = await marksOf({ ...base, system: "Be brief.", tools, messages: markedTurn([1, 0], [2, 0], [2, 1]) });
    expect(marks).toEqual([
      { messages: 3, ttlSeconds: 300 },
      { messages: 4, ttlSeconds: 300 },
      { messages: 5, ttlSeconds: 300 },
    ]);
  });

  it("a text block inside a tool result marks through that tool message", async () => {
    const [user, assistant] = toolTurn;
    const result = {
      type: "tool_result",
      tool_use_id: "c1",
      content: [{ type: "text", text: "ok", cache_control: { type: "ephemeral", ttl: "1h" } }],
    };
    const marks = await marksOf({
      ...base,
      system: "Be brief.",
      tools,
      messages: [user, assistant, { role: "user", content: [result] }],
    });
    expect(marks).toEqual([{ messages: 4, ttlSeconds: 3600 }]);
  });

  it(
    "a system block or a tool marks through the system message (the longer ttl); the request's own, the whole " +
      "prompt",
    async () => {
      const marks = await marksOf({
        ...base,
        system: [{ type: "text", text: "Be brief.", cache_control: { type: "ephemeral", ttl: "1h" } }],
        tools: [{ ...tools[0], cache_control: EPHEMERAL }],
        messages: toolTurn,
        cache_control: { type: "ephemeral", ttl: "5m" },
      });
      expect(marks).toEqual([
        { messages: 1, ttlSeconds: 3600 },
        { messages: 5, ttlSeconds: 300 },
      ]);
      // No system prompt: a tool's breakpoint marks nothing.
      expect(
        await marksOf({ ...base, tools: [{ ...tools[0], cache_control: EPHEMERAL }], messages: toolTurn }),
      ).toEqual([]);
      // None at all: no marks.
      expect(await marksOf({ ...base, system: "Be brief.", tools, messages: toolTurn })).toEqual([]);
    },
  );

  it("refuses more than 4 breakpoints, and a bad type or ttl, with Anthropic's error naming the field", async () => {
    const { app, sidecar } = testApp();
    const five = {
      ...base,
      system: [{ type: "text", text: "Be brief.", cache_control: EPHEMERAL }],
      tools,
      messages: markedTurn([1, 0], [2, 0], [2, 1]),
    };
    const tooMany = await post(app, MESSAGES, { ...five, cache_control: EPHEMERAL });
    expect(tooMany.status).toBe(400);
    expect(await tooMany.json()).toEqual({
      type: "error",
      error: {
        type: "invalid_request_error",
        message: "A maximum of 4 blocks with cache_control may be provided. Found 5.",
      },
    });
    // A ttl this server does not know is a hint, not an error: 5 minutes.
    expect(
      await marksOf({ ...base, messages: toolTurn, tools, cache_control: { type: "ephemeral", ttl: "2h" } }),
    ).toEqual([{ messages: 4, ttlSeconds: 300 }]);
    const badType = await post(app, MESSAGES, {
      ...base,
      system: [{ type: "text", text: "s", cache_control: { type: "persistent" } }],
      messages: toolTurn,
      tools,
    });
    expect(badType.status).toBe(400);
    expect(((await badType.json()) as { error: { message: string } }).error.message).toBe(
      "Invalid 'system[0].cache_control.type': expected 'ephemeral'",
    );
    expect(sidecar.calls).toHaveLength(0);
  });

  it("count_tokens accepts breakpoints and ignores them", async () => {
    const { app, sidecar } = testApp();
    sidecar.tokenizeResult = [1, 2, 3];
    const response = await post(app, `${MESSAGES}/count_tokens`, {
      model: "m",
      system: "s",
      messages: markedTurn([1, 0], [2, 0]),
      tools,
      cache_control: EPHEMERAL,
    });
    expect(await response.json()).toEqual({ input_tokens: 3 });
    expect(sidecar.tokenizeCalls).toHaveLength(1);
  });
});

describe("Anthropic usage with cache marks", () => {
  // 40 prompt tokens: 10 cached, 25 written up to the last mark, 5 after it.
  const script: Step[] = [
    start("m", 40, 10, 25),
    token("Hi"),
    finish("stop", { promptTokens: 40, completionTokens: 1, cachedTokens: 10, cacheWrittenTokens: 25 }),
  ];
  const split = { input_tokens: 5, cache_creation_input_tokens: 25, cache_read_input_tokens: 10 };

  it("splits the prompt into read, written and the rest, streaming (message_start) and not", async () => {
    const body = {
      ...base,
      system: [{ type: "text", text: "s", cache_control: EPHEMERAL }],
      messages: [{ role: "user", content: "Hi" }],
    };
    const whole = await post(testApp(script).app, MESSAGES, body);
    expect(((await whole.json()) as { usage: unknown }).usage).toEqual({ ...split, output_tokens: 1 });
    const streamed = await (await post(testApp(script).app, MESSAGES, { ...body, stream: true })).text();
    const started = JSON.parse(/data: (\{"type":"message_start".*)/.exec(streamed)?.[1] ?? "{}") as {
      message: { usage: unknown };
    };
    expect(started.message.usage).toEqual({ ...split, output_tokens: 0 });
  });
});

describe("OpenAI prompt_cache_retention → a mark on the whole prompt", () => {
  const chat = { model: "m", messages: [{ role: "user", content: "Hi" }] };

  it("in_memory: 10 minutes, 24h: a day, on chat completions and Responses", async () => {
    expect(await marksOf({ ...chat, prompt_cache_retention: "in_memory" }, "/v1/chat/completions")).toEqual([
      { messages: 0, ttlSeconds: 600 },
    ]);
    expect(await marksOf({ ...chat, prompt_cache_retention: "24h" }, "/v1/chat/completions")).toEqual([
      { messages: 0, ttlSeconds: 86_400 },
    ]);
    expect(await marksOf({ ...chat, prompt_cache_key: "k" }, "/v1/chat/completions")).toEqual([]);
    expect(await marksOf({ model: "m", input: "Hi", prompt_cache_retention: "24h" }, "/v1/responses")).toEqual([
      { messages: 0, ttlSeconds: 86_400 },
    ]);
  });

  it(
    "takes a retention it does not know as none (a hint never refuses); a non-string is refused naming the " + "param",
    async () => {
      for (const path of ["/v1/chat/completions", "/v1/responses"]) {
        const body = path === "/v1/responses" ? { model: "m", input: "Hi" } : chat;
        expect(await marksOf({ ...body, prompt_cache_retention: "forever" }, path)).toEqual([]);
        const { app, sidecar } = testApp();
        const response = await post(app, path, { ...body, prompt_cache_retention: 24 });
        expect(response.status).toBe(400);
        expect(((await response.json()) as { error: { param: string } }).error.param).toBe("prompt_cache_retention");
        expect(sidecar.calls).toHaveLength(0);
      }
    },
  );
});
