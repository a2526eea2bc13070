// A twin of Kimi K2: its real chat template on the project's vocabulary, scripted weights writing
// Kimi's own calls, whose header names the call `functions.<name>:<index>`.
import type { ContextualSpec } from "../scripted.js";
import { llamaTemplate, QWEN3_CODER_ANSWER, TWO_CALLS_CITIES, twoCalls } from "./parts.js";

/** Kimi K2's call: a section of calls, each `functions.<name>:<index>` then its JSON arguments. */
export const KIMI_CALL_PIECES = [
  "<|tool_calls_section_begin|>",
  "<|tool_call_begin|>",
  "functions.",
  "get_weather",
  ":0",
  "<|tool_call_argument_begin|>",
  '{"',
  "city",
  '":"Tokyo"}',
  "<|tool_call_end|>",
  "<|tool_calls_section_end|>",
];

/** Kimi K2's two calls in one section, numbered from 0. */
const KIMI_TWO_CALLS = twoCalls({
  after: ["assistant", "<|im_middle|>"],
  lead: ["<|tool_calls_section_begin|>"],
  call: (city) => [
    "<|tool_call_begin|>",
    "functions.",
    "get_weather",
    `:${TWO_CALLS_CITIES.indexOf(city as never)}`,
    "<|tool_call_argument_begin|>",
    '{"',
    "city",
    `":"${city}"}`,
  ],
  callEnd: ["<|tool_call_end|>"],
  between: [],
  close: ["<|tool_calls_section_end|>"],
  end: "im_end",
});

/**
 * A twin of Kimi K2 (`Kimi-K2-Instruct.jinja`): the prompt ends `<|im_assistant|>assistant<|im_middle|>`.
 * Tools offered (the template's `tool_declare` system turn) → KIMI_CALL_PIECES; a tool result (its
 * `<|im_system|>tool` turn, `## Return of …`, outranking) → QWEN3_CODER_ANSWER; otherwise "Hi there";
 * each then `<|im_end|>`.
 */
export function kimiK2Spec(): ContextualSpec {
  return {
    name: "kimi-k2",
    chatTemplate: llamaTemplate("Kimi-K2-Instruct.jinja"),
    architecture: "llama",
    userDefined: [
      "<|im_system|>",
      "<|im_user|>",
      "<|im_assistant|>",
      "<|im_middle|>",
      "<|tool_calls_section_begin|>",
      "<|tool_calls_section_end|>",
      "<|tool_call_begin|>",
      "<|tool_call_argument_begin|>",
      "<|tool_call_end|>",
    ],
    modes: [
      { name: "tools", trigger: "tool_declare" },
      ...KIMI_TWO_CALLS.modes,
      { name: "result", trigger: "## Return" },
    ],
    scripts: [
      ...KIMI_TWO_CALLS.scripts,
      { after: ["assistant", "<|im_middle|>"], reply: ["Hi", " there"], end: "im_end" },
      { mode: "tools", after: ["assistant", "<|im_middle|>"], reply: KIMI_CALL_PIECES, end: "im_end" },
      { mode: "result", after: ["assistant", "<|im_middle|>"], reply: QWEN3_CODER_ANSWER, end: "im_end" },
    ],
  };
}
