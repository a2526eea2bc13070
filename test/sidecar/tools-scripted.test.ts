// Tool calls and reasoning through the real sidecar on the `tools` scripted model, whose template
// node-llama-cpp resolves to its Qwen wrapper: exact token events over native gRPC and gRPC-Web.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FinishReason, Role, ToolChoice, type GenerateResponse } from "../../proto/gen/inference/v1/inference_pb.js";
import { modelPath, TOOLS_RESULT_PIECES, TOOLS_THINK_PIECES } from "../../gguf/models.js";
import type { RunningSidecar } from "../../sidecar/start-sidecar.js";
import { clientsFor, collect, startTestSidecar } from "../support/sidecar.js";
import { THINK_REASONING, TOOL_ARGUMENT_FRAGMENTS, TOOL_RESULT_REASONING, TOOLS_ANSWER } from "../support/scripted.js";

const tools = [
  {
    name: "get_weather",
    description: "Get weather for a city",
    parameters: JSON.stringify({ type: "object", properties: { city: { type: "string" } }, required: ["city"] }),
  },
];
const question = { role: Role.USER, content: "Weather in Tokyo?" };

let sidecar: RunningSidecar;
beforeAll(async () => {
  sidecar = await startTestSidecar({ model: modelPath("tools"), sequences: 2, contextSize: 2048 });
});
afterAll(async () => {
  await sidecar.stop();
});

type Events = GenerateResponse["event"][];
const generate = (protocol: "grpc" | "grpc-web", chat: object, temperature = 0): Promise<Events> =>
  collect(
    clientsFor(sidecar.url)[protocol].generate({
      input: { case: "chat", value: chat },
      sampling: { temperature, seed: 5 },
      maxTokens: 100,
    }),
  );

/** Each token event's parts, in order: [reasoning, text, tool-call deltas]. */
function parts(events: Events): [string, string, string[]][] {
  return events.flatMap((e) =>
    e.case === "token"
      ? [
          [
            e.value.reasoning,
            e.value.text,
            e.value.toolCalls.map((c) => `${c.index}|${c.id === "" ? "" : "id"}|${c.name}|${c.arguments}`),
          ] as [string, string, string[]],
        ]
      : [],
  );
}
const finishOf = (events: Events) => {
  const last = events.at(-1);
  if (last?.case !== "finish") throw new Error("no finish event");
  return last.value;
};

