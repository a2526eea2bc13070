import { loadModel } from "../sidecar/engine/llama/model.ts";
import { copySequence } from "../sidecar/engine/llama/sequence-copy.ts";
const N = Number(process.env.TOK ?? 2000);
const loaded = await loadModel({ modelPath: `models/${process.env.MODEL ?? "random-60m"}.gguf`, threads: 2, threadsBatch: 2, engine: "auto", sequences: 4, contextSize: Number(process.env.CTX ?? 16384), maxQueue: 8, queueTimeoutMs: 1000 } as never);
const [a, b] = loaded.pool.all();
const t0 = performance.now();
await a!.evaluateWithoutGeneratingNewTokens(Array.from({ length: N }, (_, k) => 100 + (k % 900)) as never);
const evalMs = performance.now() - t0;
for (let r = 0; r < 3; r++) {
  const t1 = performance.now();
  await copySequence(loaded.context, (s, w) => loaded.scheduler.between(s, w), a!, [b!], loaded.states);
  console.log(`${process.env.MODEL ?? "random-60m"} ${N} tokens: eval ${evalMs.toFixed(0)} ms (${(evalMs / N).toFixed(2)}/token), copy ${(performance.now() - t1).toFixed(1)} ms, states ${loaded.states ? "memory" : "files"}, b holds ${b!.nextTokenIndex}`);
}
process.exit(0);
