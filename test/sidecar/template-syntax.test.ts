// A real model served with real templates of other families (llama.cpp's, through a chatTemplate
// override): the reply syntax is learned from the template it is served with, and tools offered to
// a model whose template writes calls no reader reads are refused with the reason, before anything
// is generated, never returned as text.
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, describe, expect, it } from "vitest";
import { llamaTemplates } from "../../gguf/llama-source.js";
import { modelPath } from "../../gguf/models.js";
import { GenerateRequestSchema, Role } from "../../proto/gen/inference/v1/inference_pb.js";
import { renderPrompt } from "../../sidecar/engine/chat/prompt.js";
import { replyReader } from "../../sidecar/engine/chat/reply-reader.js";
import { loadModel, type LoadedModel } from "../../sidecar/engine/llama/model.js";

const loaded: LoadedModel[] = [];
async function serveWith(template: string): Promise<LoadedModel> {
  const model = await loadModel({
    modelPath: modelPath("demo"),
    chatTemplate: template,
    threads: 1,
    engine: "auto",
    sequences: 1,
    contextSize: 2048,
    maxQueue: 1,
    queueTimeoutMs: 10_000,
  });
  loaded.push(model);
  return model;
}
afterAll(async () => {
  for (const model of loaded) await model.dispose();
});

const withTools = create(GenerateRequestSchema, {
  input: {
    case: "chat",
    value: {
      messages: [{ role: Role.USER, content: "Weather in Tokyo?" }],
      tools: [{ name: "get_weather", parameters: '{"type":"object","properties":{"city":{"type":"string"}}}' }],
    },
  },
}).input;

describe("the reply syntax of the template a model is served with", () => {
  it("Mistral Small 3.2's template: Mistral's calls", async () => {
    const model = await serveWith(llamaTemplates().get("Mistral-Small-3.2-24B-Instruct-2506.jinja") as string);
    expect(model.replySyntax.calls?.family).toBe("mistral");
    expect(await replyReader(model, renderPrompt(model, withTools))).toBeDefined();
  });

  it("a template whose calls no reader reads (LFM2.5's Python-style calls): tools refused with the reason", async () => {
    const model = await serveWith(llamaTemplates().get("LFM2.5-8B-A1B.jinja") as string);
    expect(model.replySyntax.calls).toBeUndefined();
    const error = await replyReader(model, renderPrompt(model, withTools)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectError);
    expect((error as ConnectError).code).toBe(Code.InvalidArgument);
    expect((error as ConnectError).rawMessage).toMatch(
      /^model "demo" cannot call tools: the template writes tool calls as "<\|tool_call_start\|>\[probe_weather\(/,
    );
  });
});
