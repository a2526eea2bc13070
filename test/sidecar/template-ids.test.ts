// A history's call ids in the family's own form (chat/template-ids.ts), through the sidecar's prompt
// rendering on twins: Kimi K2's first template writes a result's header with the id it is given, and
// its calls as `functions.<name>:<index>`, so the ids this server gives (`call_` + 24) must become
// those; Mistral Small 3.2's refuses any id but 9 letters and digits, so each id becomes one such,
// the same for a call and its result and the same on every turn.
import { create } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureModels } from "../../gguf/models.js";
import { llamaTemplate } from "../../gguf/twins/parts.js";
import { ChatSchema, Role, ToolChoice, type Chat } from "../../proto/gen/inference/v1/inference_pb.js";
import { renderChat } from "../../sidecar/engine/chat/prompt.js";
import { loadModel, type LoadedModel } from "../../sidecar/engine/llama/model.js";

const loaded: LoadedModel[] = [];
let kimi: LoadedModel;
let mistral: LoadedModel;
beforeAll(async () => {
  const paths = await ensureModels("models", ["kimi-k2", "mistral-small"]);
  const options = {
    threads: 1,
    engine: "auto" as const,
    sequences: 1,
    contextSize: 4096,
    maxQueue: 1,
    queueTimeoutMs: 10_000,
  };
  // The Kimi twin with Kimi K2's first template (moonshotai-Kimi-K2.jinja), which prints a result's id as given.
  kimi = await loadModel({
    ...options,
    modelPath: paths["kimi-k2"],
    chatTemplate: llamaTemplate("moonshotai-Kimi-K2.jinja"),
  });
  mistral = await loadModel({ ...options, modelPath: paths["mistral-small"] });
  loaded.push(kimi, mistral);
}, 60_000);
afterAll(async () => {
  for (const model of loaded) await model.dispose();
});

const SCHEMA = JSON.stringify({ type: "object", properties: { city: { type: "string" } } });
const ids: [string, string] = ["call_4fKq0Zt9LmWc2RbX8yHs1aPe", "call_Jm3nB7vQx2Lk9TzR5wYp0cDf"];

/** A turn with two calls, then their results, then the user again. */
function chat([first, second]: readonly [string, string]): Chat {
  return create(ChatSchema, {
    messages: [
      { role: Role.USER, content: "Weather in Tokyo and Paris?" },
      {
        role: Role.ASSISTANT,
        toolCalls: [
          { id: first, name: "get_weather", arguments: '{"city":"Tokyo"}' },
          { id: second, name: "get_time", arguments: '{"city":"Paris"}' },
        ],
      },
      { role: Role.TOOL, toolCallId: first, content: "sunny" },
      { role: Role.TOOL, toolCallId: second, content: "noon" },
    ],
    tools: [
      { name: "get_weather", description: "The weather.", parameters: SCHEMA },
      { name: "get_time", description: "The time.", parameters: SCHEMA },
    ],
    toolChoice: ToolChoice.AUTO,
  });
}

const text = (model: LoadedModel, c: Chat): string => model.model.detokenize(renderChat(model, c).tokens, true);

describe("call ids in the family's form", () => {
  it("Kimi K2: calls and their results named functions.<name>:<index>, as the template names the calls", () => {
    const prompt = text(kimi, chat(ids));
    expect(prompt).toContain("<|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>");
    expect(prompt).toContain("<|tool_call_begin|>functions.get_time:1<|tool_call_argument_begin|>");
    expect(prompt).toContain("## Return of functions.get_weather:0\\nsunny");
    expect(prompt).toContain("## Return of functions.get_time:1\\nnoon");
    expect(prompt).not.toMatch(/call_[A-Za-z0-9]{24}/);
  });

  it(
    "Mistral Small 3.2: any id becomes 9 letters and digits, the same for a call and its result and on every " + "turn",
    () => {
      const prompt = text(mistral, chat(ids));
      const calls = [...prompt.matchAll(/\[CALL_ID\]([^[]*)\[ARGS\]/g)].map((m) => m[1]);
      const results = [...prompt.matchAll(/\[TOOL_RESULTS\]([^[]*)\[TOOL_CONTENT\]/g)].map((m) => m[1]);
      expect(calls).toHaveLength(2);
      for (const id of calls) expect(id).toMatch(/^[A-Za-z0-9]{9}$/);
      expect(new Set(calls).size).toBe(2);
      expect(results).toEqual(calls);
      expect(text(mistral, chat(ids))).toBe(prompt);
      // An id already of 9 letters and digits is kept.
      expect(text(mistral, chat(["abc123XYZ", "def456UVW"]))).toContain("[CALL_ID]abc123XYZ[ARGS]");
    },
  );
});
