// Run as a child process: parses each grammar of the JSON file named by argv[2] with llama.cpp
// (through node-llama-cpp) and prints, per grammar, whether it was accepted and whether llama.cpp's
// parser printed it to standard error (what sidecar/engine/grammar/gbnf-check.ts must prevent). The marker
// written after each grammar, straight to the file descriptor, keeps stderr in step.
import { readFileSync, writeSync } from "node:fs";
import { loadLlama } from "../../sidecar/engine/llama/model.js";

const grammars = JSON.parse(readFileSync(process.argv[2] ?? "", "utf8")) as string[];
const llama = await loadLlama();
const accepted: boolean[] = [];
for (const [i, grammar] of grammars.entries()) {
  try {
    await llama.createGrammar({ grammar });
    accepted.push(true);
  } catch {
    accepted.push(false);
  }
  writeSync(2, `\n@@grammar-probe ${i}@@\n`);
}
writeSync(1, JSON.stringify(accepted));
process.exit(0);
