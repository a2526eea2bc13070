// The reply parser on its own: the syntax learned from the `tools` model's template (Qwen-style
// markers) and other families' syntaxes, fed whole and at every possible cut, give the same parts.
import { describe, expect, it } from "vitest";
import { TOOLS_TEMPLATE } from "../../gguf/tools-template.js";
import { analyseTemplate } from "../../sidecar/engine/syntax/analysis.js";
import { CALL_FAMILIES } from "../../sidecar/engine/syntax/families.js";
import { ReplyParser, type CallPiece, type ReplyParts } from "../../sidecar/engine/syntax/reply-parser.js";
import type { ReplySyntax } from "../../sidecar/engine/syntax/reply-syntax.js";
import { schemaTypes } from "../../sidecar/engine/syntax/read-back.js";

const qwen = analyseTemplate(TOOLS_TEMPLATE, { bos: "", eos: "" });
/** A family's call syntax alone (no reasoning, no answer markers). */
const familySyntax = (name: string): ReplySyntax => ({
  reasoning: undefined,
  strip: [],
  end: [],
  calls: CALL_FAMILIES.find((f) => f.family === name),
  refused: undefined,
});
const TOOLS = [
  {
    name: "get_weather",
    parameters: { type: "object", properties: { city: { type: "string" }, days: { type: "integer" } } },
  },
  { name: "get_time", parameters: { type: "object", properties: { zone: { type: "string" } } } },
];

interface Parsed {
  reasoning: string;
  content: string;
  calls: { id: string; name: string; arguments: string }[];
  completed: number;
}

function parse(
  syntax: ReplySyntax,
  fragments: readonly string[],
  options: { tools?: boolean; startInReasoning?: boolean } = {},
): Parsed {
  let n = 0;
  const parser = new ReplyParser({
    syntax,
    tools: options.tools ?? true,
    argumentTypes: schemaTypes(TOOLS),
    startInReasoning: options.startInReasoning ?? false,
    newCallId: () => `call_${n++}`,
  });
  const out: Parsed = { reasoning: "", content: "", calls: [], completed: 0 };
  const add = (parts: ReplyParts): void => {
    out.reasoning += parts.reasoning;
    out.content += parts.content;
    for (const piece of parts.calls as CallPiece[]) {
      if (piece.id !== "") {
        expect(piece.arguments).toBe("");
        expect(piece.index).toBe(out.calls.length);
        out.calls.push({ id: piece.id, name: piece.name, arguments: "" });
      } else {
        const call = out.calls[piece.index];
        if (call === undefined) throw new Error("argument text before its call");
        call.arguments += piece.arguments;
      }
    }
  };
  for (const fragment of fragments) add(parser.push(fragment));
  add(parser.flush());
  out.completed = parser.completedCalls;
  return out;
}

/** The text whole, one character at a time, and cut in two at every position. */
function cuts(text: string): string[][] {
  const chars = [...text];
  const out: string[][] = [[text], chars];
  for (let i = 1; i < chars.length; i++) out.push([chars.slice(0, i).join(""), chars.slice(i).join("")]);
  return out;
}

function expectSameAtEveryCut(
  syntax: ReplySyntax,
  text: string,
  expected: Parsed,
  options?: { tools?: boolean; startInReasoning?: boolean },
): void {
  for (const fragments of cuts(text))
    expect(parse(syntax, fragments, options), JSON.stringify(fragments)).toEqual(expected);
}

