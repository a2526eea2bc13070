// Ollama's API on the edge alone, in front of a fake sidecar with a fixed clock: the NDJSON lines
// byte for byte (text, thinking, a tool call whole, the closing line and its metrics), a failure
// after the first line as an `{"error"}` line, a refusal before it as an HTTP error, the whole answer
// equal to the stream's parts, and what the sidecar is sent: messages with Ollama's id-less tool
// history, generate's system and raw prompt, the options, `think` and `format`.
import { create } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { FinishReason, FinishSchema, GenerateResponseSchema, Role } from "../../proto/gen/inference/v1/inference_pb.js";
import type { ResponseMeta } from "../../edge/core/endpoint.js";
import { ollamaMetrics } from "../../edge/protocols/ollama/usage.js";
import { fail, reasoning, start, token, toolCall, type Step } from "../support/fake-sidecar.js";
import { FIXED_NOW_MS, post, sentChat, testApp } from "../support/app.js";

const AT = new Date(FIXED_NOW_MS).toISOString();
const TIMINGS = { promptMs: 12.5, generationMs: 40, queueMs: 2 };

function finishStep(reason: FinishReason, completionTokens: number): Step {
  const value = { reason, promptTokens: 7, completionTokens, cachedTokens: 3, timings: TIMINGS };
  return { kind: "event", event: create(GenerateResponseSchema, { event: { case: "finish", value } }) };
}

const SCRIPT: Step[] = [
  start("fake-model", 7),
  ...reasoning("Hmm."),
  token("Hi"),
  token(" there"),
  ...toolCall(0, "call_1", "get_weather", ['{"city":', '"Tokyo"}']),
  finishStep(FinishReason.TOOL_CALLS, 6),
];

const chat = { model: "fake-model:latest", messages: [{ role: "user", content: "Weather?" }] };

async function lines(response: Response): Promise<unknown[]> {
  const text = await response.text();
  expect(text.endsWith("\n")).toBe(true);
  return text
    .slice(0, -1)
    .split("\n")
    .map((line) => JSON.parse(line));
}

const DONE = {
  done: true,
  done_reason: "stop",
  total_duration: 0,
  load_duration: 0,
  prompt_eval_count: 7,
  prompt_eval_duration: 12_500_000,
  eval_count: 6,
  eval_duration: 40_000_000,
};

