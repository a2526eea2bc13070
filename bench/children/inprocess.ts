// Party (a): node-llama-cpp in this process, loaded by the sidecar's own `loadModel` with the
// sidecar's settings, driven by a raw `sequence.evaluate` loop (no gRPC, no text decoding).
import { create } from "@bufbuild/protobuf";
import type { Token } from "node-llama-cpp";
import { SamplingOptionsSchema } from "../../proto/gen/inference/v1/inference_pb.js";
import { loadModel, type LoadedModel } from "../../sidecar/engine/llama/model.js";
import { tokenizeRaw } from "../../sidecar/engine/chat/prompt.js";
import { buildSampling } from "../../sidecar/engine/decode/sampling.js";
import { failToParent, serveParent } from "../ipc.js";
import type { StreamSample } from "../sample.js";
import { argsOf, exitOnSigterm, type EngineArgs, type EngineReady } from "./args.js";

export interface InProcessRun {
  readonly prompt: string;
  readonly maxTokens: number;
  readonly temperature: number;
  readonly seed: number;
}

async function run(loaded: LoadedModel, request: InProcessRun): Promise<StreamSample> {
  const started = performance.now();
  const tokens = tokenizeRaw(loaded, request.prompt);
  const sequence = await loaded.pool.acquire(tokens, new AbortController().signal);
  try {
    // As the sidecar does: keep the cached prefix the prompt shares, evaluate the rest.
    const shared = Math.min(sequence.compareContextTokens(tokens).firstDifferentIndex, tokens.length - 1);
    if (sequence.nextTokenIndex > shared)
      await sequence.eraseContextTokenRanges([{ start: shared, end: sequence.nextTokenIndex }]);
    const generated: Token[] = [];
    const sampling = buildSampling(
      loaded,
      create(SamplingOptionsSchema, { temperature: request.temperature, seed: request.seed }),
      generated,
    );
    let first: number | undefined;
    let last = started;
    const acceptedMs = performance.now() - started;
    for await (const token of sequence.evaluate(tokens.slice(shared), {
      ...sampling,
      contextShift: { strategy: "eraseBeginning" },
    })) {
      last = performance.now();
      first ??= last;
      generated.push(token);
      if (generated.length >= request.maxTokens) break;
    }
    const firstText = generated[0] === undefined ? "" : loaded.model.detokenize([generated[0]]);
    return {
      outcome: "completed",
      status: 200,
      acceptedMs,
      ttftMs: (first ?? last) - started,
      totalMs: last - started,
      tokens: generated.length,
      lastTokenMs: last - started,
      promptTokens: tokens.length,
      cachedTokens: shared,
      note: firstText === "" || firstText.includes("\uFFFD") ? "first token is part of a character" : undefined,
    };
  } finally {
    loaded.pool.release(sequence);
  }
}

try {
  const args = argsOf<EngineArgs>();
  const loaded = await loadModel({ ...args, queueTimeoutMs: 60_000 });
  exitOnSigterm(() => loaded.dispose());
  serveParent({ run: (request) => run(loaded, request as InProcessRun) }, {
    buildType: loaded.llama.buildType,
    threads: loaded.threads,
    threadsBatch: loaded.threadsBatch,
  } satisfies EngineReady);
} catch (error) {
  failToParent(error);
}
