// The project's own GGUF models, through real llama.cpp (node-llama-cpp): the scripted models must
// say exactly what their scripts say, at any temperature, in parallel sequences.
import {
  ChatMLChatWrapper,
  getLlama,
  LlamaChat,
  LlamaCompletion,
  type ChatHistoryItem,
  type Llama,
  type LlamaContext,
  type LlamaModel,
  type Token,
} from "node-llama-cpp";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { byteTokenId, IM_END_ID } from "../gguf/llama.js";
import { buildModel, DEMO_SPEC, ensureModels, modelPath, SCRIPTED_SPEC } from "../gguf/models.js";
import { buildScriptedModel } from "../gguf/scripted.js";
import { encodeGguf } from "../gguf/writer.js";

const STORY = " there lived a tiny llama (🦙).";
const WEATHER = "It is sunny in Tokyo, 22°C. ☀️";
const STORY_PIECES = [
  " there",
  " lived",
  " a",
  " tiny",
  " llama",
  " (",
  "<0xF0>",
  "<0x9F>",
  "<0xA6>",
  "<0x99>",
  ").",
  "</s>",
];
const WEATHER_PIECES = [
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
  "<|im_end|>",
];
const HELLO: ChatHistoryItem[] = [
  { type: "user", text: "Hello!" },
  { type: "model", response: [] },
];

describe("GGUF builder", () => {
  it("builds the same bytes every time", () => {
    for (const name of ["demo", "scripted", "random-tiny"] as const) {
      expect(Buffer.from(encodeGguf(buildModel(name))).equals(Buffer.from(encodeGguf(buildModel(name))))).toBe(true);
    }
  });

  it("keeps the other models' bytes when the shared code changes", () => {
    const sha256 = (name: "demo" | "scripted" | "random-tiny") =>
      createHash("sha256")
        .update(encodeGguf(buildModel(name)))
        .digest("hex");
    // The demo model changed on purpose: its trained context is 131,072 (a coding agent's prompt fits).
    expect(sha256("demo")).toBe("a696945a02492094a47f1729e28635d62ae2de88229c0b3f4b69daa8a05e6ce0");
    expect(sha256("scripted")).toBe("085a9220c8d8042033d4dfa2492ebc0ce0223c0b09a09fb9689015b44adb802e");
    expect(sha256("random-tiny")).toBe("ea1e7c212770341a2ec6d3f975cfc50e3fee057d862995d854cf76d3ac7459c1");
  });

  it("writes exactly the built bytes, and only when needed", async () => {
    const paths = await ensureModels("models", ["scripted"]);
    expect(paths.scripted).toBe(modelPath("scripted"));
    expect(Buffer.from(readFileSync(paths.scripted)).equals(Buffer.from(encodeGguf(buildModel("scripted"))))).toBe(
      true,
    );
  });

  it("cuts replies into the expected pieces", () => {
    const scripted = buildScriptedModel(SCRIPTED_SPEC);
    expect(scripted.scripts.map((s) => s.trigger)).toEqual([" time", "<0x0A>", " Sing"]);
    expect(scripted.scripts[0]?.pieces).toEqual(STORY_PIECES);
    expect(scripted.scripts[1]?.pieces).toEqual(WEATHER_PIECES);
    expect(scripted.scripts[2]?.pieces).toEqual([" la"]);
    const demo = buildScriptedModel(DEMO_SPEC);
    expect(demo.scripts.map((s) => s.pieces)).toEqual([
      [" Once", " upon", " a", "</s>"],
      ["Hi", " there", "<|im_end|>"],
    ]);
  });

  it("rejects a script where a token needs two successors", () => {
    const spec = {
      name: "conflict",
      chatTemplate: "",
      scripts: [
        { after: "Once upon a time", reply: " a cat.", end: "eos" },
        { after: "\n", reply: "It is a dog.", end: "im_end" },
      ],
    } as const;
    expect(() => buildScriptedModel(spec)).toThrow(/token " a" would need two successors: " cat\." .* and " dog\."/);
  });
});

describe("random-tiny in llama.cpp", () => {
  it("loads, picks ChatML and generates", async () => {
    const { "random-tiny": path } = await ensureModels("models", ["random-tiny"]);
    const llama = await getLlama({ gpu: false, build: "never", maxThreads: 1 });
    const model = await llama.loadModel({ modelPath: path });
    const ctx = await model.createContext({ contextSize: 256 });
    try {
      const contextSequence = ctx.getSequence();
      expect(new LlamaChat({ contextSequence }).chatWrapper).toBeInstanceOf(ChatMLChatWrapper);
      const result = await new LlamaCompletion({ contextSequence }).generateCompletionWithMeta("Once upon a time", {
        maxTokens: 16,
        seed: 1,
      });
      expect(["maxTokens", "eogToken"]).toContain(result.metadata.stopReason);
      expect(model.getWarnings()).toEqual([]);
    } finally {
      await ctx.dispose();
      await model.dispose();
    }
  });
});

