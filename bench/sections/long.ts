// A coding agent's prompt: one long prompt (8,000 tokens by default, `--long-tokens 40000` for an
// agent's full size) on a context of its own (one sequence), cold,
// then again with a new ending (its prefix cached), on the sidecar (native gRPC) and on each
// llama-server build (its /completion with cache_prompt). Prompt processing of such prompts is the
// hot path of an agent's turn; each server's own prompt timing and the tokens it evaluated are
// reported. Then the decode row: the second prompt once more (all cached) and `decodeTokens`
// generated tokens streamed (llama-server: /v1/completions), decode tok/s after a long prompt.
import http from "node:http";
import { streamGrpc, type GrpcClient } from "../clients/grpc.js";
import { streamSse } from "../clients/sse.js";
import { PEER_LABELS, type PeerVariant } from "../peer-paths.js";
import { decodeRate, type StreamSample } from "../sample.js";
import { fillerText, SEED, TEMPERATURE, userTurn } from "../workload.js";

/** Room left in the context after the prompt and the decode row's tokens (the new ending). */
export const LONG_CONTEXT_MARGIN = 1_024;

/** The context of the long-prompt run: the prompt, the decode row's tokens and the margin. */
export const longContextSize = (tokens: number, decodeTokens: number): number =>
  tokens + decodeTokens + LONG_CONTEXT_MARGIN;

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
  /** The decode row: the cached prompt again, `decodeTokens` tokens streamed. */
  readonly decode: StreamSample;
}

export interface LongResult {
  readonly promptTokens: number;
  readonly contextSize: number;
  /** Tokens asked for in the decode row. */
  readonly decodeTokens: number;
  readonly parties: LongParty[];
}

/** Prompt tokens evaluated per second. */
export const promptRate = (run: LongRun): number =>
  run.promptMs > 0 ? (run.evaluated * 1000) / run.promptMs : Number.NaN;

/** Decode tok/s after the long prompt, first to last token (the first excluded); NaN when the run failed. */
export const longDecodeRate = (party: LongParty): number =>
  party.decode.outcome === "completed" ? decodeRate(party.decode) : Number.NaN;

/** One server's row of the results file: its prompt rates and its decode rate against llama-server's default build. */
export interface LongRow {
  readonly name: string;
  readonly coldPromptTps: number;
  readonly cachedPromptMs: number;
  readonly decodeTokens: number;
  readonly decodeTps: number;
  /** Decode tok/s over llama-server's (default build, then prebuilt-like), NaN where it did not run. */
  readonly decodeVsPeer: Readonly<Record<PeerVariant, number>>;
}

export function summarizeLong(long: LongResult): LongRow[] {
  const rate = (variant: PeerVariant): number => {
    const peer = long.parties.find((p) => p.name === PEER_LABELS[variant]);
    return peer ? longDecodeRate(peer) : Number.NaN;
  };
  return long.parties.map((p) => ({
    name: p.name,
    coldPromptTps: promptRate(p.cold),
    cachedPromptMs: p.cached.promptMs,
    decodeTokens: p.decode.tokens,
    decodeTps: longDecodeRate(p),
    decodeVsPeer: { default: longDecodeRate(p) / rate("default"), prebuilt: longDecodeRate(p) / rate("prebuilt") },
  }));
}

/** A text of about `tokens` tokens. */
async function longText(client: GrpcClient, tokens: number): Promise<{ text: string; tokens: number }> {
  const count = async (words: number): Promise<number> =>
    (await client.tokenize({ input: { case: "text", value: fillerText(words, 11) } })).tokens.length;
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
  if (sample.outcome !== "completed")
    throw new Error(`long prompt through the sidecar: ${sample.outcome} ${sample.error ?? ""}`);
  return {
    evaluated: (sample.promptTokens ?? 0) - (sample.cachedTokens ?? 0),
    promptMs: sample.serverPromptMs ?? Number.NaN,
    ttftMs: sample.ttftMs,
  };
}

