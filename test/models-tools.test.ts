// The `tools` scripted model (gguf/models.ts, TOOLS_SPEC) through real llama.cpp
// (node-llama-cpp): its template resolves to node-llama-cpp's Qwen wrapper, its tool-call and
// reasoning markers are single user-defined tokens, and one model answers by context — a call when
// tools are offered, reasoning about the result after a tool result, reasoning and an answer in a
// plain chat — with exact token pieces, at temperature 0 and 1, and within the call grammars.
import {
  LlamaChat,
  LlamaGrammarEvaluationState,
  LlamaText,
  SpecialTokensText,
  type ChatHistoryItem,
  type ChatModelFunctions,
  type ChatWrapper,
  type Llama,
  type LlamaContext,
  type LlamaGrammar,
  type LlamaModel,
  type Token,
} from "node-llama-cpp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { byteTokenId, byteTokenPiece, NEWLINE_ID, TOKEN_TYPE } from "../gguf/llama.js";
import { buildModel, ensureModels, TOOLS_SPEC } from "../gguf/models.js";
import { buildContextualModel, type ContextualSpec } from "../gguf/scripted.js";
import { encodeGguf } from "../gguf/writer.js";
import { loadChatModel, type ChatModel } from "./support/chat-model.js";
import {
  TOOL_ARGUMENT_FRAGMENTS,
  TOOL_CALL_TEXT,
  TWO_TOOL_CALLS_ARGUMENT_FRAGMENTS,
  TWO_TOOL_CALLS_TEXT,
  TOOL_RESULT_REASONING,
  TOOLS_ANSWER,
  THINK_REASONING,
} from "./support/scripted.js";

const MARKERS = ["<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>", "<think>", "</think>"];
/** The answer's pieces: ° and ☀️ are byte tokens. */
const ANSWER_PIECES = [
  "It",
  " is",
  " sunny",
  " in",
  " Tokyo,",
  " 22",
  "<0xC2>",
  "<0xB0>",
  "C.",
  " ",
  "<0xE2>",
  "<0x98>",
  "<0x80>",
  "<0xEF>",
  "<0xB8>",
  "<0x8F>",
];
const CALL_PIECES = [
  "<tool_call>",
  "<0x0A>",
  '{"name": "',
  "get_weather",
  '", "arguments": ',
  ...TOOL_ARGUMENT_FRAGMENTS,
  "}",
  "<0x0A>",
  "</tool_call>",
  "<|im_end|>",
];
const THINK_PIECES = [
  "<think>",
  "<0x0A>",
  "Checking",
  " the",
  " forecast.",
  "<0x0A>",
  "</think>",
  "<0x0A>",
  "<0x0A>",
  ...ANSWER_PIECES,
  "<|im_end|>",
];
const RESULT_PIECES = [
  "<think>",
  "<0x0A>",
  "The",
  " tool",
  " says",
  " sunny.",
  "<0x0A>",
  "</think>",
  "<0x0A>",
  "<0x0A>",
  ...ANSWER_PIECES,
  "<|im_end|>",
];
/** (d): two calls, one a line; each ends in its own token, which switches the mode for the next. */
const TWO_CALLS_PIECES = [
  ...CALL_PIECES.slice(0, 6),
  "city",
  '":"',
  'Tokyo"}',
  "}",
  "<0x0A>",
  "</tool_call>",
  "<0x0A>",
  ...CALL_PIECES.slice(0, 6),
  "city",
  '":"',
  'Paris"}',
  "}",
  "<0x0A>",
  "</tool_call>",
  "<|im_end|>",
];
const THINK_TEXT = `<think>\n${THINK_REASONING}\n</think>\n\n${TOOLS_ANSWER}`;
const RESULT_TEXT = `<think>\n${TOOL_RESULT_REASONING}\n</think>\n\n${TOOLS_ANSWER}`;

