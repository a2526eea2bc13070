// The GBNF syntax check (sidecar/engine/grammar/gbnf-check.ts) against llama.cpp's own parser, run in a
// child process whose standard error is read: on llama.cpp's sample grammars and on mutations of
// them, every grammar llama.cpp's parser would print whole to standard error (the leak the check
// prevents) is refused, and no grammar llama.cpp accepts is.
import { spawnSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { gbnfSyntaxError } from "../../sidecar/engine/grammar/gbnf-check.js";

const SAMPLES_DIR = "node_modules/node-llama-cpp/llama/grammars";
const samples = readdirSync(SAMPLES_DIR)
  .filter((f) => f.endsWith(".gbnf"))
  .map((f) => readFileSync(join(SAMPLES_DIR, f), "utf8"));
const HAND = [
  'root ::= "a" | [b-d]+ ("e" x)? x\nx ::= "\\x41" [^\\n\\]] .{2,3}',
  'root ::= ( "a"\n  | "b" ){1,}',
  'root ::= "a"{2} <[7]>',
  'root ::= x*\n# comment\nx ::= "\\u00e9"',
];
const BROKEN = [
  'root ::= "a',
  "root ::= [a-",
  "root ::= x",
  'root := "a"',
  'root ::= "a" )',
  "root ::= *",
  'root ::= "\\q"',
  'root ::= "\\x4"',
  'root ::= "a"{,2}',
  'root ::= "a"{2',
  'root ::= "a" "b"\n  "c"',
  "::= x",
  "root ::= <hello>",
];

interface Verdict {
  readonly accepted: boolean;
  /** llama.cpp's parser refused it and printed it to standard error. */
  readonly printed: boolean;
}

/** llama.cpp's verdict on each grammar, from a child process whose standard error is read. */
function llamaVerdicts(grammars: readonly string[]): Verdict[] {
  const dir = mkdtempSync(join(tmpdir(), "gbnf-"));
  const file = join(dir, "grammars.json");
  writeFileSync(file, JSON.stringify(grammars));
  // Standard error goes to a file, not a pipe: on a busy machine a full pipe made the child's
  // synchronous writes fail (EAGAIN) and it died before printing its verdicts.
  const errFile = join(dir, "stderr.txt");
  const errFd = openSync(errFile, "w");
  const run = spawnSync(process.execPath, ["--import", "tsx", "test/support/grammar-probe.ts", file], {
    encoding: "utf8",
    maxBuffer: 1 << 28,
    stdio: ["ignore", "pipe", errFd],
  });
  closeSync(errFd);
  const stderr = readFileSync(errFile, "utf8");
  if (run.status !== 0)
    throw new Error(`grammar probe exited with ${String(run.status ?? run.signal)}: ${stderr.slice(-2000)}`);
  const accepted = JSON.parse(run.stdout) as boolean[];
  const printed = stderr.split(/\n@@grammar-probe \d+@@\n/).map((part) => part.includes("error parsing grammar"));
  return accepted.map((ok, i) => ({ accepted: ok, printed: printed[i] ?? false }));
}

const PIECES = [
  '"',
  "[",
  "]",
  "(",
  ")",
  "|",
  "*",
  "+",
  "?",
  "{",
  "}",
  ",",
  "::=",
  "\\",
  "-",
  "\n",
  " ",
  "x",
  "1",
  "#",
  "^",
  ".",
  "<",
  ">",
  "<[7]>",
];
/** llama.cpp's sample grammars and the valid ones above, each with one to three small edits. */
const mutants = fc.sample(
  fc
    .tuple(
      fc.constantFrom(...samples, ...HAND),
      fc.array(fc.tuple(fc.nat(), fc.nat(), fc.constantFrom(...PIECES)), { minLength: 1, maxLength: 3 }),
    )
    .map(([base, edits]) =>
      edits.reduce((text, [at, cut, piece]) => {
        const i = at % (text.length + 1);
        return text.slice(0, i) + piece + text.slice(i + (cut % 3));
      }, base),
    ),
  { numRuns: 400, seed: 20261125 },
);

const valid = [...samples, ...HAND];
let verdicts: Verdict[];
beforeAll(() => {
  // One child for all: loading llama.cpp takes a while.
  verdicts = llamaVerdicts([...valid, ...BROKEN, ...mutants]);
}, 120_000);

describe("GBNF syntax check", () => {
  it(
    "accepts llama.cpp's sample grammars and valid ones, refuses broken ones saying where without quoting " + "them",
    () => {
      valid.forEach((text, i) => {
        expect(verdicts[i]?.accepted, text).toBe(true);
        expect(gbnfSyntaxError(text), text).toBeUndefined();
      });
      BROKEN.forEach((text, i) => {
        expect(verdicts[valid.length + i]?.accepted, text).toBe(false);
        expect(gbnfSyntaxError(text), text).toMatch(/\(line \d+, column \d+\)$/);
      });
      expect(gbnfSyntaxError('root ::= "secret text"\nbroken')).toBe(
        "unexpected end of the grammar (line 2, column 7)",
      );
      expect(gbnfSyntaxError('root ::= "secret text"\nbroken x')).toBe('expecting "::=" (line 2, column 8)');
    },
  );

  it("on 400 mutated grammars: refuses every one llama.cpp's parser would print, and none llama.cpp accepts", () => {
    const mutated = verdicts.slice(valid.length + BROKEN.length);
    expect(mutated.filter((v) => v.printed).length).toBeGreaterThan(50);
    mutants.forEach((text, i) => {
      const ours = gbnfSyntaxError(text) === undefined;
      if (mutated[i]?.printed === true) expect(ours, `llama.cpp prints: ${text}`).toBe(false);
      if (mutated[i]?.accepted === true) expect(ours, `llama.cpp accepts: ${text}`).toBe(true);
    });
  });
});
