// The parties of the single-stream comparison and the sweep, each as "run one stream of prompt
// variant N": (a) in-process, (b) sidecar over native gRPC, (c) edge on Node, (d) edge under
// wrangler dev, and the peers (llama-server, each build).
import type { Child } from "./children.js";
import type { InProcessRun } from "./children/inprocess.js";
import { streamGrpc, type GrpcClient } from "./clients/grpc.js";
import { streamSse } from "./clients/sse.js";
import type { PeerVariant } from "./peer-paths.js";
import type { StreamSample } from "./sample.js";
import { SEED, streamPrompt, TEMPERATURE } from "./workload.js";

/** `peer-default` / `peer-prebuilt`: llama-server with llama.cpp's default build / built like the prebuilt library. */
export type PartyKey = "a" | "b" | "c" | "r" | "d" | "m" | `peer-${PeerVariant}`;

export interface Party {
  readonly key: PartyKey;
  readonly label: string;
  run(variant: number): Promise<StreamSample>;
}

export interface Workload {
  readonly maxTokens: number;
  readonly timeoutMs: number;
}

export function inProcessParty(child: Child<unknown>, w: Workload): Party {
  return {
    key: "a",
    label: "(a) node-llama-cpp in-process",
    run: (variant) =>
      child.call<StreamSample>("run", {
        prompt: streamPrompt(variant),
        maxTokens: w.maxTokens,
        temperature: TEMPERATURE,
        seed: SEED,
      } satisfies InProcessRun),
  };
}

export function grpcParty(client: GrpcClient, w: Workload): Party {
  return {
    key: "b",
    label: "(b) sidecar, native gRPC",
    run: (variant) =>
      streamGrpc(
        client,
        {
          input: { case: "prompt", value: streamPrompt(variant) },
          maxTokens: w.maxTokens,
          sampling: { temperature: TEMPERATURE, seed: SEED },
        },
        w.timeoutMs,
      ),
  };
}

/** The OpenAI completions body every HTTP party gets (the edge and llama-server alike). */
export function completionBody(variant: number, maxTokens: number): Record<string, unknown> {
  return {
    model: "bench",
    prompt: streamPrompt(variant),
    max_tokens: maxTokens,
    temperature: TEMPERATURE,
    seed: SEED,
    stream: true,
    stream_options: { include_usage: true },
  };
}

export function httpParty(
  key: Exclude<PartyKey, "a" | "b">,
  label: string,
  baseUrl: string,
  w: Workload,
  headers: Readonly<Record<string, string>> = {},
): Party {
  return {
    key,
    label,
    run: (variant) =>
      streamSse(`${baseUrl}/v1/completions`, completionBody(variant, w.maxTokens), w.timeoutMs, headers),
  };
}
