// Tools, tool choices and tool history in every protocol are normalised into the same proto
// Chat: the tools (parameters as JSON text), the choice, and the history's calls and results.
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { ChatSchema, Role, ToolChoice, type Chat } from "../../proto/gen/inference/v1/inference_pb.js";
import { post, testApp } from "../support/app.js";

const parameters = { type: "object", properties: { city: { type: "string" } }, required: ["city"] };
const tool = { name: "get_weather", description: "Get weather for a city", parameters: JSON.stringify(parameters) };

async function chatSent(path: string, body: unknown): Promise<{ chat: Chat; response: Response }> {
  const { app, sidecar } = testApp();
  const response = await post(app, path, body);
  expect(response.status).toBe(200);
  const input = sidecar.lastCall?.request.input;
  if (input?.case !== "chat") throw new Error("no chat was sent");
  return { chat: input.value, response };
}

/** The conversation every protocol sends below: a question, a call, its result. */
const expectedChat = (extra: { toolChoice?: ToolChoice; toolName?: string; parallelToolCalls?: boolean } = {}) =>
  create(ChatSchema, {
    messages: [
      { role: Role.USER, content: "Weather in Tokyo?" },
      {
        role: Role.ASSISTANT,
        content: "",
        reasoning: "The user wants weather.",
        toolCalls: [{ id: "call_1", name: "get_weather", arguments: '{"city":"Tokyo"}' }],
      },
      { role: Role.TOOL, toolCallId: "call_1", content: '{"sky":"sunny"}' },
    ],
    tools: [tool],
    ...extra,
  });

describe("tools → the proto chat", () => {
  it("chat completions: tools, tool_choice, parallel_tool_calls, assistant tool_calls and tool messages", async () => {
    const { chat } = await chatSent("/v1/chat/completions", {
      messages: [
        { role: "user", content: "Weather in Tokyo?" },
        {
          role: "assistant",
          content: null,
          reasoning_content: "The user wants weather.",
          tool_calls: [
            { id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Tokyo"}' } },
          ],
        },
        { role: "tool", tool_call_id: "call_1", content: '{"sky":"sunny"}' },
      ],
      tools: [
        { type: "function", function: { name: "get_weather", description: "Get weather for a city", parameters } },
      ],
      tool_choice: { type: "function", function: { name: "get_weather" } },
      parallel_tool_calls: false,
    });
    expect(chat).toEqual(
      expectedChat({ toolChoice: ToolChoice.FUNCTION, toolName: "get_weather", parallelToolCalls: false }),
    );
  });

  it("Anthropic: tool_use, thinking and tool_result blocks; tool_choice any with parallel use disabled", async () => {
    const { chat } = await chatSent("/v1/messages", {
      model: "m",
      max_tokens: 100,
      messages: [
        { role: "user", content: "Weather in Tokyo?" },
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "The user wants weather.", signature: "x" },
            { type: "tool_use", id: "call_1", name: "get_weather", input: { city: "Tokyo" } },
          ],
        },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "call_1", content: [{ type: "text", text: '{"sky":"sunny"}' }] },
          ],
        },
      ],
      tools: [{ name: "get_weather", description: "Get weather for a city", input_schema: parameters }],
      tool_choice: { type: "any", disable_parallel_tool_use: true },
    });
    expect(chat).toEqual(expectedChat({ toolChoice: ToolChoice.REQUIRED, parallelToolCalls: false }));
  });

  it(
    "Anthropic: enabled thinking's budget_tokens becomes the chat's reasoning budget; disabled is none at " + "all",
    async () => {
      const sent = async (thinking: object) =>
        (
          await chatSent("/v1/messages", {
            model: "m",
            max_tokens: 2048,
            messages: [{ role: "user", content: "Hi" }],
            thinking,
          })
        ).chat.reasoningBudget;
      expect(await sent({ type: "enabled", budget_tokens: 1024 })).toBe(1024);
      expect(await sent({ type: "enabled" })).toBeUndefined();
      expect(await sent({ type: "adaptive" })).toBeUndefined();
      expect(await sent({ type: "disabled" })).toBe(0);
    },
  );

  it("Anthropic: text after tool results follows them as a user message; error results say so", async () => {
    const { chat } = await chatSent("/v1/messages", {
      model: "m",
      max_tokens: 100,
      messages: [
        { role: "user", content: "Weather?" },
        { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "get_weather", input: {} }] },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "t1", content: "no such city", is_error: true },
            { type: "text", text: "Try Tokyo." },
          ],
        },
      ],
      tools: [{ name: "get_weather", input_schema: parameters }],
    });
    expect(chat.messages.slice(2).map((m) => [m.role, m.toolCallId, m.content])).toEqual([
      [Role.TOOL, "t1", "Error: no such city"],
      [Role.USER, "", "Try Tokyo."],
    ]);
  });

  it(
    "Responses: function_call and function_call_output items; reasoning items dropped; other tool types ignored and " +
      "named",
    async () => {
      const { chat, response } = await chatSent("/v1/responses", {
        input: [
          { role: "user", content: "Weather in Tokyo?" },
          { type: "reasoning", id: "rs_1", summary: [] },
          { type: "function_call", call_id: "call_1", name: "get_weather", arguments: '{"city":"Tokyo"}' },
          { type: "function_call_output", call_id: "call_1", output: '{"sky":"sunny"}' },
        ],
        tools: [
          { type: "web_search" },
          { type: "function", name: "get_weather", description: "Get weather for a city", parameters },
        ],
        tool_choice: "required",
      });
      const expected = expectedChat({ toolChoice: ToolChoice.REQUIRED });
      const assistant = expected.messages[1];
      if (assistant !== undefined) assistant.reasoning = "";
      expect(chat).toEqual(expected);
      const body = (await response.json()) as Record<string, unknown>;
      expect(body["warnings"]).toEqual([
        "tools of type 'web_search' are not supported by this server and were ignored",
      ]);
      expect(body["tools"]).toEqual([
        { type: "function", name: "get_weather", description: "Get weather for a city", parameters, strict: true },
      ]);
      expect(body["tool_choice"]).toBe("required");
    },
  );
});