const WEATHER_SCHEMA = { type: "object", properties: { city: { type: "string" } }, required: ["city"] } as const;
const FUNCTIONS: ChatModelFunctions = {
  get_weather: { description: "Get weather for a city", params: WEATHER_SCHEMA },
};
const QUESTION: ChatHistoryItem = { type: "user", text: "Weather in Tokyo?" };
type Prompt = { chatHistory: ChatHistoryItem[]; availableFunctions?: ChatModelFunctions };
/** (a) tools offered, no result yet; (b) the call made and its result in the history; (c) a plain chat. */
const PROMPTS = {
  call: { chatHistory: [QUESTION, { type: "model", response: [] }], availableFunctions: FUNCTIONS },
  result: {
    chatHistory: [
      QUESTION,
      {
        type: "model",
        response: [
          {
            type: "functionCall",
            name: "get_weather",
            params: { city: "Tokyo" },
            result: { temperature: 22, sky: "sunny" },
          },
        ],
      },
    ],
    availableFunctions: FUNCTIONS,
  },
  plain: {
    chatHistory: [
      { type: "user", text: "Hello!" },
      { type: "model", response: [] },
    ],
  },
  /** (d) tools offered and " cities" in the question. */
  twoCalls: {
    chatHistory: [
      { type: "user", text: "Weather in both cities, Tokyo and Paris?" },
      { type: "model", response: [] },
    ],
    availableFunctions: FUNCTIONS,
  },
} satisfies Record<string, Prompt>;

describe("the tools model's build", () => {
  it("is deterministic", () => {
    expect(Buffer.from(encodeGguf(buildModel("tools"))).equals(Buffer.from(encodeGguf(buildModel("tools"))))).toBe(
      true,
    );
  });

  it("scripts the call, the reasoning after a result and the plain reasoning, by mode", () => {
    const built = buildContextualModel(TOOLS_SPEC);
    expect(built.scripts.map((s) => [s.mode, s.trigger, s.pieces])).toEqual([
      ["tools", "<0x0A>", CALL_PIECES],
      ["result", "<0x0A>", RESULT_PIECES],
      [undefined, "<0x0A>", THINK_PIECES],
      ["cities", "<0x0A>", TWO_CALLS_PIECES.slice(0, 9)],
      ["first-call", 'Tokyo"}', TWO_CALLS_PIECES.slice(9, 22)],
      ["second-call", 'Paris"}', TWO_CALLS_PIECES.slice(22)],
    ]);
    // The newline's successor is decided by the token before it, and at the forks by the mode (a
    // default for the modes not named); so are the second call's tokens where it parts from the first.
    expect(built.rules.filter((r) => r.mode !== undefined)).toEqual([
      { token: "<0x0A>", previous: undefined, mode: "tools", next: "<tool_call>" },
      { token: "<0x0A>", previous: undefined, mode: "cities", next: "<tool_call>" },
      { token: "<0x0A>", previous: undefined, mode: { except: ["tools", "cities"] }, next: "<think>" },
      { token: "<0x0A>", previous: "<think>", mode: "result", next: "The" },
      { token: "<0x0A>", previous: "<think>", mode: { except: ["result"] }, next: "Checking" },
      { token: "city", previous: '{"', mode: "cities", next: '":"' },
      { token: "city", previous: '{"', mode: "first-call", next: '":"' },
      { token: "city", previous: '{"', mode: { except: ["cities", "first-call"] }, next: '":"Tokyo"}' },
      { token: "</tool_call>", previous: "<0x0A>", mode: "first-call", next: "<0x0A>" },
      { token: "</tool_call>", previous: "<0x0A>", mode: { except: ["first-call"] }, next: "<|im_end|>" },
      { token: '":"', previous: "city", mode: "first-call", next: 'Paris"}' },
      { token: '":"', previous: "city", mode: { except: ["first-call"] }, next: 'Tokyo"}' },
    ]);
  });

  it("rejects a script that continues after a token no script continues", () => {
    const spec: ContextualSpec = {
      ...TOOLS_SPEC,
      name: "dangling",
      scripts: [{ after: ["\n"], reply: ["A"], end: "continue" }],
    };
    expect(() => buildContextualModel(spec)).toThrow(/continues after "A", which no script continues/);
  });

  it("has the markers as single user-defined tokens and the newline only as a byte", () => {
    const { vocab } = buildContextualModel(TOOLS_SPEC);
    for (const marker of MARKERS)
      expect(vocab.filter((e) => e.piece === marker)).toEqual([
        { piece: marker, score: 0, type: TOKEN_TYPE.userDefined },
      ]);
    expect(vocab[NEWLINE_ID]?.piece).toBe(byteTokenPiece(0x0a));
    expect(vocab.filter((e) => e.piece.includes("\n"))).toEqual([]);
  });

  it("rejects a token that needs two successors after the same token in the same mode", () => {
    const spec: ContextualSpec = {
      ...TOOLS_SPEC,
      name: "conflict",
      scripts: [
        { mode: "tools", after: ["\n"], reply: ["<think>", "\n", "A"], end: "im_end" },
        { mode: "tools", after: ["\n"], reply: ["<think>", "\n", "B"], end: "im_end" },
      ],
    };
    expect(() => buildContextualModel(spec)).toThrow(
      /token "<0x0A>" after "<think>" would need two successors: "A" .* and "B"/,
    );
    // Different modes may differ there.
    expect(() =>
      buildContextualModel({
        ...spec,
        scripts: [spec.scripts[0]!, { after: ["\n"], reply: ["<think>", "\n", "B"], end: "im_end" }],
      }),
    ).not.toThrow();
  });
});

