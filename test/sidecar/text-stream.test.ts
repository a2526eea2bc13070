import { describe, expect, it } from "vitest";
import { StopSequenceFilter } from "../../sidecar/engine/decode/text-stream.js";

function run(stops: string[], fragments: string[]): { sent: string[]; stop?: string; rest: string } {
  const filter = new StopSequenceFilter(stops);
  const sent: string[] = [];
  for (const fragment of fragments) {
    const step = filter.push(fragment);
    sent.push(step.text);
    if (step.stop !== undefined) return { sent, stop: step.stop, rest: "" };
  }
  return { sent, rest: filter.flush() };
}

describe("stop sequences never leak", () => {
  it("holds back a possible beginning and drops the whole sequence once it completes", () => {
    const out = run(["tiny llama"], [" there", " lived", " a", " tiny", " ll", "ama", " (x)"]);
    // The space before "tiny" is not part of the stop, so it leaves with the " tiny" step.
    expect(out).toEqual({ sent: [" there", " lived", " a", " ", "", ""], stop: "tiny llama", rest: "" });
    expect(out.sent.join("")).toBe(" there lived a ");
  });

  it("lets held text go when the continuation rules the stop out", () => {
    const out = run(["tiny llama"], [" a", " tiny", " house"]);
    expect(out.sent).toEqual([" a", " ", "tiny house"]);
    expect(out.rest).toBe("");
  });

  it("returns held text at the end when the reply stops first", () => {
    expect(run(["\n\n"], ["end", ".\n"])).toEqual({ sent: ["end", "."], rest: "\n" });
  });

  it("ends at the earliest of several stops, inside one fragment", () => {
    expect(run(["b", "ab"], ["xxabyy"])).toEqual({ sent: ["xx"], stop: "ab", rest: "" });
  });

  it("passes everything through without stops", () => {
    expect(run([], ["a", "b"])).toEqual({ sent: ["a", "b"], rest: "" });
  });

  it("handles a stop made of multi-byte characters", () => {
    expect(run(["🦙)"], [" (", "🦙", ")."])).toEqual({ sent: [" (", "", ""], stop: "🦙)", rest: "" });
  });
});
