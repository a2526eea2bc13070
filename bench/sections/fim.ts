// Fill-in-the-middle as an editor drives it: a ~2,000-token source file, the cursor on one line
// three quarters down, one streamed `/infill` per keystroke, each changing that one line (the body
// llama.vscode sends: the lines above as `input_prefix`, the cursor's line as `prompt`, the lines
// below as `input_suffix`). This server (the edge on Node before a sidecar) and llama-server (its
// default build), both on the `qwen2.5-coder` twin with one sequence, in turn. After a short file
// (not measured: a first request's own work), the first request evaluates the whole file (cold);
// every edit after it shares the file up to the cursor's line, which each server's prefix cache
// keeps, and evaluates the rest again (the edited line, the suffix, the middle token). Reported:
// first-token time (request sent → first content) cold and per edit (median), and the prompt tokens
// each edit evaluated and found cached (the servers' `timings`).
import { CODER_MIDDLE } from "../../gguf/twins/coder.js";
import { streamSse } from "../clients/sse.js";
import type { StreamSample } from "../sample.js";
import { median } from "../stats.js";
import { fmt } from "../table.js";

/** Tokens generated per request: the first one is what is measured. */
const MIDDLE_TOKENS = 8;

export interface FimParty {
  readonly name: string;
  readonly cold: StreamSample;
  readonly edits: StreamSample[];
}

export interface FimResult {
  /** The file's tokens (prefix, cursor line and suffix, as plain text). */
  readonly fileTokens: number;
  readonly rounds: number;
  readonly parties: FimParty[];
}

/** A deterministic Python file of `functions` small functions, none holding the twin's triggers. */
function sourceLines(functions: number): string[] {
  const lines: string[] = [];
  for (let i = 0; i < functions; i++)
    lines.push(`def scale_${i}(value, factor=${(i % 7) + 2}):`, `    return value * factor + ${i}`, "");
  return lines;
}

/** The request of edit `edit` (0: the first, cold): the cursor's line holds the edit's text. */
export function fimBody(lines: readonly string[], edit: number): Record<string, unknown> {
  const at = Math.floor((lines.length * 3) / 4);
  return {
    input_prefix: `${lines.slice(0, at).join("\n")}\n`,
    prompt: `    step = ${edit}`,
    input_suffix: `\n${lines.slice(at).join("\n")}\n`,
    n_predict: MIDDLE_TOKENS,
    temperature: 0,
    cache_prompt: true,
    stream: true,
  };
}

/** The file of about `tokens` tokens, counted by the server at `countUrl` (its /tokenize). */
async function fileOf(countUrl: string, tokens: number): Promise<{ lines: string[]; tokens: number }> {
  const count = async (lines: readonly string[]): Promise<number> => {
    const response = await fetch(`${countUrl}/tokenize`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ content: `${lines.join("\n")}\n`, parse_special: false }),
    });
    return ((await response.json()) as { tokens: unknown[] }).tokens.length;
  };
  let functions = Math.max(1, Math.round(tokens / 20));
  let got = await count(sourceLines(functions));
  for (let i = 0; i < 4 && Math.abs(got - tokens) > tokens / 50; i++) {
    functions = Math.max(1, Math.round((functions * tokens) / got));
    got = await count(sourceLines(functions));
  }
  return { lines: sourceLines(functions), tokens: got };
}

/** One request; a reply other than the twin's middle is a failure (the prompt reached the model wrong). */
async function infill(url: string, body: Record<string, unknown>, timeoutMs: number): Promise<StreamSample> {
  const sample = await streamSse(`${url}/infill`, body, timeoutMs);
  if (sample.outcome !== "completed" || sample.text?.startsWith(CODER_MIDDLE.slice(0, 6))) return sample;
  return { ...sample, outcome: "failed", error: `unexpected middle ${JSON.stringify(sample.text)}` };
}

export async function runFim(
  parties: readonly { readonly name: string; readonly url: string }[],
  options: { readonly tokens: number; readonly rounds: number; readonly timeoutMs: number },
  log: (m: string) => void,
): Promise<FimResult> {
  const [first] = parties;
  if (first === undefined) throw new Error("fim: no party");
  const file = await fileOf(first.url, options.tokens);
  log(`fim: a file of ${file.tokens} tokens, ${options.rounds} one-line edits per server`);
  const results = parties.map((p) => ({ name: p.name, url: p.url, cold: undefined as StreamSample | undefined }));
  const edits = parties.map((): StreamSample[] => []);
  for (const party of results) {
    // A short file first, not measured: connections, first-request work and JIT are not the cold prompt's.
    await infill(party.url, fimBody(sourceLines(4), 0), options.timeoutMs);
    party.cold = await infill(party.url, fimBody(file.lines, 0), options.timeoutMs);
  }
  for (let round = 1; round <= options.rounds; round++) {
    // The servers take turns going first.
    const order = round % 2 === 0 ? results.map((_, i) => i) : results.map((_, i) => results.length - 1 - i);
    for (const i of order) {
      const party = results[i];
      if (party !== undefined) edits[i]?.push(await infill(party.url, fimBody(file.lines, round), options.timeoutMs));
    }
  }
  return {
    fileTokens: file.tokens,
    rounds: options.rounds,
    parties: results.map((p, i) => ({ name: p.name, cold: p.cold as StreamSample, edits: edits[i] ?? [] })),
  };
}

/** The median of a completed sample's field over the edits; NaN when none completed. */
function editMedian(party: FimParty, field: (s: StreamSample) => number | undefined): number {
  const values = party.edits.filter((s) => s.outcome === "completed").map((s) => field(s) ?? Number.NaN);
  return values.length === 0 ? Number.NaN : median(values);
}

/** Median first-token time of an edit, ms. */
export const editTtftMs = (party: FimParty): number => editMedian(party, (s) => s.ttftMs);

export function renderFim(result: FimResult): string {
  const reference = result.parties.at(-1);
  const rows = result.parties.map((p) => {
    const failed = p.edits.filter((s) => s.outcome !== "completed").length + (p.cold.outcome === "completed" ? 0 : 1);
    const ratio = reference === undefined || reference === p ? "" : fmt(editTtftMs(p) / editTtftMs(reference), 2);
    return (
      `| ${p.name} | ${fmt(p.cold.ttftMs)} | ${fmt(editTtftMs(p))} | ${fmt(
        editMedian(p, (s) => s.promptTokens),
        0,
      )} | ` +
      `${fmt(
        editMedian(p, (s) => s.cachedTokens),
        0,
      )} | ${ratio} | ${failed} |`
    );
  });
  return [
    `**Fill-in-the-middle** (\`/infill\`, qwen2.5-coder twin, one sequence): a ${result.fileTokens}-token file, ` +
      `${result.rounds} one-line edits per server at its cursor line, ${MIDDLE_TOKENS} tokens per middle`,
    "",
    "| server | cold first token ms | edit first token ms (median) | evaluated per edit | cached per edit | " +
      "edit ratio to llama-server | failed |",
    "| --- | --- | --- | --- | --- | --- | --- |",
    ...rows,
  ].join("\n");
}
