// The `agent` scripted model (gguf/models.ts, AGENT_SPEC) for the coding-agent tests: its scripts
// by mode, the RoPE pairs its previous-token head needs for its 131,072-token context, and through
// real llama.cpp (node-llama-cpp's Qwen wrapper) the answer to each, the compaction summary included. The agents' own
// long prompts
// (35,000–45,000 tokens) go through it in test/e2e/agents.test.ts.
import type { ChatHistoryItem, ChatModelFunctions, ChatWrapper, LlamaContext, LlamaModel, Token } from "node-llama-cpp";
import { loadChatModel, type ChatModel } from "./support/chat-model.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { byteTokenId, byteTokenPiece } from "../gguf/llama.js";
import { AGENT_SPEC, AGENT_SUMMARY, ensureModels } from "../gguf/models.js";
import { buildContextualModel, previousPairs } from "../gguf/scripted.js";

const READ_PIECES = [
  "<tool_call>",
  "<0x0A>",
  '{"name": "',
  "Read",
  '", "arguments": ',
  '{"file_path":"',
  'notes.txt","offset":1,',
  '"limit":5,"pages":"",',
  '"allow_large":false}',
  "}",
  "<0x0A>",
  "</tool_call>",
  "<|im_end|>",
];
const GOAL_PIECES = [
  "<tool_call>",
  "<0x0A>",
  '{"name": "',
  "get_goal",
  '", "arguments": ',
  "{}",
  "}",
  "<0x0A>",
  "</tool_call>",
  "<|im_end|>",
];
const RESULT_PIECES = ["Done,", " the", " tool", " call", " worked.", "<|im_end|>"];
const PLAIN_PIECES = ["Hi", " there", "<|im_end|>"];
// AGENT_SUMMARY: " recapped" is a piece of its own, the trigger of the answer after a compaction.
const SUMMARY_PIECES = [
  ...[
    "The",
    " session",
    " was",
    " recapped",
    " to",
    " go",
    " on:",
    " the",
    " user",
    " asked",
    " for",
    " the",
    " current",
    " goal,",
  ],
  ...[" and", " get_", "goal", " answered", " that", " there", " is", " none.", "<|im_end|>"],
];

/** The previous-token head's score at distance δ, over the peak's: Σ cos((δ − 1)/2^i) − pairs. */
function scoreBelowPeak(pairs: number, delta: number): number {
  let score = 0;
  for (let i = 0; i < pairs; i++) score += Math.cos((delta - 1) / 2 ** i) - 1;
  return score;
}

function runnerUp(pairs: number, context: number): number {
  let best = -Infinity;
  for (let delta = 2; delta <= context; delta++) best = Math.max(best, scoreBelowPeak(pairs, delta));
  return best;
}

describe("the agent model's build", () => {
  it("gives the previous-token head enough RoPE pairs for its context", () => {
    expect([previousPairs(4096), previousPairs(131_072)]).toEqual([13, 16]);
    // 13 pairs line up again 25,737 positions back; 16 keep every other position of a 131,072
    // context at least 0.46 (of 1 per pair) below the previous one, as 13 do within 4,096.
    expect(scoreBelowPeak(13, 25_737)).toBeGreaterThan(-0.01);
    expect(runnerUp(13, 4096)).toBeLessThan(-0.46);
    expect(runnerUp(16, 131_072)).toBeLessThan(-0.46);
  });

  it(
    "scripts a plain answer, the Read call, the get_goal call, the answer after a result or a compaction, and the " +
      "summary, by mode",
    () => {
      const built = buildContextualModel(AGENT_SPEC);
      expect(built.shape.contextLength).toBe(131_072);
      expect(built.scripts.map((s) => [s.mode, s.pieces])).toEqual([
        [undefined, PLAIN_PIECES],
        ["read", READ_PIECES],
        ["goal", GOAL_PIECES],
        ["result", RESULT_PIECES],
        ["compacted", RESULT_PIECES],
        ["summary", SUMMARY_PIECES],
      ]);
    },
  );
});

