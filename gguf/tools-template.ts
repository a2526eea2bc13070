// The `tools` test model's chat template, written for this project: ChatML with the tool-call
// convention of Qwen-style models. Offered tools are listed in the system turn between
// `<tools></tools>`, one JSON signature a line; the assistant calls one as
// `<tool_call>\n{"name": …, "arguments": {…}}\n</tool_call>` (several calls one a line); results
// come back in a user turn, each as `\n<tool_response>\n…\n</tool_response>`; reasoning is
// `<think>\n…\n</think>\n\n` before the answer.
//
// It renders histories exactly as node-llama-cpp's QwenChatWrapper does (its default settings: no
// line break before a call, `\n` between calls, results JSON-encoded), so `resolveChatWrapper`
// picks that wrapper (on a Qwen architecture) instead of the generic Jinja one.
// THINKING_TEMPLATE adds Qwen3's thinking switch: with `enable_thinking` false, the assistant's turn
// opens with an empty `<think>\n\n</think>\n\n`, so the reply starts after its reasoning.
const SYSTEM = "<|im_start|>system\n";
const END = "<|im_end|>\n";

export const TOOLS_TEMPLATE = [
  // The system turn: the system message, then the tools and how to call them.
  "{% set has_system = messages | length > 0 and messages[0].role == 'system' %}",
  "{% if tools %}",
  `${SYSTEM}{% if has_system %}{{ messages[0].content }}\n\n{% endif %}`,
  "# Tools\n\nThese functions are available; each signature below sits inside <tools></tools>:\n<tools>",
  "{% for tool in tools %}\n{{ tool | tojson }}{% endfor %}\n</tools>\n\n",
  "To use one, reply with its name and an arguments object inside <tool_call></tool_call>:\n",
  `<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>${END}`,
  `{% elif has_system %}${SYSTEM}{{ messages[0].content }}${END}`,
  "{% endif %}",
  // The turns.
  "{% for message in messages %}",
  "{% if message.role == 'user' or (message.role == 'system' and not loop.first) %}",
  `<|im_start|>{{ message.role }}\n{{ message.content }}${END}`,
  "{% elif message.role == 'assistant' %}",
  "<|im_start|>assistant\n",
  "{% if message.reasoning_content %}<think>\n{{ message.reasoning_content }}\n</think>\n\n{% endif %}",
  "{% if message.content %}{{ message.content }}{% endif %}",
  "{% if message.tool_calls %}{% for call in message.tool_calls %}",
  "{% if call.function %}{% set call = call.function %}{% endif %}",
  "{% if not loop.first %}\n{% endif %}",
  '<tool_call>\n{"name": "{{ call.name }}", "arguments": ',
  "{% if call.arguments is string %}{{ call.arguments }}{% else %}{{ call.arguments | tojson }}{% endif %}",
  "}\n</tool_call>",
  "{% endfor %}{% endif %}",
  END,
  "{% elif message.role == 'tool' %}",
  "{% if loop.first or loop.previtem.role != 'tool' %}<|im_start|>user{% endif %}",
  "\n<tool_response>\n{{ message.content }}\n</tool_response>",
  `{% if loop.last or loop.nextitem.role != 'tool' %}${END}{% endif %}`,
  "{% endif %}",
  "{% endfor %}",
  "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}",
  // The Jinja engines of transformers and node-llama-cpp drop a newline right after a block tag
  // (trim_blocks): such newlines are written as expressions.
]
  .join("")
  .replaceAll("%}\n", "%}{{ '\\n' }}");

const GENERATION_PROMPT = "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";
const SWITCHED_GENERATION_PROMPT =
  "{% if add_generation_prompt %}<|im_start|>assistant\n" +
  "{% if enable_thinking is defined and enable_thinking is false %}<think>\n\n</think>\n\n{% endif %}{% endif %}";
if (!TOOLS_TEMPLATE.endsWith(GENERATION_PROMPT))
  throw new Error("the tools template no longer ends with its generation prompt");

/** The tools template with Qwen3's thinking switch at its generation prompt (the `thinking` model's). */
export const THINKING_TEMPLATE = TOOLS_TEMPLATE.slice(0, -GENERATION_PROMPT.length) + SWITCHED_GENERATION_PROMPT;
