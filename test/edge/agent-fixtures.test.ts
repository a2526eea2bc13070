// What Claude Code and Codex CLI send (recorded by test/e2e/agents.test.ts, texts redacted), on a
// plain prompt and on each turn of a tool loop, replayed without the CLIs against the edge and
// the fake sidecar: every request is served as a stream, and reaches the sidecar as the contract
// says (system messages where they stand, developer input as system, the function tools, the
// tool call and its result with the call's id, the reasoning budget and what is shown of it).
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { Role, type Chat } from "../../proto/gen/inference/v1/inference_pb.js";
import { post, sentChat, testApp } from "../support/app.js";
import type { ClaudeBlock, CodexItem } from "../support/agents.js";
import { finish, start, token } from "../support/fake-sidecar.js";
import type { RecordedRequest } from "../support/recording-proxy.js";
import { readEvents, type ParsedEvent } from "../support/sse.js";

/** A recorded request as saved (its answer's status is not kept). */
type Fixture = Omit<RecordedRequest, "status">;

function fixture(name: string): Fixture[] {
  return JSON.parse(readFileSync(new URL(`../fixtures/agents/${name}.json`, import.meta.url), "utf8")) as Fixture[];
}

const cases = (...names: string[]): (readonly [string, number, Fixture])[] =>
  names.flatMap((name) => fixture(name).map((r, i) => [name, i, r] as const));

/** The model thinks, then answers: what each agent gets back. */
const REPLY = [
  start(),
  token("", { reasoning: "Checking." }),
  token("Hi there"),
  finish("stop", { completionTokens: 2, reasoningTokens: 1 }),
];

async function replay(recorded: Fixture): Promise<{ chat: Chat; events: ParsedEvent[] }> {
  const { app, sidecar } = testApp(REPLY);
  const response = await post(app, recorded.path, recorded.body, { headers: recorded.headers });
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
  const events = await readEvents(response.body);
  return { chat: sentChat(sidecar), events };
}

interface ClaudeBody {
  messages: { role: string; content: string | ClaudeBlock[] }[];
  tools: unknown[];
  thinking: { type: string; display?: string };
  output_config: { effort: string };
}

const claudeRole = (role: string): Role =>
  role === "system" ? Role.SYSTEM : role === "user" ? Role.USER : Role.ASSISTANT;

describe("Claude Code's requests", () => {
  it.each(cases("claude-code", "claude-code-tools"))(
    "%s request %d is served, system messages where they stand",
    async (_name, _i, recorded) => {
      const body = recorded.body as ClaudeBody;
      expect([body.thinking, body.output_config.effort]).toEqual([{ type: "adaptive", display: "omitted" }, "high"]);
      const { chat, events } = await replay(recorded);
      // The system prompt first, then every message in place, tool results as tool messages.
      const blocks = (m: ClaudeBody["messages"][number]): ClaudeBlock[] =>
        typeof m.content === "string" ? [] : m.content;
      const roles = body.messages.flatMap((m) =>
        blocks(m).some((b) => b.type === "tool_result") ? [Role.TOOL] : [claudeRole(m.role)],
      );
      expect(chat.messages.map((m) => m.role)).toEqual([Role.SYSTEM, ...roles]);
      expect(chat.tools).toHaveLength(body.tools.length);
      // Adaptive thinking at effort "high": 8,192 reasoning tokens; "omitted": none of it shown.
      expect(chat.reasoningBudget).toBe(8192);
      const deltas = events
        .filter((e) => e.event === "content_block_delta")
        .map((e) => (JSON.parse(e.data) as { delta: { type: string } }).delta.type);
      expect(deltas).toEqual(["text_delta"]);
      expect(events.at(-1)?.event).toBe("message_stop");
    },
  );

  it(
    "a newer Claude Code's hints this server does not know are served, not refused (display shown, effort the " +
      "default)",
    async () => {
      const [recorded] = fixture("claude-code");
      const body = recorded?.body as ClaudeBody;
      const newer = { ...body, thinking: { type: "adaptive", display: "updates" }, output_config: { effort: "ultra" } };
      const { chat, events } = await replay({ ...(recorded as Fixture), body: newer });
      // No budget (an unknown effort is as if absent), and the reasoning shown as thinking.
      expect(chat.reasoningBudget).toBeUndefined();
      const deltas = events
        .filter((e) => e.event === "content_block_delta")
        .map((e) => (JSON.parse(e.data) as { delta: { type: string } }).delta.type);
      expect(deltas).toEqual(["thinking_delta", "signature_delta", "text_delta"]);
    },
  );

  it("the tool loop's second request carries the Read call and its result, with the call's id", async () => {
    const [, second] = fixture("claude-code-tools");
    const body = second?.body as ClaudeBody;
    const call = (body.messages.at(-2)!.content as ClaudeBlock[])[0];
    const result = (body.messages.at(-1)!.content as ClaudeBlock[])[0];
    const { chat } = await replay(second as Fixture);
    const [assistant, tool] = chat.messages.slice(-2);
    expect(assistant?.role).toBe(Role.ASSISTANT);
    expect(assistant?.toolCalls.map((c) => [c.id, c.name, JSON.parse(c.arguments)])).toEqual([
      [call?.id, "Read", call?.input],
    ]);
    expect([tool?.role, tool?.toolCallId, tool?.content]).toEqual([Role.TOOL, call?.id, result?.content]);
  });
});