describe.each(["grpc", "grpc-web"] as const)("the tools model over %s", (protocol) => {
  it.each([0, 1])("calls get_weather with the scripted argument fragments (temperature %d)", async (temperature) => {
    const events = await generate(protocol, { messages: [question], tools }, temperature);
    const calls = parts(events)
      .filter(([, , c]) => c.length > 0)
      .map(([, , c]) => c);
    expect(calls).toEqual([["0|id|get_weather|"], ...TOOL_ARGUMENT_FRAGMENTS.map((f) => [`0||${""}|${f}`])]);
    // The call's syntax shows in no text.
    expect(parts(events).every(([r, t]) => r === "" && t === "")).toBe(true);
    expect(finishOf(events)).toMatchObject({
      reason: FinishReason.TOOL_CALLS,
      text: "",
      reasoning: "",
      reasoningTokens: 0,
    });
    const first = events.find((e) => e.case === "token" && e.value.toolCalls.length > 0);
    if (first?.case === "token") expect(first.value.toolCalls[0]?.id).toMatch(/^call_[A-Za-z0-9_-]{24}$/);
  });

  it("without tools: reasoning apart from the answer, never mixed in one part", async () => {
    const events = await generate(protocol, { messages: [{ role: Role.USER, content: "Hello!" }] });
    const p = parts(events);
    expect(p.map(([r]) => r).join("")).toBe(THINK_REASONING);
    expect(p.map(([, t]) => t).join("")).toBe(TOOLS_ANSWER);
    const lastReasoning = p.findLastIndex(([r]) => r !== "");
    const firstText = p.findIndex(([, t]) => t !== "");
    expect(lastReasoning).toBeLessThan(firstText);
    // `<think>` through `</think>`, both markers counted.
    expect(finishOf(events)).toMatchObject({
      reason: FinishReason.STOP,
      reasoningTokens: TOOLS_THINK_PIECES.indexOf("</think>") + 1,
    });
  });

  it("a reasoning budget closes the segment when it is spent, and the answer follows", async () => {
    // `<think>`, "\n", "Checking": three reasoning tokens, then the template's end marker.
    const events = await generate(protocol, { messages: [{ role: Role.USER, content: "Hello!" }], reasoningBudget: 3 });
    const p = parts(events);
    expect(p.map(([r]) => r).join("")).toBe("Checking");
    expect(p.map(([, t]) => t).join("")).toBe(TOOLS_ANSWER);
    const finish = finishOf(events);
    expect(finish.reason).toBe(FinishReason.STOP);
    // The budget; the end marker forced after it is no reasoning (docs/contract.md, "Reasoning effort").
    expect(finish.reasoningTokens).toBe(3);
  });

  it("after the tool result: reasoning and the answer", async () => {
    const events = await generate(protocol, {
      tools,
      messages: [
        question,
        { role: Role.ASSISTANT, toolCalls: [{ id: "call_1", name: "get_weather", arguments: '{"city":"Tokyo"}' }] },
        { role: Role.TOOL, toolCallId: "call_1", content: '{"temperature":22,"sky":"sunny"}' },
      ],
    });
    expect(
      parts(events)
        .map(([r]) => r)
        .join(""),
    ).toBe(TOOL_RESULT_REASONING);
    expect(
      parts(events)
        .map(([, t]) => t)
        .join(""),
    ).toBe(TOOLS_ANSWER);
    expect(finishOf(events)).toMatchObject({
      reason: FinishReason.STOP,
      reasoningTokens: TOOLS_RESULT_PIECES.indexOf("</think>") + 1,
    });
  });

  // A client may send one assistant turn back as several messages, in any order (an agent that got
  // [call, text] sends [call, text, result]): it is one turn, text before calls, then the results.
  it.each([
    ["call, then text", ["call", "text"]],
    ["text, then call", ["text", "call"]],
    ["reasoning, call, text", ["reasoning", "call", "text"]],
  ])("after the tool result of a turn sent back as %s: the same answer", async (_name, order) => {
    const pieces: Record<string, object> = {
      call: { role: Role.ASSISTANT, toolCalls: [{ id: "call_1", name: "get_weather", arguments: '{"city":"Tokyo"}' }] },
      text: { role: Role.ASSISTANT, content: "Let me look that up." },
      reasoning: { role: Role.ASSISTANT, reasoning: "The user wants the weather." },
    };
    const events = await generate(protocol, {
      tools,
      messages: [
        question,
        ...order.map((k) => pieces[k]),
        { role: Role.TOOL, toolCallId: "call_1", content: '{"temperature":22,"sky":"sunny"}' },
      ],
    });
    expect(
      parts(events)
        .map(([r]) => r)
        .join(""),
    ).toBe(TOOL_RESULT_REASONING);
    expect(
      parts(events)
        .map(([, t]) => t)
        .join(""),
    ).toBe(TOOLS_ANSWER);
  });
});

describe("argument strings on the tools model", () => {
  // A model that does not know a tool well may keep writing the template's own markers inside a
  // string argument (the call syntax's `<tool_call>`), until max_tokens. Pushed there with a
  // logit bias, it must still write a well-formed call: the markers are not allowed in arguments.
  it("never hold the template's special tokens, even when the model wants nothing else", async () => {
    const [loaded] = sidecar.models;
    const [marker] = loaded!.model.tokenize("<tool_call>", true);
    const note = { type: "object", properties: { note: { type: "string", maxLength: 12 } }, required: ["note"] };
    const events = await collect(
      clientsFor(sidecar.url).grpc.generate({
        input: {
          case: "chat",
          value: {
            messages: [question],
            tools: [{ name: "take_note", description: "Keep a note", parameters: JSON.stringify(note) }],
            toolChoice: ToolChoice.REQUIRED,
            parallelToolCalls: false,
          },
        },
        sampling: { temperature: 0, logitBias: { [marker!]: 100 } },
        maxTokens: 80,
      }),
    );
    const args = events.flatMap((e) => (e.case === "token" ? e.value.toolCalls.map((c) => c.arguments) : [])).join("");
    expect(args).not.toContain("<tool_call>");
    expect(JSON.parse(args)).toMatchObject({ note: expect.any(String) });
    expect(finishOf(events).reason).toBe(FinishReason.TOOL_CALLS);
  });
});

