// Prefix reuse: one ~1,500-token system prompt, different user turns. The first request of a
// round evaluates everything (cold); later ones find the system prompt in a sequence's KV cache.
// Through native gRPC (the sidecar's own prompt timing and cached-token count) and through the
// edge's chat completions (client time to first token, usage.prompt_tokens_details.cached_tokens).
import { Role } from "../../proto/gen/inference/v1/inference_pb.js";
import { streamGrpc, type GrpcClient } from "../clients/grpc.js";
import { streamSse } from "../clients/sse.js";
import type { StreamSample } from "../sample.js";
import { SEED, systemPrompt, TEMPERATURE, userTurn } from "../workload.js";

/** Tokens generated per prefix request: the prompt is what is measured here. */
const REPLY_TOKENS = 8;

export interface PrefixResult {
  readonly systemPromptTokens: number;
  readonly words: number;
  readonly grpc: { readonly cold: StreamSample[]; readonly warm: StreamSample[] };
  readonly edge: { readonly cold: StreamSample[]; readonly warm: StreamSample[] };
}

/** Finds the filler length whose system prompt (chat-rendered) has about `tokens` tokens. */
export async function calibrate(client: GrpcClient, tokens: number): Promise<{ words: number; tokens: number }> {
  const count = async (words: number): Promise<number> =>
    (
      await client.tokenize({
        input: { case: "chat", value: { messages: [{ role: Role.SYSTEM, content: systemPrompt(0, words) }] } },
      })
    ).tokens.length;
  let words = Math.round(tokens * 0.7);
  let got = await count(words);
  for (let i = 0; i < 6 && Math.abs(got - tokens) > 5; i++) {
    words = Math.max(1, Math.round((words * tokens) / got));
    got = await count(words);
  }
  return { words, tokens: got };
}

export async function runPrefix(
  client: GrpcClient,
  edgeUrl: string,
  /** Rounds are numbered from `firstRound` (default 0): each round has its own system prompt. */
  options: { rounds: number; warm: number; tokens: number; timeoutMs: number; firstRound?: number },
  log: (m: string) => void,
): Promise<PrefixResult> {
  const { words, tokens } = await calibrate(client, options.tokens);
  log(`prefix: system prompt of ${tokens} tokens (${words} filler words)`);
  const result: PrefixResult = {
    systemPromptTokens: tokens,
    words,
    grpc: { cold: [], warm: [] },
    edge: { cold: [], warm: [] },
  };
  const viaGrpc = (system: string, turn: number): Promise<StreamSample> =>
    streamGrpc(
      client,
      {
        input: {
          case: "chat",
          value: {
            messages: [
              { role: Role.SYSTEM, content: system },
              { role: Role.USER, content: userTurn(turn) },
            ],
          },
        },
        maxTokens: REPLY_TOKENS,
        sampling: { temperature: TEMPERATURE, seed: SEED },
      },
      options.timeoutMs,
    );
  const viaEdge = (system: string, turn: number): Promise<StreamSample> =>
    streamSse(
      `${edgeUrl}/v1/chat/completions`,
      {
        model: "bench",
        messages: [
          { role: "system", content: system },
          { role: "user", content: userTurn(turn) },
        ],
        max_tokens: REPLY_TOKENS,
        temperature: TEMPERATURE,
        seed: SEED,
        stream: true,
        stream_options: { include_usage: true },
      },
      options.timeoutMs,
    );
  const first = options.firstRound ?? 0;
  for (let round = first; round < first + options.rounds; round++) {
    for (const [path, run, offset] of [["grpc", viaGrpc, 1] as const, ["edge", viaEdge, 1001] as const]) {
      // A new system prompt per round and path: its first request is cold.
      const system = systemPrompt(round + offset, words);
      result[path].cold.push(await run(system, 0));
      for (let turn = 1; turn <= options.warm; turn++) result[path].warm.push(await run(system, turn));
    }
    log(`prefix round ${round - first + 1}/${options.rounds} done`);
  }
  return result;
}
