// The reply parser on its own: Qwen-style markers (node-llama-cpp's QwenChatWrapper settings) and
// the generic `||call:` syntax, fed whole and at every possible cut, give the same parts.
import { ChatMLChatWrapper, QwenChatWrapper } from "node-llama-cpp";
import { describe, expect, it } from "vitest";
import { ReplyParser, type CallPiece, type ReplyParts } from "../../sidecar/engine/chat/reply-parser.js";
import { replySyntax, type ReplySyntax } from "../../sidecar/engine/llama/reply-syntax.js";

const qwen = replySyntax(new QwenChatWrapper());
const chatml = replySyntax(new ChatMLChatWrapper());

interface Parsed {
  reasoning: string;
  content: string;
  calls: { id: string; name: string; arguments: string }[];
  completed: number;
}

function parse(syntax: ReplySyntax, fragments: readonly string[], options: { tools?: boolean; startInReasoning?: boolean } = {}): Parsed {
  let n = 0;
  const parser = new ReplyParser({
    syntax,
    tools: options.tools ?? true,
    toolNames: ["get_weather", "get_time"],
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

function expectSameAtEveryCut(syntax: ReplySyntax, text: string, expected: Parsed, options?: { tools?: boolean; startInReasoning?: boolean }): void {
  for (const fragments of cuts(text)) expect(parse(syntax, fragments, options), JSON.stringify(fragments)).toEqual(expected);
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

  it("a reply that starts inside reasoning (the prompt opened it)", () => {
    expectSameAtEveryCut(qwen, "Hmm.\n</think>\nYes.", { reasoning: "Hmm.", content: "Yes.", calls: [], completed: 0 }, { startInReasoning: true });
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
    expectSameAtEveryCut(qwen, 'Let me look.<tool_call>\n{"name": "get_weather", "arguments": {"city":"To\\"kyo\\\\"}}\n</tool_call>', {
      reasoning: "",
      content: "Let me look.",
      calls: [{ id: "call_0", name: "get_weather", arguments: '{"city":"To\\"kyo\\\\"}' }],
      completed: 1,
    });
  });

  it("the generic syntax: ||call: name(arguments)", () => {
    expectSameAtEveryCut(chatml, 'Sure.||call: get_weather({"city": "Paris"})', {
      reasoning: "",
      content: "Sure.",
      calls: [{ id: "call_0", name: "get_weather", arguments: '{"city": "Paris"}' }],
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
    expect(parse(qwen, ['<tool_call>\n{"name": "get_wea'])).toEqual({ reasoning: "", content: "", calls: [], completed: 0 });
  });
});
