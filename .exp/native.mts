import { create } from "@bufbuild/protobuf";
import { GenerateRequestSchema } from "../proto/gen/inference/v1/inference_pb.ts";
import { FIRST_TOKEN_POSITION, generate } from "../sidecar/engine/decode/generate.ts";
import { EngineMetrics } from "../sidecar/engine/metrics.ts";
import { loadModel } from "../sidecar/engine/llama/model.ts";
import { readAhead } from "../sidecar/engine/streams/read-ahead.ts";
const N = Number(process.env.N ?? 4);
const loaded = await loadModel({ modelPath: `models/${process.env.MODEL ?? "random-60m"}.gguf`, threads: 1, threadsBatch: 2, engine: "auto", sequences: 8, contextSize: "auto", maxQueue: 8, queueTimeoutMs: 1000 } as never);
const ctx = loaded.context as any; const native = ctx._ctx;
const sync: Record<string, [number, number]> = {};
ctx._ctx = new Proxy(native, { get(t, k) { const v = t[k]; if (typeof v !== "function") return v;
  return (...a: unknown[]) => { const t0 = performance.now(); const r = v.apply(t, a); const d = performance.now() - t0; const e = (sync[String(k)] ??= [0, 0]); e[0]++; e[1] += d; return r; }; } });
const run = async (i: number, r: number) => {
  const request = create(GenerateRequestSchema, { input: { case: "prompt", value: `Story ${i} ${r}: once upon a time there was` }, maxTokens: 48, sampling: { temperature: 0 } });
  for await (const _ of readAhead(generate(loaded, request, new AbortController().signal, new EngineMetrics()), { atOnce: (p) => p === FIRST_TOKEN_POSITION })) {}
};
for (let r = 0; r < 3; r++) { for (const k in sync) delete sync[k]; const t0 = performance.now(); await Promise.all(Array.from({ length: N }, (_, i) => run(i, r))); const wall = performance.now() - t0;
  console.log(`wall ${wall.toFixed(0)}`, Object.entries(sync).map(([k, [n, d]]) => `${k} ${n}× ${(d / n).toFixed(3)}ms`).join(", ")); }
process.exit(0);
