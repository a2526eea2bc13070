// The tool-call syntaxes of the model families, as data. A model's syntax is the first of these
// that reads its own template's renderings of probe calls back exactly (analysis.ts): the template
// is the judge, this table only the candidates. Patterns: pattern.ts (`«index»`, `«id»`, `«word»`,
// `«key»`, `«skip»`; a run of whitespace matches any whitespace).
import { patterns } from "./pattern.js";
import type { ArgumentsSyntax, CallIdForm, CallSyntax } from "./reply-syntax.js";

interface Spec {
  readonly open?: readonly string[];
  readonly callOpen: readonly string[];
  readonly nameEnd: readonly string[];
  readonly arguments?: ArgumentsSyntax;
  readonly callClose: readonly string[];
  readonly between?: readonly string[];
  readonly close?: readonly string[];
  readonly parallel?: boolean;
  readonly ids?: CallIdForm;
}

function family(name: string, spec: Spec): CallSyntax {
  return {
    family: name,
    open: patterns(...(spec.open ?? [])),
    callOpen: patterns(...spec.callOpen),
    nameEnd: patterns(...spec.nameEnd),
    arguments: spec.arguments ?? { kind: "json" },
    callClose: patterns(...spec.callClose),
    between: patterns(...(spec.between ?? [""])),
    close: patterns(...(spec.close ?? [])),
    parallel: spec.parallel ?? true,
    ...(spec.ids !== undefined ? { ids: spec.ids } : {}),
  };
}

const tagged = (
  keyOpen: string,
  keyClose: string,
  valueClose: string,
  stringWords?: string[],
): Extract<ArgumentsSyntax, { kind: "tagged" }> => ({
  kind: "tagged",
  keyOpen: patterns(keyOpen),
  keyClose: patterns(keyClose),
  valueClose: patterns(valueClose),
  ...(stringWords !== undefined ? { stringWords } : {}),
});

/** A JSON object per call, `{"name": …, "arguments": …}`, in a block (`[` … `]` between markers). */
const jsonBlock = (name: string, open: string, close: string, extra: Partial<Spec> = {}): CallSyntax =>
  family(name, {
    open: [open],
    callOpen: ['{"name": "'],
    nameEnd: ['", "arguments": '],
    callClose: ["}"],
    between: [", "],
    close: [close],
    ...extra,
  });

/** Qwen3-Coder's arguments, one `<parameter=…>` each, inside `<function=…>` (`tag` names the call's outer tag). */
const functionTags = (name: string, tag: string): CallSyntax =>
  family(name, {
    callOpen: [`<${tag}>\n<function=`],
    nameEnd: [">\n"],
    arguments: tagged("<parameter=", ">\n", "\n</parameter>\n"),
    callClose: [`</function>\n</${tag}>`],
    between: ["\n"],
  });

/**
 * GLM's arguments, `<arg_key>` / `<arg_value>` pairs after the name (`t` marks every tag, as Hunyuan's `:opensource`).
 */
const argKeys = (name: string, t = "", extra: Partial<Spec> = {}): CallSyntax =>
  family(name, {
    callOpen: [`<tool_call${t}>`],
    nameEnd: ["\n"],
    arguments: tagged(`<arg_key${t}>`, `</arg_key${t}>\n<arg_value${t}>`, `</arg_value${t}>\n`),
    callClose: [`</tool_call${t}>`],
    between: ["\n"],
    ...extra,
  });

/** `<invoke name="…">` with `<parameter name="…">` arguments, in a block (MiniMax, DeepSeek's DSML, Muse). */
const invokeBlock = (
  name: string,
  p: string,
  open: string,
  close: string,
  extra: Partial<Spec> = {},
  stringWords?: string[],
): CallSyntax =>
  family(name, {
    open: [open],
    callOpen: [`<${p}invoke name="`],
    nameEnd: ['">\n'],
    arguments: tagged(
      `<${p}parameter name="`,
      stringWords === undefined ? '">' : '" string="«word»">',
      `</${p}parameter>\n`,
      stringWords,
    ),
    callClose: [`</${p}invoke>`],
    between: ["\n"],
    close: [close],
    ...extra,
  });

const DS = "｜tool▁";

