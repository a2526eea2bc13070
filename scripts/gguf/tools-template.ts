// The `tools` test model's chat template: ChatML with the tool-call convention of Qwen-style
// models (tools listed in the system turn, calls as `<tool_call>` JSON, results in a user turn as
// `<tool_response>`, reasoning in `<think>`). Written for this project; node-llama-cpp's Jinja
// wrapper reads the call syntax from it by rendering.
export const TOOLS_TEMPLATE = [
  "{%- if tools %}<|im_start|>system\n",
  "{% if messages[0]['role'] == 'system' %}{{ messages[0]['content'] }}\n\n{% endif %}",
  "Tools you can call, one JSON signature per line:\n<tools>\n",
  "{% for tool in tools %}{{ tool | tojson }}\n{% endfor %}</tools>\n",
  'To call one, reply with <tool_call>\n{"name": <name>, "arguments": <arguments object>}\n</tool_call><|im_end|>\n',
  "{% elif messages[0]['role'] == 'system' %}<|im_start|>system\n{{ messages[0]['content'] }}<|im_end|>\n{% endif %}",
  "{%- for message in messages %}",
  "{%- if message.role == 'user' or (message.role == 'system' and not loop.first) %}",
  "<|im_start|>{{ message.role }}\n{{ message.content }}<|im_end|>\n",
  "{% elif message.role == 'assistant' %}<|im_start|>assistant\n",
  "{% if message.reasoning_content %}<think>{{ message.reasoning_content }}</think>{% endif %}",
  "{% if message.content %}{{ message.content }}{% endif %}",
  "{%- if message.tool_calls %}{% for tool_call in message.tool_calls %}",
  "{% if tool_call.function %}{% set tool_call = tool_call.function %}{% endif %}",
  "{% if not loop.first or message.content %}\n{% endif %}",
  '<tool_call>\n{"name": "{{ tool_call.name }}", "arguments": {{ tool_call.arguments | tojson }}}\n</tool_call>',
  "{% endfor %}{% endif %}<|im_end|>\n",
  "{% elif message.role == 'tool' %}{% if loop.first or loop.previtem.role != 'tool' %}<|im_start|>user{% endif %}",
  "\n<tool_response>\n{{ message.content }}\n</tool_response>",
  "{% if loop.last or loop.nextitem.role != 'tool' %}<|im_end|>\n{% endif %}",
  "{% endif %}",
  "{%- endfor %}",
  "{%- if add_generation_prompt %}<|im_start|>assistant\n{% endif %}",
].join("");