interface CodexBody {
  input: CodexItem[];
  include: string[];
  store: boolean;
  tools: { type: string; name?: string; tools?: { type: string; name: string }[] }[];
}

const codexRole = (item: CodexItem): Role =>
  item.type === "function_call"
    ? Role.ASSISTANT
    : item.type === "function_call_output"
      ? Role.TOOL
      : item.role === "developer"
        ? Role.SYSTEM
        : Role.USER;

describe("Codex CLI's requests", () => {
  it.each(cases("codex", "codex-tools"))(
    "%s request %d is served, developer input as system, reasoning returned encrypted",
    async (_name, _i, recorded) => {
      const body = recorded.body as CodexBody;
      expect([body.store, body.include]).toEqual([false, ["reasoning.encrypted_content"]]);
      const { chat, events } = await replay(recorded);
      expect(chat.messages.map((m) => m.role)).toEqual(body.input.map(codexRole));
      // The function tools, a namespace's (multi_agent_v1's) among them in place; web_search is ignored.
      const offered = body.tools.flatMap((t) =>
        t.type === "function"
          ? [t.name]
          : t.type === "namespace"
            ? (t.tools ?? []).filter((i) => i.type === "function").map((i) => i.name)
            : [],
      );
      expect(offered.length).toBeGreaterThan(body.tools.filter((t) => t.type === "function").length);
      expect(chat.tools.map((t) => t.name)).toEqual(offered);
      // Stateless: the reasoning comes back with an encrypted_content that carries its text.
      const completed = events.find((e) => e.event === "response.completed");
      const output = (
        JSON.parse(completed?.data ?? "{}") as {
          response: { output: { type: string; encrypted_content?: string }[]; warnings?: string[] };
        }
      ).response;
      expect(output.output.map((o) => o.type)).toEqual(["reasoning", "message"]);
      expect(output.output[0]?.encrypted_content).toBe(`llm-edge.r1.${Buffer.from("Checking.").toString("base64url")}`);
      expect(output.warnings).toEqual(["tools of type 'web_search' are not supported by this server and were ignored"]);
    },
  );

  it("the tool loop's second request carries the get_goal call and its output, with the call's id", async () => {
    const [, second] = fixture("codex-tools");
    const [call, output] = (second!.body as CodexBody).input.slice(-2);
    const { chat } = await replay(second as Fixture);
    const [assistant, tool] = chat.messages.slice(-2);
    expect(assistant?.toolCalls.map((c) => [c.id, c.name, c.arguments])).toEqual([[call?.call_id, "get_goal", "{}"]]);
    expect([tool?.role, tool?.toolCallId, tool?.content]).toEqual([Role.TOOL, call?.call_id, output?.output]);
  });
});
