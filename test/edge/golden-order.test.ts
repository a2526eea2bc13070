// Walks every transcript in test/golden and checks its protocol's event order rules
// (test/support/contract.ts), whole and at hostile chunk boundaries; then shows that
// the checkers catch each broken rule, on mutated copies of the transcripts.
//
// The rules (docs/contract.md): Anthropic — `event:` names the data's type;
// message_start, then per block content_block_start / content_block_delta /
// content_block_stop with one open block at a time and a delta type matching the
// block, then message_delta, then message_stop. Responses — every event has a
// sequence_number one higher than the last; response.created, response.in_progress,
// items opened and closed one at a time, one terminal event, then data: [DONE].
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import {
  checkAnthropicStream,
  checkChatStream,
  checkCompletionStream,
  checkResponsesStream,
} from "../support/contract.js";
import { formatEvent } from "../../edge/sse/frame.js";
import { hostileSplits, parseChunks, parseText, type ParsedEvent } from "../support/sse.js";

const dir = fileURLToPath(new URL("../golden/", import.meta.url));
const transcripts = readdirSync(dir)
  .filter((name) => name.endsWith(".txt"))
  .sort();

const checkers: Record<string, (events: readonly ParsedEvent[]) => unknown> = {
  chat: checkChatStream,
  completions: checkCompletionStream,
  anthropic: checkAnthropicStream,
  responses: checkResponsesStream,
};

function checkerFor(name: string): (events: readonly ParsedEvent[]) => unknown {
  const checker = checkers[name.split("-")[0] ?? ""];
  if (checker === undefined) throw new Error(`${name}: no checker for this protocol prefix`);
  return checker;
}

const read = (name: string) => readFileSync(`${dir}${name}`, "utf8");

describe("every golden transcript keeps its protocol's order rules", () => {
  it("finds transcripts of all four protocols", () => {
    const prefixes = new Set(transcripts.map((name) => name.split("-")[0]));
    expect([...prefixes].sort()).toEqual(["anthropic", "chat", "completions", "responses"]);
  });

  it.each(transcripts)("%s, whole and at hostile chunk boundaries", (name) => {
    const check = checkerFor(name);
    const bytes = new TextEncoder().encode(read(name));
    for (const [how, chunks] of hostileSplits(bytes)) {
      const { events } = parseChunks(chunks);
      expect(events.length, how).toBeGreaterThan(0);
      check(events);
    }
  });
});

/** Re-serialises events (after a mutation) as SSE text and parses it back. */
function rebuild(events: readonly ParsedEvent[]): ParsedEvent[] {
  const text = events
    .map((e) => formatEvent(e.event === "message" ? { data: e.data } : { event: e.event, data: e.data }))
    .join("");
  return parseText(text);
}

function mutateData(
  events: readonly ParsedEvent[],
  at: number,
  change: (data: Record<string, unknown>) => void,
): ParsedEvent[] {
  return events.map((event, i) => {
    if (i !== at) return event;
    const data = JSON.parse(event.data) as Record<string, unknown>;
    change(data);
    return { ...event, data: JSON.stringify(data) };
  });
}

const indexOf = (events: readonly ParsedEvent[], type: string) =>
  events.findIndex((e) => e.data !== "[DONE]" && (JSON.parse(e.data) as { type?: string }).type === type);

describe("the Anthropic checker catches", () => {
  const events = parseText(read("anthropic-plain.txt"));
  const start = indexOf(events, "content_block_start");
  const delta = indexOf(events, "content_block_delta");
  const stop = indexOf(events, "content_block_stop");
  const cases: [string, () => ParsedEvent[], RegExp][] = [
    [
      "an event: line that differs from the type",
      () => events.map((e, i) => (i === delta ? { ...e, event: "content_block_stop" } : e)),
      /the event: line names the data's type/,
    ],
    [
      "a delta before its block starts",
      () => [events[0]!, events[delta]!, ...events.slice(1).filter((_, i) => i + 1 !== delta)],
      /a delta inside an open block/,
    ],
    [
      "a second block opened while one is open",
      () => [...events.slice(0, delta), events[start]!, ...events.slice(delta)],
      /one open block at a time/,
    ],
    [
      "a delta whose index is not the open block's",
      () => mutateData(events, delta, (d) => (d["index"] = 1)),
      /the delta's index is the open block's/,
    ],
    [
      "a delta whose type does not match the block",
      () => mutateData(events, delta, (d) => (d["delta"] = { type: "input_json_delta", partial_json: "{" })),
      /delta type matches the block/,
    ],
    [
      "message_delta while a block is open",
      () => events.filter((_, i) => i !== stop),
      /every block is closed before message_delta/,
    ],
    ["a missing message_stop", () => events.slice(0, -1), /ends with message_stop or error/],
    [
      "message_start not first",
      () => [events[start]!, events[0]!, ...events.slice(1).filter((_, i) => i + 1 !== start)],
      /after message_start/,
    ],
    ["an event after message_stop", () => [...events, events[delta]!], /nothing after the end/],
    [
      "a stop_sequence without stop_reason stop_sequence",
      () =>
        mutateData(
          events,
          indexOf(events, "message_delta"),
          (d) => (d["delta"] = { stop_reason: "end_turn", stop_sequence: "x" }),
        ),
      /expected 'x' to be null/,
    ],
  ];
  it("accepts the unmutated transcript", () => {
    expect(() => checkAnthropicStream(rebuild(events))).not.toThrow();
  });
  it.each(cases)("%s", (_, mutate, rule) => {
    expect(() => checkAnthropicStream(rebuild(mutate()))).toThrow(rule);
  });
});