function decodeViaSidecar(
  client: GrpcClient,
  prompt: string,
  tokens: number,
  timeoutMs: number,
): Promise<StreamSample> {
  return streamGrpc(
    client,
    { input: { case: "prompt", value: prompt }, maxTokens: tokens, sampling: { temperature: TEMPERATURE, seed: SEED } },
    timeoutMs,
  );
}

function decodeViaPeer(url: string, prompt: string, tokens: number, timeoutMs: number): Promise<StreamSample> {
  const body = {
    model: "bench",
    prompt,
    max_tokens: tokens,
    temperature: TEMPERATURE,
    seed: SEED,
    stream: true,
    stream_options: { include_usage: true },
  };
  return streamSse(`${url}/v1/completions`, body, timeoutMs);
}

async function viaPeer(url: string, prompt: string, timeoutMs: number): Promise<LongRun> {
  const sent = performance.now();
  const body = (await postJson(
    `${url}/completion`,
    { prompt, n_predict: 1, cache_prompt: true, temperature: TEMPERATURE, seed: SEED },
    timeoutMs,
  )) as {
    timings?: { prompt_n?: number; prompt_ms?: number };
  };
  return {
    evaluated: body.timings?.prompt_n ?? 0,
    promptMs: body.timings?.prompt_ms ?? Number.NaN,
    ttftMs: performance.now() - sent,
  };
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
          if (response.statusCode !== 200)
            reject(new Error(`long prompt through llama-server: HTTP ${response.statusCode} ${text.slice(0, 200)}`));
          else resolve(JSON.parse(text));
        });
      },
    );
    request.on("error", reject);
    request.end(JSON.stringify(value));
  });
}

/** How one server runs a prompt (1 token) and the decode row. */
interface LongRunner {
  readonly name: string;
  prompt(prompt: string): Promise<LongRun>;
  decode(prompt: string): Promise<StreamSample>;
}

/** Measures the sidecar behind `client` and each llama-server in `peers` on the same prompt. */
export async function runLong(
  client: GrpcClient,
  peers: readonly { label: string; url: string }[],
  options: { tokens: number; contextSize: number; decodeTokens: number; timeoutMs: number },
  log: (m: string) => void,
): Promise<LongResult> {
  const { text, tokens } = await longText(client, options.tokens);
  log(
    `long prompt: ${tokens} tokens on a ${options.contextSize}-token context, then ${options.decodeTokens} tokens ` +
      `decoded`,
  );
  const cold = text;
  const cached = `${text}\n\n${userTurn(1)}`;
  const { timeoutMs, decodeTokens } = options;
  const runners: LongRunner[] = [
    {
      name: "sidecar (native gRPC)",
      prompt: (p) => viaSidecar(client, p, timeoutMs),
      decode: (p) => decodeViaSidecar(client, p, decodeTokens, timeoutMs),
    },
    ...peers.map((peer) => ({
      name: peer.label,
      prompt: (p: string) => viaPeer(peer.url, p, timeoutMs),
      decode: (p: string) => decodeViaPeer(peer.url, p, decodeTokens, timeoutMs),
    })),
  ];
  const parties: LongParty[] = [];
  for (const runner of runners) {
    const coldRun = await runner.prompt(cold);
    const cachedRun = await runner.prompt(cached);
    const decode = await runner.decode(cached);
    const party = { name: runner.name, cold: coldRun, cached: cachedRun, decode };
    log(
      `long prompt, ${runner.name}: cold ${coldRun.promptMs.toFixed(0)} ms, prefix cached ` +
        `${cachedRun.promptMs.toFixed(0)} ms ` +
        `(${cachedRun.evaluated} tokens evaluated), decode ${longDecodeRate(party).toFixed(1)} tok/s over ` +
        `${decode.tokens} tokens` +
        (decode.outcome === "completed" ? "" : ` (${decode.outcome} ${decode.error ?? ""})`),
    );
    parties.push(party);
  }
  return { promptTokens: tokens, contextSize: options.contextSize, decodeTokens, parties };
}
