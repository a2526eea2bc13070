/**
 * `npm run bench:decode-split -- [--model PATH] [--streams N] [--tokens N] [--rounds N] [--flash-attention]`
 * (~1 minute, not part of `npm run bench`): where a decode step's time goes in node-llama-cpp, in this process. Each
 * round evaluates `--streams` sequences of `--tokens` greedy tokens at once and times node-llama-cpp's
 * native `decodeBatch` and `sampleToken` calls against the wall clock: the rest is JavaScript. Run it
 * with `LD_LIBRARY_PATH=<a llama.cpp build's bin>` to put other engine libraries of the same commit
 * under the same addon (docs/performance.md, "Where a decode step goes, in process").
 */
import { parseArgs } from "node:util";
import { getLlama, type LlamaContext, LlamaLogLevel } from "node-llama-cpp";
import { LOCAL_BUILD_CMAKE_OPTIONS } from "../sidecar/engine/llama/model.js";

interface Split {
  decodeMs: number;
  decodes: number;
  sampleMs: number;
  samples: number;
}

/** Wraps the context's native calls (node-llama-cpp's `_ctx`, an internal) to time them into `split`. */
function timeNativeCalls(context: LlamaContext, split: Split): void {
  const internals = context as unknown as { _ctx: Record<string | symbol, unknown> };
  const native = internals._ctx;
  const timed = (name: "decodeBatch" | "sampleToken") => {
    const call = (native[name] as (...args: unknown[]) => Promise<unknown>).bind(native);
    return async (...args: unknown[]) => {
      const start = performance.now();
      const result = await call(...args);
      const ms = performance.now() - start;
      if (name === "decodeBatch") {
        split.decodeMs += ms;
        split.decodes++;
      } else {
        split.sampleMs += ms;
        split.samples++;
      }
      return result;
    };
  };
  const decodeBatch = timed("decodeBatch");
  const sampleToken = timed("sampleToken");
  internals._ctx = new Proxy(native, {
    get(target, prop) {
      if (prop === "decodeBatch") return decodeBatch;
      if (prop === "sampleToken") return sampleToken;
      const value = target[prop];
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      model: { type: "string", default: "models/random-850m.gguf" },
      streams: { type: "string", default: "1" },
      tokens: { type: "string", default: "48" },
      rounds: { type: "string", default: "3" },
      "flash-attention": { type: "boolean", default: false },
    },
  });
  const [streams, tokens, rounds] = [Number(values.streams), Number(values.tokens), Number(values.rounds)];
  const cmakeOptions = { ...LOCAL_BUILD_CMAKE_OPTIONS };
  const llama = await getLlama({
    gpu: false,
    build: "never",
    maxThreads: 2,
    logLevel: LlamaLogLevel.error,
    cmakeOptions,
  });
  const model = await llama.loadModel({ modelPath: values.model });
  const context = await model.createContext({
    sequences: 4,
    contextSize: 8192,
    threads: 2,
    flashAttention: values["flash-attention"],
  });
  const split: Split = { decodeMs: 0, decodes: 0, sampleMs: 0, samples: 0 };
  timeNativeCalls(context, split);
  const sequences = Array.from({ length: streams }, () => context.getSequence());
  for (let round = 0; round < rounds; round++) {
    Object.assign(split, { decodeMs: 0, decodes: 0, sampleMs: 0, samples: 0 });
    await Promise.all(sequences.map((sequence) => sequence.clearHistory()));
    const start = performance.now();
    await Promise.all(
      sequences.map(async (sequence, i) => {
        let n = 0;
        for await (const _ of sequence.evaluate(model.tokenize(`Once upon a time ${i}${round} there was a`), {
          temperature: 0,
        }))
          if (++n >= tokens) break;
      }),
    );
    const wallMs = performance.now() - start;
    const rest = wallMs - split.decodeMs - split.sampleMs;
    console.log(
      `${llama.buildType}, flash attention ${values["flash-attention"] ? "on" : "off"}, ${streams} stream(s): ` +
        `${((streams * tokens * 1000) / wallMs).toFixed(1)} tok/s; ` +
        `${split.decodes} decodes of ${(split.decodeMs / split.decodes).toFixed(2)} ms, ` +
        `${split.samples} samplings of ${(split.sampleMs / split.samples).toFixed(3)} ms, ` +
        `the rest ${rest.toFixed(0)} ms`,
    );
  }
  await context.dispose();
  await model.dispose();
}

await main();
