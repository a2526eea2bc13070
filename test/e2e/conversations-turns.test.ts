// /c1 turns that are not plain text, on the Node edge and a real sidecar: a tool call stored with
// the turn and answered by a `tool` message in the next one (the `tools` model); a stream the
// client leaves, which stores nothing, and an edge process killed mid-reply, which loses only that
// turn (the 60M random model, slow enough to stop mid-reply).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { modelPath } from "../../gguf/models.js";
import { checkChatStream } from "../support/contract.js";
import { startRandomStack, startStack, type Stack } from "../support/edge.js";
import { TOOL_ARGUMENT_FRAGMENTS, TOOL_RESULT_REASONING, TOOLS_ANSWER } from "../support/scripted.js";
import { startProcess } from "../support/processes.js";
import { readMetrics } from "../support/sidecar.js";
import { readEvents, SseParser } from "../support/sse.js";

function chat(
  url: string,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
  signal?: AbortSignal,
): Promise<Response> {
  return fetch(`${url}/c1/chat`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ model: "m", ...body }),
    ...(signal === undefined ? {} : { signal }),
  });
}

async function stored(url: string, id: string): Promise<{ message_count: number; messages: unknown[] }> {
  return (await (await fetch(`${url}/c1/conversations/${id}`)).json()) as {
    message_count: number;
    messages: unknown[];
  };
}

const tools = [
  {
    type: "function",
    function: {
      name: "get_weather",
      parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
    },
  },
];
const toolResult = JSON.stringify({ temperature: 22, sky: "sunny" });

describe("a tool call across two turns (tools model)", () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ model: modelPath("tools"), contextSize: 2048 });
  }, 90_000);
  afterAll(async () => stack?.stop());

  it("stores the call with its turn; the next turn sends only the tool result and gets the answer", async () => {
    const first = await chat(stack.edge.url, {
      messages: [{ role: "user", content: "Weather in Tokyo?" }],
      tools,
      stream: true,
    });
    const id = first.headers.get("x-conversation-id") ?? "";
    const one = checkChatStream(await readEvents(first.body));
    expect(one.finishReason).toBe("tool_calls");
    const [call] = one.toolCalls ?? [];
    expect(call).toEqual({
      id: expect.stringMatching(/^call_/),
      name: "get_weather",
      arguments: TOOL_ARGUMENT_FRAGMENTS.join(""),
    });
    const afterOne = await stored(stack.edge.url, id);
    expect(afterOne.messages).toEqual([
      { role: "user", content: "Weather in Tokyo?" },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: call?.id, type: "function", function: { name: "get_weather", arguments: '{"city":"Tokyo"}' } },
        ],
      },
    ]);

    const second = await chat(
      stack.edge.url,
      { messages: [{ role: "tool", tool_call_id: call?.id, content: toolResult }], tools },
      { "x-conversation-id": id },
    );
    expect(second.status).toBe(200);
    const two = (await second.json()) as { choices: { message: unknown; finish_reason: string }[] };
    expect(two.choices[0]).toMatchObject({
      finish_reason: "stop",
      message: { role: "assistant", content: TOOLS_ANSWER, reasoning_content: TOOL_RESULT_REASONING },
    });
    expect((await stored(stack.edge.url, id)).messages.slice(2)).toEqual([
      { role: "tool", tool_call_id: call?.id, content: toolResult },
      { role: "assistant", content: TOOLS_ANSWER, reasoning_content: TOOL_RESULT_REASONING },
    ]);
  });
});

describe("a stream the client leaves (random model)", () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startRandomStack();
  }, 90_000);
  afterAll(async () => stack?.stop());

  it("stores nothing of the cancelled turn: the conversation stays as it was", async () => {
    const first = await chat(stack.edge.url, {
      messages: [{ role: "user", content: "Tell me everything." }],
      max_tokens: 3,
    });
    const id = first.headers.get("x-conversation-id") ?? "";
    expect(((await first.json()) as { choices: { finish_reason: string }[] }).choices[0]?.finish_reason).toBe("length");
    const before = await stored(stack.edge.url, id);
    expect(before.message_count).toBe(2);

    const leave = new AbortController();
    const second = await chat(
      stack.edge.url,
      { messages: [{ role: "user", content: "More." }], max_tokens: 4000, stream: true },
      { "x-conversation-id": id },
      leave.signal,
    );
    expect(second.headers.get("x-conversation-id")).toBe(id);
    // Read until the reply has begun (a content chunk after the role frame), then leave.
    const parser = new SseParser();
    const reader = (second.body as ReadableStream<Uint8Array>).getReader();
    let seen = 0;
    while (seen < 2) seen += parser.feed((await reader.read()).value ?? new Uint8Array()).length;
    leave.abort();
    await reader.cancel().catch(() => undefined);

    const deadline = Date.now() + 10_000;
    while ((await readMetrics(stack.sidecar.url))["sidecar_generations_active"] !== 0 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    expect((await readMetrics(stack.sidecar.url))["sidecar_generations_active"]).toBe(0);
    await new Promise((r) => setTimeout(r, 200));
    expect(await stored(stack.edge.url, id)).toEqual(before);
  });

  it("an edge process killed mid-reply loses only that turn: restarted on the same file, every committed turn is " +
    "there", async () => {
    const dir = mkdtempSync(join(tmpdir(), "llm-edge-kill-"));
    const env = {
      SIDECAR_URL: stack.sidecar.url,
      EDGE_PORT: "0",
      STORE_PATH: join(dir, "store.sqlite"),
      LOG_REQUESTS: "false",
    };
    const start = () =>
      startProcess(
        process.execPath,
        ["--import", "tsx", "edge/hosts/node/main.ts"],
        env,
        /edge listening on (http:\/\/127\.0\.0\.1:\d+)/,
      );
    try {
      const edge = await start();
      const first = await chat(edge.url, {
        messages: [{ role: "user", content: "Tell me everything." }],
        max_tokens: 3,
      });
      const id = first.headers.get("x-conversation-id") ?? "";
      await first.arrayBuffer();
      const before = await stored(edge.url, id);
      expect(before.message_count).toBe(2);
      const second = await chat(
        edge.url,
        { messages: [{ role: "user", content: "More." }], max_tokens: 4000, stream: true },
        { "x-conversation-id": id },
      );
      const reader = (second.body as ReadableStream<Uint8Array>).getReader();
      const parser = new SseParser();
      let seen = 0;
      while (seen < 2) seen += parser.feed((await reader.read()).value ?? new Uint8Array()).length;
      const exited = new Promise((r) => edge.child.once("exit", r));
      process.kill(-(edge.child.pid ?? 0), "SIGKILL");
      await exited;
      await reader.read().catch(() => undefined);

      const restarted = await start();
      try {
        expect(await stored(restarted.url, id)).toEqual(before);
      } finally {
        const gone = new Promise((r) => restarted.child.once("exit", r));
        process.kill(-(restarted.child.pid ?? 0), "SIGTERM");
        await gone;
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
