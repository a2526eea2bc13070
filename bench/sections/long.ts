// A coding agent's prompt: one long prompt (8,000 tokens by default, `--long-tokens 40000` for an
// agent's full size) on a context of its own (one sequence), cold,
// then again with a new ending (its prefix cached), on the sidecar (native gRPC) and on
// llama-server (its /completion with cache_prompt). Prompt processing of such prompts is the hot
// path of an agent's turn; each server's own prompt timing and the tokens it evaluated are reported.
import http from "node:http";
import { streamGrpc, type GrpcClient } from "../clients/grpc.js";
import { fillerText, SEED, TEMPERATURE, userTurn } from "../workload.js";

/** Room left in the context after the prompt (the new ending and the reply). */
export const LONG_CONTEXT_MARGIN = 1_024;

export interface LongRun {
  /** Prompt tokens the server evaluated (the prompt less what it found cached). */
  readonly evaluated: number;
  /** The server's own prompt time, ms. */
  readonly promptMs: number;
  /** Request sent → first token, ms. */
  readonly ttftMs: number;
}

export interface LongParty {
  readonly name: string;
  readonly cold: LongRun;
  readonly cached: LongRun;
}

export interface LongResult {
  readonly promptTokens: number;
  readonly contextSize: number;
  readonly parties: LongParty[];
}

/** Prompt tokens evaluated per second. */
export const promptRate = (run: LongRun): number => (run.promptMs > 0 ? (run.evaluated * 1000) / run.promptMs : Number.NaN);

/** A text of about `tokens` tokens. */
async function longText(client: GrpcClient, tokens: number): Promise<{ text: string; tokens: number }> {
  const count = async (words: number): Promise<number> => (await client.tokenize({ input: { case: "text", value: fillerText(words, 11) } })).tokens.length;
  let words = Math.round(tokens * 0.7);
  let got = await count(words);
  for (let i = 0; i < 6 && Math.abs(got - tokens) > 20; i++) {
    words = Math.max(1, Math.round((words * tokens) / got));
    got = await count(words);
  }
  return { text: fillerText(words, 11), tokens: got };
}

async function viaSidecar(client: GrpcClient, prompt: string, timeoutMs: number): Promise<LongRun> {
  const sample = await streamGrpc(
    client,
    { input: { case: "prompt", value: prompt }, maxTokens: 1, sampling: { temperature: TEMPERATURE, seed: SEED } },
    timeoutMs,
  );
  if (sample.outcome !== "completed") throw new Error(`long prompt through the sidecar: ${sample.outcome} ${sample.error ?? ""}`);
  return { evaluated: (sample.promptTokens ?? 0) - (sample.cachedTokens ?? 0), promptMs: sample.serverPromptMs ?? Number.NaN, ttftMs: sample.ttftMs };
}

async function viaPeer(url: string, prompt: string, timeoutMs: number): Promise<LongRun> {
  const sent = performance.now();
  const body = (await postJson(`${url}/completion`, { prompt, n_predict: 1, cache_prompt: true, temperature: TEMPERATURE, seed: SEED }, timeoutMs)) as {
    timings?: { prompt_n?: number; prompt_ms?: number };
  };
  return { evaluated: body.timings?.prompt_n ?? 0, promptMs: body.timings?.prompt_ms ?? Number.NaN, ttftMs: performance.now() - sent };
}

/**
 * POSTs JSON and reads the JSON answer over node:http, which (unlike fetch) has no time limit for
 * the response headers: llama-server sends them only after the prompt, minutes for a long one.
 */
function postJson(url: string, value: unknown, timeoutMs: number): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      { method: "POST", headers: { "content-type": "application/json" }, signal: AbortSignal.timeout(timeoutMs) },
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("error", reject);
        response.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          if (response.statusCode !== 200) reject(new Error(`long prompt through llama-server: HTTP ${response.statusCode} ${text.slice(0, 200)}`));
          else resolve(JSON.parse(text));
        });
      },
    );
    request.on("error", reject);
    request.end(JSON.stringify(value));
  });
}

/** Measures the sidecar behind `client` and, when given, llama-server at `peerUrl` on the same prompt. */
export async function runLong(
  client: GrpcClient,
  peerUrl: string | undefined,
  options: { tokens: number; contextSize: number; timeoutMs: number },
  log: (m: string) => void,
): Promise<LongResult> {
  const { text, tokens } = await longText(client, options.tokens);
  log(`long prompt: ${tokens} tokens on a ${options.contextSize}-token context`);
  const cold = text;
  const cached = `${text}\n\n${userTurn(1)}`;
  const runners: [string, (prompt: string) => Promise<LongRun>][] = [["sidecar (native gRPC)", (p) => viaSidecar(client, p, options.timeoutMs)]];
  if (peerUrl !== undefined) runners.push(["llama-server (peer)", (p) => viaPeer(peerUrl, p, options.timeoutMs)]);
  const parties: LongParty[] = [];
  for (const [name, run] of runners) {
    const coldRun = await run(cold);
    const cachedRun = await run(cached);
    log(
      `long prompt, ${name}: cold ${coldRun.promptMs.toFixed(0)} ms, prefix cached ${cachedRun.promptMs.toFixed(0)} ms ` +
        `(${cachedRun.evaluated} tokens evaluated)`,
    );
    parties.push({ name, cold: coldRun, cached: cachedRun });
  }
  return { promptTokens: tokens, contextSize: options.contextSize, parties };
}