describe("the tools model in llama.cpp", () => {
  let loaded: ChatModel;
  let llama: Llama;
  let model: LlamaModel;
  let context: LlamaContext;
  let wrapper: ChatWrapper;

  beforeAll(async () => {
    const { tools } = await ensureModels("models", ["tools"]);
    loaded = await loadChatModel(tools, { threads: 1, sequences: 2, contextSize: 2048 });
    ({ llama, model, context, wrapper } = loaded);
  }, 60_000);
  afterAll(() => loaded?.dispose());

  const text = (value: unknown): string => LlamaText(value as LlamaText).toString();
  /** A token as the scripts name it: its text, or `<0xNN>` for a byte token. */
  const pieceOf = (t: Token): string => {
    return t >= byteTokenId(0) && t <= byteTokenId(0xff)
      ? byteTokenPiece(t - byteTokenId(0))
      : model.detokenize([t], true);
  };

  function promptTokens(prompt: Prompt): Token[] {
    return wrapper.generateContextState(prompt).contextText.tokenize(model.tokenizer);
  }

  async function reply(
    tokens: Token[],
    options: {
      temperature: number;
      seed?: number;
      grammar?: () => LlamaGrammarEvaluationState | undefined;
      onToken?: (t: Token) => void;
    },
  ): Promise<Token[]> {
    const sequence = context.getSequence();
    try {
      const out: Token[] = [];
      const evaluation = sequence.evaluate(tokens, {
        temperature: options.temperature,
        ...(options.seed === undefined ? {} : { seed: options.seed }),
        ...(options.grammar === undefined ? {} : { grammarEvaluationState: options.grammar }),
        yieldEogToken: true,
      });
      for await (const token of evaluation) {
        out.push(token);
        options.onToken?.(token);
        if (model.isEogToken(token) || out.length >= 64) break;
      }
      return out;
    } finally {
      sequence.dispose();
    }
  }

  it("resolves to node-llama-cpp's Qwen wrapper, with its call, result and thought syntax", () => {
    expect(model.getWarnings()).toEqual([]);
    expect(wrapper.wrapperName).toBe("Qwen");
    const { functions, segments } = wrapper.settings;
    expect(text(functions.call.prefix)).toBe('<tool_call>\n{"name": "');
    expect(text(functions.call.paramsPrefix)).toBe('", "arguments": ');
    expect(text(functions.call.suffix)).toBe("}\n</tool_call>");
    expect(text(functions.parallelism?.call.betweenCalls)).toBe("\n");
    expect(text(functions.result.prefix)).toBe("\n<tool_response>\n");
    expect(text(functions.result.suffix)).toBe("\n</tool_response>");
    expect(text(segments?.thought?.prefix)).toBe("<think>\n");
    expect(text(segments?.thought?.suffix)).toBe("\n</think>");
  });

  it("tokenizes the markers as one token each and detokenizes them as text", () => {
    for (const marker of MARKERS) {
      const [id, ...rest] = LlamaText(new SpecialTokensText(marker)).tokenize(model.tokenizer);
      expect(rest).toEqual([]);
      expect(model.detokenize([id as Token], false)).toBe(marker);
      // User-defined tokens are matched in plain text too, as in real Qwen GGUFs.
      expect(model.tokenize(marker)).toEqual([id]);
    }
    expect(model.tokenize("\n")).toEqual([NEWLINE_ID]);
    // The two-calls trigger is one (text) token wherever " cities" is written.
    const cities = model.tokenize(" cities");
    expect(cities.length).toBe(1);
    expect(promptTokens(PROMPTS.twoCalls)).toContain(cities[0]);
    expect(promptTokens(PROMPTS.call)).not.toContain(cities[0]);
    const call = promptTokens(PROMPTS.call);
    const toolCall = model.tokenize("<tool_call>")[0];
    expect(call.filter((t) => t === toolCall).length).toBe(2); // the tools' instructions
    // control tokens are not text
    expect(model.detokenize(call, false).endsWith("<|im_start|>assistant\n")).toBe(false);
    expect(model.detokenize(call, true).endsWith("<|im_start|>assistant\n")).toBe(true);
    expect(model.detokenize(promptTokens(PROMPTS.result), false)).toContain(
      '<tool_response>\n{"temperature": 22, "sky": "sunny"}\n</tool_response>',
    );
  });

  for (const sampling of [{ temperature: 0 }, { temperature: 1, seed: 1234 }]) {
    it(`answers by context at temperature ${sampling.temperature}`, async () => {
      const call = await reply(promptTokens(PROMPTS.call), sampling);
      expect(call.map(pieceOf)).toEqual(CALL_PIECES);
      expect(model.detokenize(call.slice(0, -1), false)).toBe(TOOL_CALL_TEXT);

      const result = await reply(promptTokens(PROMPTS.result), sampling);
      expect(result.map(pieceOf)).toEqual(RESULT_PIECES);
      expect(model.detokenize(result.slice(0, -1), false)).toBe(RESULT_TEXT);

      const plain = await reply(promptTokens(PROMPTS.plain), sampling);
      expect(plain.map(pieceOf)).toEqual(THINK_PIECES);
      expect(model.detokenize(plain.slice(0, -1), false)).toBe(THINK_TEXT);

      const two = await reply(promptTokens(PROMPTS.twoCalls), sampling);
      expect(two.map(pieceOf)).toEqual(TWO_CALLS_PIECES);
      expect(model.detokenize(two.slice(0, -1), false)).toBe(TWO_TOOL_CALLS_TEXT);
      expect([two.slice(5, 9), two.slice(18, 22)].map((args) => args.map((t) => model.detokenize([t], false)))).toEqual(
        TWO_TOOL_CALLS_ARGUMENT_FRAGMENTS,
      );
    });
  }

  it("two sequences in parallel each follow their own context", async () => {
    const [call, plain] = await Promise.all([
      reply(promptTokens(PROMPTS.call), { temperature: 1, seed: 5 }),
      reply(promptTokens(PROMPTS.plain), { temperature: 1, seed: 5 }),
    ]);
    expect(call.map(pieceOf)).toEqual(CALL_PIECES);
    expect(plain.map(pieceOf)).toEqual(THINK_PIECES);
  });

  it(
    "plain chat with a system prompt, and a tool result among several calls in the history, keep their " + "scripts",
    async () => {
      const plain = await reply(
        promptTokens({ chatHistory: [{ type: "system", text: "Be brief." }, ...PROMPTS.plain.chatHistory] }),
        { temperature: 0 },
      );
      expect(plain.map(pieceOf)).toEqual(THINK_PIECES);
      const call = {
        type: "functionCall",
        name: "get_weather",
        params: { city: "Tokyo" },
        result: { temperature: 22, sky: "sunny" },
      } as const;
      const twice = await reply(
        promptTokens({
          chatHistory: [QUESTION, { type: "model", response: [call, call, "Let me check again.", call] }],
          availableFunctions: FUNCTIONS,
        }),
        { temperature: 0 },
      );
      expect(twice.map(pieceOf)).toEqual(RESULT_PIECES);
      // A new question after an answered call: the result is still in the prompt, so it reasons on it.
      const again = await reply(
        promptTokens({
          chatHistory: [
            QUESTION,
            { type: "model", response: [call, "Sunny."] },
            QUESTION,
            { type: "model", response: [] },
          ],
          availableFunctions: FUNCTIONS,
        }),
        { temperature: 0 },
      );
      expect(again.map(pieceOf)).toEqual(RESULT_PIECES);
    },
  );

  it("keeps to its scripts deep into a long context (the previous-token head at 3,000+ positions)", async () => {
    const long = await model.createContext({ contextSize: 4096 });
    try {
      const filler = "Tokyo is large; the forecast says sun, 22 degrees.\n".repeat(135);
      const system: ChatHistoryItem = { type: "system", text: filler };
      const cases: [Prompt, string[]][] = [
        [{ chatHistory: [system, ...PROMPTS.plain.chatHistory] }, THINK_PIECES],
        [{ ...PROMPTS.call, chatHistory: [system, ...PROMPTS.call.chatHistory] }, CALL_PIECES],
        [{ ...PROMPTS.twoCalls, chatHistory: [system, ...PROMPTS.twoCalls.chatHistory] }, TWO_CALLS_PIECES],
      ];
      for (const [prompt, expected] of cases) {
        const tokens = promptTokens(prompt);
        expect(tokens.length, String(tokens.length)).toBeGreaterThan(3000);
        const sequence = long.getSequence();
        const out: Token[] = [];
        for await (const token of sequence.evaluate(tokens, { temperature: 1, seed: 7, yieldEogToken: true })) {
          out.push(token);
          if (model.isEogToken(token) || out.length >= 64) break;
        }
        sequence.dispose();
        expect(out.map(pieceOf)).toEqual(expected);
      }
    } finally {
      await long.dispose();
    }
  });

  it("works with LlamaChat: a parsed get_weather call, and reasoning as a thought segment", async () => {
    const sequence = context.getSequence();
    try {
      const chat = new LlamaChat({ contextSequence: sequence, chatWrapper: wrapper });
      const called = await chat.generateResponse(PROMPTS.call.chatHistory, {
        functions: FUNCTIONS,
        temperature: 0,
        maxTokens: 64,
      });
      expect(called.metadata.stopReason).toBe("functionCalls");
      expect(called.functionCalls?.map((c) => [c.functionName, c.params])).toEqual([
        ["get_weather", { city: "Tokyo" }],
      ]);
      const both = await chat.generateResponse(PROMPTS.twoCalls.chatHistory, {
        functions: FUNCTIONS,
        temperature: 0,
        maxTokens: 64,
      });
      expect(both.metadata.stopReason).toBe("functionCalls");
      // LlamaChat (3.22.1) stops after the first call of the two: it ends the calls at the token
      // after `</tool_call>` (here `\n`, Qwen's betweenCalls) instead of reading a second call. The
      // sidecar parses replies itself (both calls: the grammar test below follows its steps).
      expect(both.functionCalls?.[0]).toMatchObject({ functionName: "get_weather", params: { city: "Tokyo" } });
      const answered = await chat.generateResponse(PROMPTS.result.chatHistory, {
        functions: FUNCTIONS,
        temperature: 0,
        maxTokens: 64,
      });
      expect(answered.metadata.stopReason).toBe("eogToken");
      expect(answered.fullResponse.filter((item) => item !== "")).toEqual([
        {
          type: "segment",
          segmentType: "thought",
          text: TOOL_RESULT_REASONING,
          ended: true,
          raw: expect.anything(),
          startTime: expect.any(String),
          endTime: expect.any(String),
        },
        `\n\n${TOOLS_ANSWER}`,
      ]);
    } finally {
      sequence.dispose();
    }
  });

  /**
   * As the sidecar builds it: the weather schema's JSON grammar, its trailing newlines turned into the call's closing
   * text.
   */
  const argumentsGrammarFor = async (suffix: string): Promise<LlamaGrammar> => {
    const lines = (await llama.createGrammarForJsonSchema(WEATHER_SCHEMA as never)).grammar.split("\n");
    const root = lines.findIndex((line) => line.startsWith("root ::= "));
    expect(lines[root]).toMatch(/ "\\n\\n\\n\\n" \[\\n\]\*$/);
    lines[root] = (lines[root] as string).replace(/ "\\n\\n\\n\\n" \[\\n\]\*$/, ` ${JSON.stringify(suffix)}`);
    return llama.createGrammar({ grammar: lines.join("\n") });
  };

  it(
    "makes the call within the sidecar's grammars: the name, then the schema's JSON and the closing " + "syntax",
    async () => {
      const call = wrapper.settings.functions.call;
      const prefix = text(call.prefix);
      const paramsPrefix = text(call.paramsPrefix);
      const nameGrammar = await llama.createGrammar({
        grammar: `root ::= ( "get_weather" ${JSON.stringify(paramsPrefix)} )`,
      });
      const argumentsGrammar = await argumentsGrammarFor(text(call.suffix));

      for (const sampling of [{ temperature: 0 }, { temperature: 1, seed: 99 }]) {
        let generated = "";
        let phase: "free" | "name" | "arguments" = "free";
        let state: LlamaGrammarEvaluationState | undefined;
        const phases: string[] = [];
        const tokens = await reply(promptTokens(PROMPTS.call), {
          ...sampling,
          grammar: () => {
            const next = generated.endsWith(paramsPrefix) ? "arguments" : generated === prefix ? "name" : phase;
            if (next !== phase) {
              phase = next;
              state = new LlamaGrammarEvaluationState({
                model,
                grammar: next === "name" ? nameGrammar : argumentsGrammar,
              });
            }
            phases.push(phase);
            return state;
          },
          onToken: (t) => {
            generated += model.detokenize([t], true);
          },
        });
        expect(tokens.map(pieceOf)).toEqual(CALL_PIECES);
        // Free for `<tool_call>`, `\n`, `{"name": "`; the name grammar for the name and `", "arguments": `;
        // the arguments grammar for `{"`, `city`, `":"Tokyo"}`, `}`, `\n`, `</tool_call>` and the end.
        expect(phases).toEqual([...Array(3).fill("free"), ...Array(2).fill("name"), ...Array(7).fill("arguments")]);
      }
    },
  );

  it(
    "makes two calls within the grammars, free between them: each argument token allowed by the JSON " + "schema",
    async () => {
      const call = wrapper.settings.functions.call;
      const [prefix, paramsPrefix, suffix] = [text(call.prefix), text(call.paramsPrefix), text(call.suffix)];
      const nameGrammar = await llama.createGrammar({
        grammar: `root ::= ( "get_weather" ${JSON.stringify(paramsPrefix)} )`,
      });
      const argumentsGrammar = await argumentsGrammarFor(suffix);

      for (const sampling of [{ temperature: 0 }, { temperature: 1, seed: 3 }]) {
        let generated = "";
        let phase: "free" | "name" | "arguments" = "free";
        let state: LlamaGrammarEvaluationState | undefined;
        const phases: string[] = [];
        const tokens = await reply(promptTokens(PROMPTS.twoCalls), {
          ...sampling,
          grammar: () => {
            let next = phase;
            if (phase === "free" && generated.endsWith(prefix)) next = "name";
            else if (phase === "name" && generated.endsWith(paramsPrefix)) next = "arguments";
            else if (phase === "arguments" && generated.endsWith(suffix)) next = "free";
            if (next !== phase) {
              phase = next;
              state =
                next === "free"
                  ? undefined
                  : new LlamaGrammarEvaluationState({
                      model,
                      grammar: next === "name" ? nameGrammar : argumentsGrammar,
                    });
            }
            phases.push(phase);
            return state;
          },
          onToken: (t) => {
            generated += model.detokenize([t], true);
          },
        });
        expect(tokens.map(pieceOf)).toEqual(TWO_CALLS_PIECES);
        // Per call: free for `<tool_call>`, `\n`, `{"name": "`; the name grammar for the name and
        // `", "arguments": `; the arguments grammar for `{"`, `city`, `":"`, the city, `}`, `\n`,
        // `</tool_call>`; then free for the `\n` between the calls and for the end.
        const one = [...Array(3).fill("free"), ...Array(2).fill("name"), ...Array(7).fill("arguments")];
        expect(phases).toEqual([...one, "free", ...one, "free"]);
      }
    },
  );
});
