// What a scrape of /metrics reads from the catalogue: the load of every loaded model summed (the
// single-model gauges: queue, running, KV cache, KV tier) and each catalogued model's own gauges.
import type { ModelRegistry } from "../catalogue/registry.js";
import type { KvTierStats } from "../engine/llama/kv-tier.js";
import type { Load, ModelLoad } from "./prometheus.js";

/** The KV tier's counters summed over the models that have one; undefined when none has. */
function kvTierSum(stats: readonly KvTierStats[]): KvTierStats | undefined {
  const [first, ...rest] = stats;
  if (first === undefined) return undefined;
  const sum = { ...first } as Record<keyof KvTierStats, number>;
  for (const s of rest) for (const key of Object.keys(sum) as (keyof KvTierStats)[]) sum[key] += s[key];
  return sum;
}

export function modelLoads(registry: ModelRegistry): Load {
  // A LoRA adapter's sequences are a context of their own beside its base's.
  const bases = registry.loaded();
  const adapters = bases.flatMap((m) => [...m.adapters.values()]);
  const loaded = [...bases, ...adapters];
  const cells = loaded.reduce((total, m) => total + m.pool.size * m.contextSize, 0);
  const held = loaded.reduce((total, m) => total + m.pool.heldTokens(), 0);
  const models: ModelLoad[] = registry.list().map((view) => ({
    model: view.entry.name,
    loaded: view.status === "loaded",
    loading: view.status === "loading",
    memoryBytes: view.status === "loaded" ? (view.estimate?.need.ram ?? 0) + (view.estimate?.need.vram ?? 0) : 0,
    requests: view.requests,
    draftedTokens: view.loaded?.drafter?.drafted ?? 0,
    acceptedTokens: view.loaded?.drafter?.accepted ?? 0,
  }));
  return {
    queued: loaded.reduce((total, m) => total + m.pool.queued, 0),
    batchQueued: loaded.reduce((total, m) => total + m.pool.queuedBatch, 0),
    batchRunning: loaded.reduce((total, m) => total + m.pool.batchRunning.requests, 0),
    running: loaded.reduce((total, m) => total + m.pool.busy, 0),
    kvCacheUsage: cells === 0 ? 0 : held / cells,
    kvTier: kvTierSum(loaded.flatMap((m) => (m.kvTier === undefined ? [] : [m.kvTier.stats]))),
    models,
    lora: {
      running: adapters.filter((m) => m.pool.busy > 0).map((m) => m.id),
      waiting: adapters.filter((m) => m.pool.queued > 0).map((m) => m.id),
      max: adapters.length,
    },
  };
}