describe("Ollama's API on the edge", () => {
  it("/api/chat streams one line per part, a tool call whole, then the closing line", async () => {
    const { app, sidecar } = testApp(SCRIPT);
    const response = await post(app, "/api/chat", chat);
    expect(response.headers.get("content-type")).toBe("application/x-ndjson");
    const line = (message: object) => ({
      model: "fake-model:latest",
      created_at: AT,
      message: { role: "assistant", content: "", ...message },
      done: false,
    });
    const call = { id: "call_1", function: { index: 0, name: "get_weather", arguments: { city: "Tokyo" } } };
    expect(await lines(response)).toEqual([
      line({ thinking: "Hmm." }),
      line({ content: "Hi" }),
      line({ content: " there" }),
      line({ tool_calls: [call] }),
      { model: "fake-model:latest", created_at: AT, message: { role: "assistant", content: "" }, ...DONE },
    ]);
    // `name:latest` is the catalogue's `name`.
    expect(sidecar.lastCall?.request.model).toBe("fake-model");
  });

  it("stream: false answers the stream's parts joined; /api/generate puts them at the top", async () => {
    const { app } = testApp(SCRIPT);
    const whole = await (await post(app, "/api/chat", { ...chat, stream: false })).json();
    expect(whole).toEqual({
      model: "fake-model:latest",
      created_at: AT,
      message: {
        role: "assistant",
        content: "Hi there",
        thinking: "Hmm.",
        tool_calls: [{ id: "call_1", function: { index: 0, name: "get_weather", arguments: { city: "Tokyo" } } }],
      },
      ...DONE,
    });
    const generated = await (await post(app, "/api/generate", { model: "m", prompt: "Hi", stream: false })).json();
    expect(generated).toEqual({ model: "m", created_at: AT, response: "Hi there", thinking: "Hmm.", ...DONE });
  });

  it("a failure after the first line ends the stream with an {error} line; before it, an HTTP error", async () => {
    const broken = testApp([start(), token("Hi"), fail(Code.Internal, "the sidecar broke")]);
    const parts = await lines(await post(broken.app, "/api/chat", chat));
    expect(parts.at(-1)).toEqual({ error: "the sidecar broke" });
    expect(parts).toHaveLength(2);
    const refused = testApp([fail(Code.InvalidArgument, "the chat template cannot render these messages")]);
    const response = await post(refused.app, "/api/chat", chat);
    expect([response.status, await response.json()]).toEqual([
      400,
      { error: "the chat template cannot render these messages" },
    ]);
  });

  it("an id-less tool history: a result answers the call its tool_name names, else the earliest open", async () => {
    const { app, sidecar } = testApp();
    const call = (name: string, city: string) => ({ function: { name, arguments: { city } } });
    const messages = [
      { role: "user", content: "Weather and time?" },
      { role: "assistant", content: "", tool_calls: [call("get_weather", "Tokyo"), call("get_time", "Tokyo")] },
      { role: "tool", content: "10:00", tool_name: "get_time" },
      { role: "TOOL", content: "sunny" },
    ];
    expect((await post(app, "/api/chat", { ...chat, messages, stream: false })).status).toBe(200);
    const sent = sentChat(sidecar).messages;
    expect(sent[1]?.toolCalls.map((c) => [c.id, c.name, c.arguments])).toEqual([
      ["call_1_0", "get_weather", '{"city":"Tokyo"}'],
      ["call_1_1", "get_time", '{"city":"Tokyo"}'],
    ]);
    expect(sent.slice(2).map((m) => [m.role, m.toolCallId, m.content])).toEqual([
      [Role.TOOL, "call_1_1", "10:00"],
      [Role.TOOL, "call_1_0", "sunny"],
    ]);
    const orphan = await post(app, "/api/chat", { ...chat, messages: [messages[0], messages[2]] });
    expect([orphan.status, await orphan.json()]).toEqual([
      400,
      { error: "messages[1]: a tool result answers no tool call made earlier" },
    ]);
  });

  it("generate: system and prompt as a chat, raw as a prompt; options, think, format reach the sidecar", async () => {
    const { app, sidecar } = testApp();
    const options = { temperature: 0.2, top_k: 20, seed: -1, num_predict: -1, stop: "END", num_ctx: 8192 };
    const body = { model: "m", prompt: "Hi", system: "Be brief.", think: "low", format: "json", options };
    expect((await post(app, "/api/generate", { ...body, stream: false })).status).toBe(200);
    const sent = sidecar.lastCall?.request;
    expect(sentChat(sidecar).messages.map((m) => [m.role, m.content])).toEqual([
      [Role.SYSTEM, "Be brief."],
      [Role.USER, "Hi"],
    ]);
    expect(sentChat(sidecar).reasoningBudget).toBe(512);
    expect(sent?.sampling).toMatchObject({ temperature: 0.2, topK: 20 });
    expect(sent?.sampling?.seed).toBeUndefined();
    expect([sent?.maxTokens, sent?.stop, sent?.constraint?.kind]).toEqual([
      undefined,
      ["END"],
      { case: "jsonObject", value: true },
    ]);
    await post(app, "/api/generate", { model: "m", prompt: "Once", raw: true, think: false, options: { seed: 3 } });
    expect(sidecar.lastCall?.request.input).toEqual({ case: "prompt", value: "Once" });
    expect(sidecar.lastCall?.request.sampling?.seed).toBe(3);
  });

  it("logprobs: each token's entry on the first line it writes, a held-back token's on the next", async () => {
    const script: Step[] = [
      start(),
      token("Hi", {
        logprob: -0.5,
        top: [
          ["Hi", -0.5],
          ["Ho", -1.25],
        ],
      }),
      token("", {
        piece: "\u00e2",
        logprob: -2,
        top: [
          ["\u00e2", -2],
          ["x", -3],
        ],
      }),
      token("!", {
        logprob: -0.25,
        top: [
          ["!", -0.25],
          [".", -4],
        ],
      }),
      finishStep(FinishReason.STOP, 3),
    ];
    const { app, sidecar } = testApp(script);
    const body = { ...chat, logprobs: true, top_logprobs: 1 };
    const parts = (await lines(await post(app, "/api/chat", body))) as Record<string, unknown>[];
    expect([sidecar.lastCall?.request.logprobs, sidecar.lastCall?.request.topLogprobs]).toEqual([true, 1]);
    const entry = (token: string, logprob: number, alt: string, altLogprob: number) => ({
      token,
      logprob,
      bytes: [...new TextEncoder().encode(token)],
      top_logprobs: [{ token: alt, logprob: altLogprob, bytes: [...new TextEncoder().encode(alt)] }],
    });
    expect(parts.map((p) => p["logprobs"])).toEqual([
      [entry("Hi", -0.5, "Hi", -0.5)],
      [entry("\u00e2", -2, "\u00e2", -2), entry("!", -0.25, "!", -0.25)],
      undefined,
    ]);
    const whole = await (
      await post(app, "/api/generate", { model: "m", prompt: "x", stream: false, logprobs: true })
    ).json();
    expect(whole.logprobs.map((e: { token: string }) => e.token)).toEqual(["Hi", "\u00e2", "!"]);
    expect(whole.logprobs[0]).not.toHaveProperty("top_logprobs");
  });
});

describe("Ollama's metrics", () => {
  it("are nanoseconds: the total from arrival, the load what is neither queue, prompt nor generation", () => {
    const meta = { startedMs: 1000, now: () => 1100, created: 1 } as ResponseMeta;
    const finish = create(FinishSchema, { promptTokens: 9, completionTokens: 4, timings: TIMINGS });
    expect(ollamaMetrics(finish, meta)).toEqual({
      total_duration: 100_000_000,
      load_duration: 45_500_000,
      prompt_eval_count: 9,
      prompt_eval_duration: 12_500_000,
      eval_count: 4,
      eval_duration: 40_000_000,
    });
  });
});