const READ_SCHEMA = {
  type: "object",
  properties: {
    file_path: { type: "string" },
    offset: { type: "integer" },
    limit: { type: "integer" },
    pages: { type: "string" },
    allow_large: { type: "boolean" },
  },
  required: ["file_path"],
} as const;
const FUNCTIONS: ChatModelFunctions = {
  Read: { description: "Reads a file from the local filesystem.", params: READ_SCHEMA },
  get_goal: { description: "Get the current goal for this thread.", params: { type: "object", properties: {} } },
};

describe("the agent model in llama.cpp", () => {
  let loaded: ChatModel;
  let model: LlamaModel;
  let context: LlamaContext;
  let wrapper: ChatWrapper;

  beforeAll(async () => {
    const { agent } = await ensureModels("models", ["agent"]);
    loaded = await loadChatModel(agent, { threads: 2, sequences: 1, contextSize: 4096 });
    ({ model, context, wrapper } = loaded);
  }, 60_000);
  afterAll(() => loaded?.dispose());

  const pieceOf = (t: Token): string =>
    t >= byteTokenId(0) && t <= byteTokenId(0xff) ? byteTokenPiece(t - byteTokenId(0)) : model.detokenize([t], true);

  /** At temperature 1 (what the agents get by default), seeded. */
  async function reply(chatHistory: ChatHistoryItem[]): Promise<{ prompt: number; pieces: string[] }> {
    const tokens = wrapper
      .generateContextState({
        chatHistory: [...chatHistory, { type: "model", response: [] }],
        availableFunctions: FUNCTIONS,
      })
      .contextText.tokenize(model.tokenizer);
    const sequence = context.getSequence();
    try {
      const out: Token[] = [];
      for await (const token of sequence.evaluate(tokens, { temperature: 1, seed: 7, yieldEogToken: true })) {
        out.push(token);
        if (model.isEogToken(token) || out.length >= 32) break;
      }
      return { prompt: tokens.length, pieces: out.map(pieceOf) };
    } finally {
      sequence.dispose();
    }
  }

  it("answers plainly although tools are offered, and calls Read or get_goal on their triggers", async () => {
    expect(wrapper.wrapperName).toBe("Qwen");
    expect((await reply([{ type: "user", text: "Say hi" }])).pieces).toEqual(PLAIN_PIECES);
    expect((await reply([{ type: "user", text: "Read notes.txt" }])).pieces).toEqual(READ_PIECES);
    expect((await reply([{ type: "user", text: "What is the current goal?" }])).pieces).toEqual(GOAL_PIECES);
    const result: ChatHistoryItem = {
      type: "model",
      response: [{ type: "functionCall", name: "get_goal", params: {}, result: { goal: null } }],
    };
    expect((await reply([{ type: "user", text: "What is the current goal?" }, result])).pieces).toEqual(RESULT_PIECES);
  });

  it(
    "writes its summary on a compaction prompt (' CHECKPOINT', over a tool result); answers a compacted session (' " +
      "recapped', over ' goal?')",
    async () => {
      const result: ChatHistoryItem = {
        type: "model",
        response: [{ type: "functionCall", name: "get_goal", params: {}, result: { goal: null } }],
      };
      const compact: ChatHistoryItem = {
        type: "user",
        text: "CONTEXT CHECKPOINT. Write a handoff summary of this conversation.",
      };
      expect((await reply([{ type: "user", text: "What is the current goal?" }, result, compact])).pieces).toEqual(
        SUMMARY_PIECES,
      );
      const summary: ChatHistoryItem = { type: "user", text: AGENT_SUMMARY };
      expect((await reply([{ type: "user", text: "What is the current goal?" }, summary])).pieces).toEqual(
        RESULT_PIECES,
      );
    },
  );
});