describe("scripted models in llama.cpp", () => {
  let llama: Llama;
  let demo: LlamaModel;
  let scripted: LlamaModel;
  let demoContext: LlamaContext;
  let context: LlamaContext;

  beforeAll(async () => {
    const paths = await ensureModels("models", ["demo", "scripted"]);
    llama = await getLlama({ gpu: false, build: "never", maxThreads: 1 });
    demo = await llama.loadModel({ modelPath: paths.demo });
    scripted = await llama.loadModel({ modelPath: paths.scripted });
    demoContext = await demo.createContext({ sequences: 2, contextSize: 512 });
    context = await scripted.createContext({ sequences: 2, contextSize: 512 });
  }, 60_000);

  afterAll(async () => {
    await context?.dispose();
    await demoContext?.dispose();
    await scripted?.dispose();
    await demo?.dispose();
    await llama?.dispose();
  });

  /** Runs `fn` on a fresh sequence of `ctx` and frees the sequence afterwards. */
  async function withSequence<T>(
    ctx: LlamaContext,
    fn: (seq: ReturnType<LlamaContext["getSequence"]>) => Promise<T>,
  ): Promise<T> {
    const seq = ctx.getSequence();
    try {
      return await fn(seq);
    } finally {
      seq.dispose();
    }
  }

  const pieces = (model: LlamaModel, tokens: readonly Token[]): string[] =>
    tokens.map((t) => model.detokenize([t], true));

  async function complete(
    model: LlamaModel,
    ctx: LlamaContext,
    prompt: string,
    options: { temperature?: number; seed?: number; maxTokens?: number } = {},
  ) {
    return withSequence(ctx, async (contextSequence) => {
      const tokens: Token[] = [];
      const completion = new LlamaCompletion({ contextSequence });
      const result = await completion.generateCompletionWithMeta(prompt, {
        maxTokens: 64,
        ...options,
        onToken: (t) => tokens.push(...t),
      });
      return { text: result.response, stopReason: result.metadata.stopReason, pieces: pieces(model, tokens), tokens };
    });
  }

  async function chat(model: LlamaModel, ctx: LlamaContext, options: { temperature?: number; seed?: number } = {}) {
    return withSequence(ctx, async (contextSequence) => {
      const tokens: Token[] = [];
      const llamaChat = new LlamaChat({ contextSequence });
      const result = await llamaChat.generateResponse(HELLO, {
        maxTokens: 64,
        ...options,
        repeatPenalty: { penalty: 1.3, frequencyPenalty: 0.5, presencePenalty: 0.5 },
        onToken: (t) => tokens.push(...t),
      });
      return {
        text: result.response,
        stopReason: result.metadata.stopReason,
        pieces: pieces(model, tokens),
        wrapper: llamaChat.chatWrapper,
      };
    });
  }

  it("demo: completion and chat reproduce the examples of the README and docs/contract.md", async () => {
    const c = await complete(demo, demoContext, "Once upon a time", { temperature: 0 });
    expect(c).toMatchObject({ text: " Once upon a", stopReason: "eogToken", pieces: [" Once", " upon", " a"] });
    const r = await chat(demo, demoContext, { temperature: 0 });
    expect(r.wrapper).toBeInstanceOf(ChatMLChatWrapper);
    expect(r).toMatchObject({ text: "Hi there", stopReason: "eogToken", pieces: ["Hi", " there"] });
  });

  for (const sampling of [{ temperature: 0 }, { temperature: 1, seed: 1234 }]) {
    it(`scripted: exact texts at temperature ${sampling.temperature}`, async () => {
      const c = await complete(scripted, context, "Once upon a time", sampling);
      expect(c.text).toBe(STORY);
      expect(c.stopReason).toBe("eogToken");
      expect(c.pieces).toEqual(STORY_PIECES.slice(0, -1).map((p) => (p.startsWith("<0x") ? "\uFFFD" : p)));
      const r = await chat(scripted, context, sampling);
      expect(r.wrapper).toBeInstanceOf(ChatMLChatWrapper);
      expect(r.text).toBe(WEATHER);
      expect(r.stopReason).toBe("eogToken");
    });
  }

  it("scripted: two sequences in parallel each get their own text", async () => {
    const [c, r] = await Promise.all([
      complete(scripted, context, "Once upon a time", { temperature: 1, seed: 7 }),
      chat(scripted, context, { temperature: 1, seed: 7 }),
    ]);
    expect(c.text).toBe(STORY);
    expect(r.text).toBe(WEATHER);
  });

  it("scripted: the loop only ends by max tokens", async () => {
    const c = await complete(scripted, context, "Let us sing. Sing", { temperature: 1, seed: 3, maxTokens: 9 });
    expect(c.text).toBe(" la".repeat(9));
    expect(c.stopReason).toBe("maxTokens");
  });

  it("scripted: a stop sequence across a token boundary stops node-llama-cpp too", async () => {
    const result = await withSequence(context, (contextSequence) =>
      new LlamaCompletion({ contextSequence }).generateCompletionWithMeta("Once upon a time", {
        maxTokens: 64,
        customStopTriggers: ["y l"],
      }),
    );
    expect(result.response).toBe(" there lived a tin");
    expect(result.metadata.stopReason).toBe("customStopTrigger");
  });

  it("scripted: a byte token of 🦙 alone is U+FFFD, the whole reply decodes cleanly", async () => {
    const llamaBytes = [0xf0, 0x9f, 0xa6, 0x99].map(byteTokenId) as Token[];
    expect(scripted.tokenize("🦙")).toEqual(llamaBytes);
    for (const t of llamaBytes) expect(scripted.detokenize([t])).toBe("\uFFFD");
    expect(scripted.detokenize(llamaBytes)).toBe("🦙");
    const c = await complete(scripted, context, "Once upon a time", { temperature: 0 });
    expect(scripted.detokenize(c.tokens)).toBe(STORY);
    // The reply's pieces are reachable by llama.cpp's tokenizer, so the text tokenizes back to them.
    expect(scripted.tokenize(STORY)).toEqual(c.tokens);
    expect(scripted.tokenize("Let us sing. Sing").at(-1)).toBe(scripted.tokenize(" Sing")[0]);
    expect(scripted.tokens.eos).toBe(2);
    // node-llama-cpp's own sanity check (a tokenize/detokenize round trip, among others).
    expect(scripted.getWarnings()).toEqual([]);
    expect(demo.getWarnings()).toEqual([]);
    expect(scripted.tokenize("<|im_end|>", true)).toEqual([IM_END_ID]);
  });
});