/** The candidates, most specific first (a looser syntax later may read a stricter one's text too). */
export const CALL_FAMILIES: readonly CallSyntax[] = [
  family("hermes", {
    callOpen: ['<tool_call>\n{"name": "'],
    nameEnd: ['", "arguments": '],
    callClose: ["}\n</tool_call>"],
    between: ["\n"],
  }),
  functionTags("qwen3-coder", "tool_call"),
  argKeys("glm"),
  argKeys("hunyuan", ":opensource", {
    open: ["<tool_calls:opensource>\n"],
    nameEnd: ["<tool_sep:opensource>\n"],
    close: ["\n</tool_calls:opensource>"],
  }),
  invokeBlock("minimax-m2", "", "<minimax:tool_call>\n", "\n</minimax:tool_call>"),
  invokeBlock("deepseek-v3.2", "｜DSML｜", "<｜DSML｜function_calls>\n", "\n</｜DSML｜function_calls>", {}, ["true"]),
  invokeBlock("deepseek-v4", "｜DSML｜", "<｜DSML｜tool_calls>\n", "\n</｜DSML｜tool_calls>", {}, ["true"]),
  family("muse", {
    // One call a message: `to=<name><|message|>` and the block around each call, messages apart by `<|eom|>`.
    callOpen: ['to=«id»<|message|><atem:function_calls>\n<atem:invoke name="'],
    nameEnd: ['">\n'],
    arguments: tagged('<atem:parameter name="', '">', "</atem:parameter>\n"),
    callClose: ["</atem:invoke>\n</atem:function_calls>"],
    between: ["<|eom|><|start|>assistant "],
  }),
  family("minimax-m3", {
    open: ["]<]minimax[>[<tool_call>\n"],
    callOpen: [']<]minimax[>[<invoke name="'],
    nameEnd: ['">'],
    arguments: { ...tagged("]<]minimax[>[<", ">", "]<]minimax[>[</«key»>"), nested: "]<]minimax[>[" },
    callClose: ["]<]minimax[>[</invoke>\n"],
    close: ["]<]minimax[>[</tool_call>"],
  }),
  family("kimi-k3", {
    open: ["<|open|>tools<|sep|>"],
    callOpen: ['<|open|>call tool="'],
    nameEnd: ['" index="«index»"<|sep|>'],
    arguments: tagged('<|open|>argument key="', '" type="«word»"<|sep|>', "<|close|>argument<|sep|>", ["string"]),
    callClose: ["<|close|>call<|sep|>"],
    close: ["<|close|>tools<|sep|>"],
  }),
  family("minicpm", {
    callOpen: ['<function name="'],
    nameEnd: ['">'],
    arguments: tagged('<param name="', '">', "</param>"),
    callClose: ["</function>"],
    between: ["\n"],
  }),
  family("mistral", { callOpen: ["[TOOL_CALLS]"], nameEnd: ["[ARGS]", "[CALL_ID]«id»[ARGS]"], callClose: [""] }),
  family("kimi-k2", {
    open: ["<|tool_calls_section_begin|>"],
    callOpen: ["<|tool_call_begin|>functions."],
    nameEnd: [":«index»<|tool_call_argument_begin|>"],
    callClose: ["<|tool_call_end|>"],
    close: ["<|tool_calls_section_end|>"],
    ids: "functions-index",
  }),
  family("deepseek-v3.1", {
    open: [`<${DS}calls▁begin｜>`],
    callOpen: [`<${DS}call▁begin｜>`],
    nameEnd: [`<${DS}sep｜>`],
    callClose: [`<${DS}call▁end｜>`],
    close: [`<${DS}calls▁end｜>`],
  }),
  family("deepseek-r1", {
    open: [`<${DS}calls▁begin｜>`],
    callOpen: [`<${DS}call▁begin｜>function<${DS}sep｜>`],
    nameEnd: ["\n```json\n"],
    callClose: [`\n\`\`\`<${DS}call▁end｜>`],
    between: ["\n"],
    close: [`<${DS}calls▁end｜>`],
  }),
  family("solar", {
    open: ["<|tool_calls|>"],
    callOpen: ["<|tool_call:begin|>«id»<|tool_call:name|>"],
    nameEnd: ["<|tool_call:args|>"],
    callClose: ["<|tool_call:end|>"],
    close: ["<|calls|>"],
  }),
  family("harmony", {
    callOpen: [
      "<|start|>assistant<|channel|>commentary to=functions.",
      "<|channel|>commentary to=functions.",
      "<|start|>assistant to=functions.",
      " to=functions.",
    ],
    nameEnd: [" <|constrain|>json<|message|>", "<|channel|>commentary json<|message|>", "«skip»<|message|>"],
    callClose: ["<|call|>", ""],
    parallel: false,
  }),
  family("gemma4", {
    callOpen: ["<|tool_call>call:"],
    nameEnd: [""],
    arguments: { kind: "gemma" },
    callClose: ["<tool_call|>"],
  }),
  family("functionary-v3.1", { callOpen: ["<function="], nameEnd: [">"], callClose: ["</function>"] }),
  family("minimax-m1", {
    open: ["<tool_calls>\n"],
    callOpen: ['{"name": "'],
    nameEnd: ['", "arguments": '],
    callClose: ["}"],
    between: ["\n"],
    close: ["\n</tool_calls>"],
  }),
  jsonBlock("apriel", "<tool_calls>[", "]</tool_calls>"),
  jsonBlock("firefunction", "functools[", "]"),
  family("command-r-plus", {
    open: ["Action:\n```json\n[\n    "],
    callOpen: ['{\n        "tool_name": "'],
    nameEnd: ['",\n        "parameters": '],
    callClose: ["\n    }"],
    between: [",\n    "],
    close: ["\n]```"],
  }),
  jsonBlock("nemotron", "<TOOLCALL>[", "]</TOOLCALL>"),
  jsonBlock("mistral-nemo", "[TOOL_CALLS][", "]", { callClose: [', "id": "«id»"}', "}"] }),
  jsonBlock("apertus", "<|tools_prefix|>[", "]<|tools_suffix|>", { callOpen: ['{"'], nameEnd: ['": '] }),
  jsonBlock("command-r", "<|START_ACTION|>[\n    ", "\n]<|END_ACTION|>", {
    callOpen: ['{"tool_call_id": "«index»", "tool_name": "'],
    nameEnd: ['", "parameters": '],
    between: [",\n    "],
  }),
  family("gigachat", {
    callOpen: ['<|function_call|>{"name": "', '<|message_sep|>\n\nfunction call<|role_sep|>\n{"name": "'],
    nameEnd: ['", "arguments": '],
    callClose: ["}"],
    parallel: false,
  }),
  family("llama3", {
    callOpen: ['{"name": "', '{"type": "function", "name": "'],
    nameEnd: ['", "parameters": ', '", "arguments": '],
    callClose: ["}"],
    parallel: false,
  }),
];