describe("two calls in one reply on the tools model", () => {
  const both = { role: Role.USER, content: "Weather in both cities, Tokyo and Paris?" };
  const argumentsOf = (events: Events) => {
    const calls: { name: string; arguments: string }[] = [];
    for (const [, , deltas] of parts(events)) {
      for (const delta of deltas) {
        const [index = "", id = "", name = "", args = ""] = delta.split("|");
        if (id === "id") calls[Number(index)] = { name, arguments: "" };
        else if (calls[Number(index)] !== undefined) (calls[Number(index)] as { arguments: string }).arguments += args;
      }
    }
    return calls;
  };

  it.each(["grpc", "grpc-web"] as const)("streams both calls with their own index and id (%s)", async (protocol) => {
    const events = await generate(protocol, { messages: [both], tools });
    expect(argumentsOf(events)).toEqual([
      { name: "get_weather", arguments: '{"city":"Tokyo"}' },
      { name: "get_weather", arguments: '{"city":"Paris"}' },
    ]);
    const ids = events.flatMap((e) =>
      e.case === "token" ? e.value.toolCalls.filter((c) => c.id !== "").map((c) => c.id) : [],
    );
    expect(new Set(ids).size).toBe(2);
    expect(finishOf(events).reason).toBe(FinishReason.TOOL_CALLS);
  });

  it("parallel_tool_calls false ends the reply after the first call", async () => {
    const events = await generate("grpc", { messages: [both], tools, parallelToolCalls: false });
    expect(argumentsOf(events)).toEqual([{ name: "get_weather", arguments: '{"city":"Tokyo"}' }]);
    expect(finishOf(events).reason).toBe(FinishReason.TOOL_CALLS);
  });
});

describe("tool choice and history on the tools model", () => {
  it('"none" renders no tools: the model answers', async () => {
    const events = await generate("grpc", { messages: [question], tools, toolChoice: ToolChoice.NONE });
    expect(
      parts(events)
        .map(([, t]) => t)
        .join(""),
    ).toBe(TOOLS_ANSWER);
  });

  it('"required" and a named function force the call from the first token', async () => {
    for (const chat of [
      { toolChoice: ToolChoice.REQUIRED },
      { toolChoice: ToolChoice.FUNCTION, toolName: "get_weather" },
    ]) {
      const events = await generate("grpc", { messages: [{ role: Role.USER, content: "Hello!" }], tools, ...chat });
      const args = parts(events)
        .flatMap(([, , c]) => c)
        .map((c) => c.split("|")[3])
        .join("");
      expect(JSON.parse(args)).toMatchObject({ city: expect.any(String) });
      expect(finishOf(events).reason).toBe(FinishReason.TOOL_CALLS);
    }
  });

  it(
    "refuses a tool result that answers no call, unknown tool choices, bad schemas and constraints with " + "tools",
    async () => {
      const client = clientsFor(sidecar.url).grpc;
      const refuse = async (chat: object, extra: object = {}) =>
        collect(client.generate({ input: { case: "chat", value: chat }, ...extra })).then(
          () => "accepted",
          (error: Error) => error.message,
        );
      expect(await refuse({ messages: [question, { role: Role.TOOL, toolCallId: "nope", content: "x" }] })).toMatch(
        /answers tool call "nope"/,
      );
      expect(await refuse({ messages: [question], tools, toolChoice: ToolChoice.FUNCTION, toolName: "other" })).toMatch(
        /not among the tools/,
      );
      expect(await refuse({ messages: [question], tools: [{ name: "bad name", parameters: "" }] })).toMatch(
        /letters, digits/,
      );
      expect(await refuse({ messages: [question], tools: [{ name: "x", parameters: "[1]" }] })).toMatch(
        /JSON schema object/,
      );
      expect(await refuse({ messages: [question], tools: [tools[0], tools[0]] })).toMatch(/two tools/);
      expect(
        await refuse({ messages: [question], tools }, { constraint: { kind: { case: "jsonObject", value: true } } }),
      ).toMatch(/cannot be combined/);
    },
  );

  it(
    "logit bias still applies under the call grammar: the banned `city` token never comes, the grammar still writes " +
      "the key",
    async () => {
      const client = clientsFor(sidecar.url).grpc;
      const { tokens } = await client.tokenize({ input: { case: "text", value: "city" } });
      const city = tokens.at(-1) ?? 0;
      const events = await collect(
        client.generate({
          input: { case: "chat", value: { messages: [question], tools } },
          sampling: { temperature: 0, logitBias: { [city]: -100 } },
          maxTokens: 100,
        }),
      );
      const fragments = parts(events)
        .flatMap(([, , c]) => c)
        .map((c) => c.split("|")[3] ?? "")
        .filter((f) => f !== "");
      expect(events.some((e) => e.case === "token" && e.value.id === city)).toBe(false);
      // Off its script after the ban, the model writes the key the schema requires, piece by piece.
      expect(fragments.join("")).toMatch(/^\{"city":/);
      expect(fragments.slice(0, 2)).not.toEqual(TOOL_ARGUMENT_FRAGMENTS.slice(0, 2));
    },
  );

  it("counts the tools in the rendered prompt (Tokenize)", async () => {
    const client = clientsFor(sidecar.url).grpc;
    const plain = await client.tokenize({ input: { case: "chat", value: { messages: [question] } } });
    const withTools = await client.tokenize({ input: { case: "chat", value: { messages: [question], tools } } });
    expect(withTools.tokens.length).toBeGreaterThan(plain.tokens.length + 20);
  });
});