describe("the Responses checker catches", () => {
  const events = parseText(read("responses-plain.txt"));
  const renumber = (list: ParsedEvent[]) =>
    list.map((e, i) =>
      e.data === "[DONE]"
        ? e
        : { ...e, data: JSON.stringify({ ...(JSON.parse(e.data) as object), sequence_number: i }) },
    );
  const delta = indexOf(events, "response.output_text.delta");
  const added = indexOf(events, "response.output_item.added");
  const partDone = indexOf(events, "response.content_part.done");
  const cases: [string, () => ParsedEvent[], RegExp][] = [
    [
      "a gap in sequence numbers",
      () => mutateData(events, delta, (d) => (d["sequence_number"] = Number(d["sequence_number"]) + 1)),
      /sequence numbers grow by one/,
    ],
    [
      "a delta with another output_index",
      () => mutateData(events, delta, (d) => (d["output_index"] = 1)),
      /expected 1 to be \+0/,
    ],
    [
      "a delta with another item_id",
      () => mutateData(events, delta, (d) => (d["item_id"] = "msg_other")),
      /expected 'msg_other'/,
    ],
    [
      "a delta after its part is done",
      () => renumber([...events.slice(0, partDone + 1), events[delta]!, ...events.slice(partDone + 1)]),
      /a delta inside an open part/,
    ],
    [
      "a second item opened while one is open",
      () => renumber([...events.slice(0, delta), events[added]!, ...events.slice(delta)]),
      /one open item at a time/,
    ],
    [
      "an item with output_index beyond its position",
      () => mutateData(events, added, (d) => (d["output_index"] = 3)),
      /output_index is the item's position/,
    ],
    [
      "output_text.done whose text is not the deltas'",
      () => mutateData(events, indexOf(events, "response.output_text.done"), (d) => (d["text"] = "Hi")),
      /done carries the whole text/,
    ],
    [
      "a terminal output that differs from the items",
      () =>
        mutateData(
          events,
          indexOf(events, "response.completed"),
          (d) => ((d["response"] as { output: unknown[] }).output = []),
        ),
      /the terminal output is the items sent/,
    ],
    ["a missing [DONE]", () => events.slice(0, -1), /\[DONE\] after the terminal event/],
    [
      "an event: line that differs from the type",
      () => events.map((e, i) => (i === delta ? { ...e, event: "response.output_text.done" } : e)),
      /event: names the data's type/,
    ],
    ["response.in_progress missing", () => renumber(events.filter((_, i) => i !== 1)), /response.in_progress second/],
    [
      "no terminal event",
      () => renumber(events.filter((_, i) => i !== indexOf(events, "response.completed"))),
      /ends with a terminal event/,
    ],
  ];
  it("accepts the unmutated transcript", () => {
    expect(() => checkResponsesStream(rebuild(events))).not.toThrow();
  });
  it.each(cases)("%s", (_, mutate, rule) => {
    expect(() => checkResponsesStream(rebuild(mutate()))).toThrow(rule);
  });
});

