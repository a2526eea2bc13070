// Twins of DeepSeek R1 (its Qwen distill's template, as llama.cpp tests it) and DeepSeek V3.1: their
// real chat templates on the project's vocabulary, scripted weights writing DeepSeek's own calls.
// Neither template shows the model the offered tools: the sidecar lists them in the system message
// ("You can call these tools …"), whose " tools" is the tools mode's trigger.
import type { ContextualSpec } from "../scripted.js";
import { llamaTemplate, QWEN3_CODER_ANSWER, TWIN_REASONING, twoCalls } from "./parts.js";

const T = "｜tool▁";
/** DeepSeek's special tokens, user-defined tokens here as in its GGUFs. */
const DEEPSEEK_TOKENS = [
  "<｜begin▁of▁sentence｜>",
  "<｜end▁of▁sentence｜>",
  "<｜User｜>",
  "<｜Assistant｜>",
  "<think>",
  "</think>",
  `<${T}calls▁begin｜>`,
  `<${T}calls▁end｜>`,
  `<${T}call▁begin｜>`,
  `<${T}call▁end｜>`,
  `<${T}sep｜>`,
  `<${T}outputs▁begin｜>`,
  `<${T}outputs▁end｜>`,
  `<${T}output▁begin｜>`,
  `<${T}output▁end｜>`,
];
const END = "<｜end▁of▁sentence｜>";

/** DeepSeek R1's call of get_weather: its type, the name, then the arguments in a JSON code block (up to the city). */
const r1Call = (city: string): string[] => [
  `<${T}call▁begin｜>`,
  "function",
  `<${T}sep｜>`,
  "get_weather",
  "\n",
  "```json",
  "\n",
  '{"',
  "city",
  `":"${city}"}`,
];
const R1_CALL_END = ["\n", "```", `<${T}call▁end｜>`];
export const DEEPSEEK_R1_CALL_PIECES = [`<${T}calls▁begin｜>`, ...r1Call("Tokyo"), ...R1_CALL_END, `<${T}calls▁end｜>`];

/** DeepSeek R1's two calls, a line apart in one block. */
const R1_TWO_CALLS = twoCalls({
  after: ["\n", "</think>"],
  lead: [`<${T}calls▁begin｜>`],
  call: r1Call,
  callEnd: R1_CALL_END,
  between: ["\n"],
  close: [`<${T}calls▁end｜>`],
  end: END,
});

/**
 * A twin of DeepSeek R1 (`deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja`): the prompt ends
 * `<think>\n`, closed at once (`</think>`) unless `enable_thinking` is true. Closed → "Hi there", or
 * DEEPSEEK_R1_CALL_PIECES with tools offered; open → "Checking." `</think>`, then the same.
 * After a tool result the template adds no assistant header: the prompt ends `<｜tool▁outputs▁end｜>`
 * and the model goes on with QWEN3_CODER_ANSWER. Each ends with `<｜end▁of▁sentence｜>`.
 */
export function deepseekR1Spec(): ContextualSpec {
  const think = [TWIN_REASONING, "</think>"];
  return {
    name: "deepseek-r1",
    chatTemplate: llamaTemplate("deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja"),
    architecture: "llama",
    userDefined: DEEPSEEK_TOKENS,
    modes: [
      { name: "tools", trigger: " tools" },
      ...R1_TWO_CALLS.modes,
      { name: "result", trigger: `<${T}outputs▁begin｜>` },
    ],
    scripts: [
      ...R1_TWO_CALLS.scripts,
      { after: ["\n", "</think>"], reply: ["Hi", " there"], end: END },
      { mode: "tools", after: ["\n", "</think>"], reply: DEEPSEEK_R1_CALL_PIECES, end: END },
      { after: ["<think>", "\n"], reply: [...think, "Hi", " there"], end: END },
      { mode: "tools", after: ["<think>", "\n"], reply: [...think, ...DEEPSEEK_R1_CALL_PIECES], end: END },
      { mode: "result", after: [`<${T}outputs▁end｜>`], reply: QWEN3_CODER_ANSWER, end: END },
    ],
  };
}

/** DeepSeek V3.1's call of get_weather: the name, `<｜tool▁sep｜>`, the JSON arguments (up to the city). */
const v31Call = (city: string): string[] => [
  `<${T}call▁begin｜>`,
  "get_weather",
  `<${T}sep｜>`,
  '{"',
  "city",
  `":"${city}"}`,
];
export const DEEPSEEK_V31_CALL_PIECES = [
  `<${T}calls▁begin｜>`,
  ...v31Call("Tokyo"),
  `<${T}call▁end｜>`,
  `<${T}calls▁end｜>`,
];

/** DeepSeek V3.1's two calls, one after the other in one block. */
const V31_TWO_CALLS = twoCalls({
  after: ["<think>", "</think>"],
  lead: [`<${T}calls▁begin｜>`],
  call: v31Call,
  callEnd: [`<${T}call▁end｜>`],
  between: [],
  close: [`<${T}calls▁end｜>`],
  end: END,
});

/**
 * A twin of DeepSeek V3.1 (`deepseek-ai-DeepSeek-V3.1.jinja`): the prompt ends `<think></think>`, or
 * `<think>` with `enable_thinking` true (the model then reasons "Checking." and closes it). Then
 * "Hi there", or DEEPSEEK_V31_CALL_PIECES with tools offered. After a tool result the prompt ends
 * `<｜tool▁output▁end｜>` and the model goes on with QWEN3_CODER_ANSWER. Each ends with
 * `<｜end▁of▁sentence｜>`.
 */
export function deepseekV31Spec(): ContextualSpec {
  return {
    name: "deepseek-v3.1",
    chatTemplate: llamaTemplate("deepseek-ai-DeepSeek-V3.1.jinja"),
    architecture: "llama",
    userDefined: DEEPSEEK_TOKENS,
    modes: [
      { name: "tools", trigger: " tools" },
      ...V31_TWO_CALLS.modes,
      { name: "result", trigger: `<${T}output▁begin｜>` },
    ],
    scripts: [
      ...V31_TWO_CALLS.scripts,
      { after: ["<think>", "</think>"], reply: ["Hi", " there"], end: END },
      { mode: "tools", after: ["<think>", "</think>"], reply: DEEPSEEK_V31_CALL_PIECES, end: END },
      { after: ["<｜Assistant｜>", "<think>"], reply: [TWIN_REASONING, "</think>", "Hi", " there"], end: END },
      {
        mode: "tools",
        after: ["<｜Assistant｜>", "<think>"],
        reply: [TWIN_REASONING, "</think>", ...DEEPSEEK_V31_CALL_PIECES],
        end: END,
      },
      { mode: "result", after: [`<${T}output▁end｜>`], reply: QWEN3_CODER_ANSWER, end: END },
    ],
  };
}
