// A real model served with real templates of other families (llama.cpp's, through a chatTemplate
// override): the reply syntax is learned from the template it is served with; tools offered to a
// model whose template writes calls no reader reads are refused with the reason, before anything is
// generated, never returned as text; and a history of calls and results is rendered as the
// template itself renders it.
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, describe, expect, it } from "vitest";
import { llamaTemplates } from "../../gguf/llama-source.js";
import { modelPath } from "../../gguf/models.js";
import { GenerateRequestSchema, Role } from "../../proto/gen/inference/v1/inference_pb.js";
import { renderPrompt } from "../../sidecar/engine/chat/prompt.js";
import { renderTemplate } from "../../sidecar/engine/syntax/jinja.js";
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

  it(
    "a template whose calls no reader reads (LFM2.5's Python-style calls): tools refused with the " + "reason",
    async () => {
      const model = await serveWith(llamaTemplates().get("LFM2.5-8B-A1B.jinja") as string);
      expect(model.replySyntax.calls).toBeUndefined();
      const error = await replyReader(model, renderPrompt(model, withTools)).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ConnectError);
      expect((error as ConnectError).code).toBe(Code.InvalidArgument);
      expect((error as ConnectError).rawMessage).toMatch(
        /^model "demo" cannot call tools: the template writes tool calls as "<\|tool_call_start\|>\[probe_weather\(/,
      );
    },
  );
});

describe("a history of calls and results, rendered by the template itself", () => {
  const weather = { type: "object", properties: { city: { type: "string" }, days: { type: "integer" } } };
  const history = create(GenerateRequestSchema, {
    input: {
      case: "chat",
      value: {
        messages: [
          { role: Role.USER, content: "Weather in Tokyo?" },
          {
            role: Role.ASSISTANT,
            reasoning: "A tool tells.",
            toolCalls: [{ id: "call00001", name: "get_weather", arguments: '{"city":"Tokyo","days":3}' }],
          },
          { role: Role.TOOL, toolCallId: "call00001", content: '{"sky":"sunny"}' },
        ],
        tools: [{ name: "get_weather", description: "The weather.", parameters: JSON.stringify(weather) }],
      },
    },
  }).input;
  /** The same chat as OpenAI's messages, rendered by the template with nothing between. */
  const ownRendering = (template: string, model: LoadedModel): string =>
    renderTemplate(template, {
      messages: [
        { role: "user", content: "Weather in Tokyo?" },
        {
          role: "assistant",
          content: null,
          reasoning_content: "A tool tells.",
          tool_calls: [
            {
              id: "call00001",
              type: "function",
              function: { name: "get_weather", arguments: { city: "Tokyo", days: 3 } },
            },
          ],
        },
        { role: "tool", tool_call_id: "call00001", name: "get_weather", content: '{"sky":"sunny"}' },
      ],
      tools: [
        { type: "function", function: { name: "get_weather", description: "The weather.", parameters: weather } },
      ],
      add_generation_prompt: true,
      bos_token: model.model.tokens.bosString,
      eos_token: model.model.tokens.eosString,
    });

  it.each(["GLM-4.6.jinja", "Kimi-K2-Instruct.jinja", "MiniMax-M2.jinja", "Mistral-Small-3.2-24B-Instruct-2506.jinja"])(
    "%s",
    async (name) => {
      const template = llamaTemplates().get(name) as string;
      const model = await serveWith(template);
      const prompt = renderPrompt(model, history);
      const text = model.model.detokenize(prompt.tokens, true);
      const own = ownRendering(template, model);
      expect(
        text === own || text === `${model.model.tokens.bosString}${own}`,
        `${JSON.stringify(text)}\n!=\n${JSON.stringify(own)}`,
      ).toBe(true);
      // Each argument as the family writes it, not one JSON "params" argument.
      expect(text).toContain("Tokyo");
      expect(text).not.toContain("params");
    },
  );

  it(
    "a client's text holding a special token's text stays text (the model's <|im_end|> is never read from " + "it)",
    async () => {
      const model = await serveWith(llamaTemplates().get("GLM-4.6.jinja") as string);
      const [imEnd] = model.model.tokenize("<|im_end|>", true);
      expect(model.model.getTokenAttributes(imEnd as never).control).toBe(true);
      const chat = (content: string) =>
        create(GenerateRequestSchema, { input: { case: "chat", value: { messages: [{ role: Role.USER, content }] } } })
          .input;
      expect(renderPrompt(model, chat("a <|im_end|> b")).tokens).not.toContain(imEnd);
      expect(model.model.detokenize(renderPrompt(model, chat("a <|im_end|> b")).tokens, true)).toContain(
        "a <|im_end|> b",
      );
    },
  );
});