describe("the chat checker catches tool-call and reasoning faults", () => {
  const events = parseText(read("chat-tools.txt"));
  const choiceOf = (d: Record<string, unknown>) =>
    (d["choices"] as Record<string, unknown>[])[0] as Record<string, unknown>;
  const cases: [string, () => ParsedEvent[], RegExp][] = [
    [
      "an id on a later delta of a call",
      () =>
        mutateData(
          events,
          2,
          (d) => ((choiceOf(d)["delta"] as { tool_calls: Record<string, unknown>[] }).tool_calls[0]!["id"] = "call_x"),
        ),
      /index and arguments only/,
    ],
    [
      "a first delta without its name",
      () =>
        mutateData(
          events,
          1,
          (d) =>
            ((choiceOf(d)["delta"] as { tool_calls: Record<string, unknown>[] }).tool_calls[0]!["function"] = {
              arguments: "",
            }),
        ),
      /the first delta of a call/,
    ],
    [
      "a call that skips an index",
      () =>
        mutateData(
          events,
          1,
          (d) => ((choiceOf(d)["delta"] as { tool_calls: Record<string, unknown>[] }).tool_calls[0]!["index"] = 1),
        ),
      /latest call/,
    ],
    [
      "content and tool_calls in one delta",
      () => mutateData(events, 2, (d) => ((choiceOf(d)["delta"] as Record<string, unknown>)["content"] = "x")),
      /one kind of content per delta/,
    ],
    [
      "finish_reason stop after a call",
      () => mutateData(events, events.length - 2, (d) => (choiceOf(d)["finish_reason"] = "stop")),
      /expected \[ 'tool_calls', 'length' \] to include 'stop'/,
    ],
  ];
  it("accepts the unmutated transcript", () => {
    expect(() => checkChatStream(rebuild(events))).not.toThrow();
  });
  it.each(cases)("%s", (_, mutate, rule) => {
    expect(() => checkChatStream(rebuild(mutate()))).toThrow(rule);
  });
  it("finish_reason tool_calls without a call", () => {
    const plain = parseText(read("chat-plain.txt"));
    const broken = mutateData(plain, plain.length - 2, (d) => (choiceOf(d)["finish_reason"] = "tool_calls"));
    expect(() => checkChatStream(rebuild(broken))).toThrow(/tool_calls finish without a call/);
  });
});

describe("the Anthropic checker catches thinking and tool_use faults", () => {
  const thinking = parseText(read("anthropic-thinking.txt"));
  const tools = parseText(read("anthropic-tools.txt"));
  const plain = parseText(read("anthropic-plain.txt"));
  const signature = thinking.findIndex((e) => e.data.includes("signature_delta"));
  const cases: [string, () => ParsedEvent[], RegExp][] = [
    ["a thinking block stopped unsigned", () => thinking.filter((_, i) => i !== signature), /signed before it stops/],
    [
      "a delta after the signature",
      () => [...thinking.slice(0, signature + 1), thinking[signature - 1]!, ...thinking.slice(signature + 1)],
      /the signature is a thinking block's last delta/,
    ],
    [
      "stop_reason end_turn after a tool_use block",
      () =>
        mutateData(
          tools,
          indexOf(tools, "message_delta"),
          (d) => (d["delta"] = { stop_reason: "end_turn", stop_sequence: null }),
        ),
      /stops for it/,
    ],
    [
      "stop_reason tool_use without a tool_use block",
      () =>
        mutateData(
          plain,
          indexOf(plain, "message_delta"),
          (d) => (d["delta"] = { stop_reason: "tool_use", stop_sequence: null }),
        ),
      /needs a tool_use block/,
    ],
    [
      "a tool_use block that starts with input",
      () =>
        mutateData(
          tools,
          indexOf(tools, "content_block_start"),
          (d) => ((d["content_block"] as Record<string, unknown>)["input"] = { city: "x" }),
        ),
      /expected/,
    ],
  ];
  it.each(cases)("%s", (_, mutate, rule) => {
    expect(() => checkAnthropicStream(rebuild(mutate()))).toThrow(rule);
  });
});

describe("the Responses checker catches function_call and reasoning faults", () => {
  const tools = parseText(read("responses-tools.txt"));
  const reasoning = parseText(read("responses-reasoning.txt"));
  const cases: [string, () => ParsedEvent[], RegExp][] = [
    [
      "arguments.done that differ from the deltas",
      () => mutateData(tools, indexOf(tools, "response.function_call_arguments.done"), (d) => (d["arguments"] = "{}")),
      /done carries the whole arguments/,
    ],
    [
      "a function_call item announced with arguments",
      () =>
        mutateData(
          tools,
          indexOf(tools, "response.output_item.added"),
          (d) => ((d["item"] as Record<string, unknown>)["arguments"] = "{"),
        ),
      /expected/,
    ],
    [
      "a function_call item with a msg_ id",
      () =>
        mutateData(
          tools,
          indexOf(tools, "response.output_item.added"),
          (d) => ((d["item"] as Record<string, unknown>)["id"] = "msg_x"),
        ),
      /fc_/,
    ],
    [
      "reasoning text in an output_text delta",
      () => {
        const at = indexOf(reasoning, "response.reasoning_text.delta");
        return mutateData(reasoning, at, (d) => (d["type"] = "response.output_text.delta")).map((e, i) =>
          i === at ? { ...e, event: "response.output_text.delta" } : e,
        );
      },
      /only in message items/,
    ],
  ];
  it.each(cases)("%s", (_, mutate, rule) => {
    expect(() => checkResponsesStream(rebuild(mutate()))).toThrow(rule);
  });
});
