// Several GBNF grammars joined into one (syntax/gbnf.ts, prefixedRules): every rule renamed with a
// prefix, references renamed with it, nothing inside strings, classes, counts or comments touched;
// llama.cpp parses the joined grammar.
import { getLlama } from "node-llama-cpp";
import { describe, expect, it } from "vitest";
import { prefixedRules } from "../../sidecar/engine/syntax/gbnf.js";

const GRAMMAR = [
  'root ::= "{" ws item{1,2} "}" # item then root',
  'item ::= [a-z-]+ ws "item ::= root"',
  "ws ::= [ ]?",
].join("\n");

describe("prefixedRules", () => {
  it("renames rules and their references only", () => {
    expect(prefixedRules(GRAMMAR, "tool0").split("\n")).toEqual([
      'tool0-root ::= "{" tool0-ws tool0-item{1,2} "}" # item then root',
      'tool0-item ::= [a-z-]+ tool0-ws "item ::= root"',
      "tool0-ws ::= [ ]?",
    ]);
  });

  it("joins grammars llama.cpp parses", async () => {
    const llama = await getLlama({ gpu: false, build: "never", maxThreads: 1 });
    const joined =
      `root ::= "a" tool0-root | "b" ` +
      `tool1-root\n${prefixedRules(GRAMMAR, "tool0")}\n${prefixedRules('root ::= "x"', "tool1")}`;
    const grammar = await llama.createGrammar({ grammar: joined });
    expect(grammar.grammar).toContain("tool1-root");
    await llama.dispose();
  });
});