describe("ReplyParser", () => {
  it("reasoning, then content (Qwen <think>)", () => {
    expectSameAtEveryCut(qwen, "<think>\nChecking the forecast.\n</think>\n\nIt is sunny.", {
      reasoning: "Checking the forecast.",
      content: "It is sunny.",
      calls: [],
      completed: 0,
    });
  });

  it("a reply's leading whitespace is dropped (GLM opens with a newline before <think>)", () => {
    expectSameAtEveryCut(qwen, "\n<think>Checking.</think>\nHi there", {
      reasoning: "Checking.",
      content: "Hi there",
      calls: [],
      completed: 0,
    });
  });

  it("a reply that starts inside reasoning (the prompt opened it)", () => {
    expectSameAtEveryCut(
      qwen,
      "Hmm.\n</think>\nYes.",
      { reasoning: "Hmm.", content: "Yes.", calls: [], completed: 0 },
      { startInReasoning: true },
    );
  });

  it("two Qwen tool calls, arguments exactly as generated", () => {
    const text =
      '<tool_call>\n{"name": "get_weather", "arguments": {"city":"Tokyo"}}\n</tool_call>\n' +
      '<tool_call>\n{"name": "get_time", "arguments": {"zone": "Asia/Tokyo", "x": [1, {"y": "}"}]}}\n</tool_call>';
    expectSameAtEveryCut(qwen, text, {
      reasoning: "",
      content: "",
      calls: [
        { id: "call_0", name: "get_weather", arguments: '{"city":"Tokyo"}' },
        { id: "call_1", name: "get_time", arguments: '{"zone": "Asia/Tokyo", "x": [1, {"y": "}"}]}' },
      ],
      completed: 2,
    });
  });

  it("content, then a call (escaped quotes inside argument strings)", () => {
    expectSameAtEveryCut(
      qwen,
      'Let me look.<tool_call>\n{"name": "get_weather", "arguments": {"city":"To\\"kyo\\\\"}}\n</tool_call>',
      {
        reasoning: "",
        content: "Let me look.",
        calls: [{ id: "call_0", name: "get_weather", arguments: '{"city":"To\\"kyo\\\\"}' }],
        completed: 1,
      },
    );
  });

  it("the template's syntax is learned: Qwen-style calls and <think> reasoning", () => {
    expect(qwen.calls?.family).toBe("hermes");
    expect(qwen.reasoning).toEqual({ open: "<think>", close: "</think>", closeWritten: "\n</think>" });
    expect(qwen.end).toContain("<|im_end|>");
  });

  it("Mistral's syntax: [TOOL_CALLS]name[ARGS]{…}", () => {
    expectSameAtEveryCut(familySyntax("mistral"), 'Sure.[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}', {
      reasoning: "",
      content: "Sure.",
      calls: [{ id: "call_0", name: "get_weather", arguments: '{"city": "Paris"}' }],
      completed: 1,
    });
  });

  it("Kimi K2's syntax: a section of calls, each named functions.name:index", () => {
    const text =
      "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>" +
      '{"city": "Paris"}<|tool_call_end|><|tool_call_begin|>functions.get_time:1<|tool_call_argument_begin|>{"zone": ' +
      '"UTC"}' +
      "<|tool_call_end|><|tool_calls_section_end|>";
    expectSameAtEveryCut(familySyntax("kimi-k2"), text, {
      reasoning: "",
      content: "",
      calls: [
        { id: "call_0", name: "get_weather", arguments: '{"city": "Paris"}' },
        { id: "call_1", name: "get_time", arguments: '{"zone": "UTC"}' },
      ],
      completed: 2,
    });
  });

  it("Qwen3-Coder's syntax: one tagged parameter an argument, typed by the tool's schema", () => {
    const text =
      "<tool_call>\n<function=get_weather>\n<parameter=city>\nNew " +
      "York\n</parameter>\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>";
    expectSameAtEveryCut(familySyntax("qwen3-coder"), text, {
      reasoning: "",
      content: "",
      calls: [{ id: "call_0", name: "get_weather", arguments: '{"city": "New York", "days": 3}' }],
      completed: 1,
    });
  });

  it("Gemma 4's syntax: bare keys, <|\"|> strings, an empty value as null", () => {
    const text = '<|tool_call>call:get_weather{city:<|"|>São Paulo, "SP"<|"|>,days:3,note:}<tool_call|>';
    expectSameAtEveryCut(familySyntax("gemma4"), text, {
      reasoning: "",
      content: "",
      calls: [{ id: "call_0", name: "get_weather", arguments: '{"city":"São Paulo, \\"SP\\"","days":3,"note":null}' }],
      completed: 1,
    });
  });

  it("without tools, call syntax is content; an unfinished marker is content at the end", () => {
    expectSameAtEveryCut(
      qwen,
      '<tool_call>\n{"name": "x"}',
      { reasoning: "", content: '<tool_call>\n{"name": "x"}', calls: [], completed: 0 },
      { tools: false },
    );
    expectSameAtEveryCut(qwen, "a <tool_ca", { reasoning: "", content: "a <tool_ca", calls: [], completed: 0 });
  });

  it("a call cut off before its name is complete announces nothing", () => {
    expect(parse(qwen, ['<tool_call>\n{"name": "get_wea'])).toEqual({
      reasoning: "",
      content: "",
      calls: [],
      completed: 0,
    });
  });
});
