// GET /metrics as Prometheus text (prom-client: HELP and TYPE lines). Counters and gauges are
// read when scraped. Three gauges also carry the names an Inference Gateway's endpoint picker
// reads by default (the vLLM names of the Gateway API Inference Extension's model server
// protocol): queue length, running requests and KV-cache use (docs/contract.md, "Metrics").
import { Counter, Gauge, type Registry } from "prom-client";
import { grammarCache } from "../engine/grammar/constraint.js";
import type { EngineMetrics } from "../engine/engine-metrics.js";
import type { KvTierStats } from "../engine/llama/kv-tier.js";
import { loraInfoGauge, type LoraLoad } from "./lora-info.js";

/** The load a scrape reads from the engine. */
export interface Load {
  /** Interactive requests waiting for a sequence. */
  readonly queued: number;
  /** Sequences in use (batch requests' included). */
  readonly running: number;
  /** PRIORITY_BATCH requests waiting for a sequence, and those holding sequences. */
  readonly batchQueued?: number;
  readonly batchRunning?: number;
  /** Share of the KV cache that running sequences hold, 0..1. */
  readonly kvCacheUsage: number;
  /** The KV cache tier in host memory, when `--cache-ram` is not 0. */
  readonly kvTier?: KvTierStats | undefined;
  /** Each catalogued model. */
  readonly models?: readonly ModelLoad[];
  /** The LoRA adapters' requests (lora-info.ts). */
  readonly lora?: LoraLoad;
}

/** One catalogued model's gauges (labelled `model`). */
export interface ModelLoad {
  readonly model: string;
  readonly loaded: boolean;
  readonly loading: boolean;
  /** Memory it takes when loaded (its estimate), else 0. */
  readonly memoryBytes: number;
  /** Requests using it or waiting for it. */
  readonly requests: number;
  /**
   * Tokens its replies drafted by prompt lookup, and of those the tokens they took, since its load (prompt-lookup.ts).
   */
  readonly draftedTokens: number;
  readonly acceptedTokens: number;
}

function counter(registry: Registry, name: string, help: string, read: () => number): void {
  new Counter({
    name,
    help,
    registers: [registry],
    collect() {
      this.reset();
      this.inc(read());
    },
  });
}

function gauge(registry: Registry, name: string, help: string, read: () => number): void {
  new Gauge({
    name,
    help,
    registers: [registry],
    collect() {
      this.set(read());
    },
  });
}

/** The counters of requests, tokens and prefix copies, read from the engine's own. */
function requestCounters(registry: Registry, metrics: EngineMetrics): void {
  counter(registry, "sidecar_requests_started_total", "Requests that got a sequence.", () => metrics.requestsStarted);
  counter(
    registry,
    "sidecar_requests_rejected_total",
    "Requests refused because every sequence was busy and the queue full.",
    () => metrics.requestsRejected,
  );
  counter(
    registry,
    "sidecar_requests_cancelled_in_queue_total",
    "Requests whose caller left while they waited.",
    () => metrics.requestsCancelledInQueue,
  );
  counter(
    registry,
    "sidecar_generations_aborted_total",
    "Generations stopped because the caller left.",
    () => metrics.generationsAborted,
  );
  counter(
    registry,
    "sidecar_batch_preempted_total",
    "Batch (PRIORITY_BATCH) generations stopped to free a sequence for an interactive request (ended with ABORTED).",
    () => metrics.generationsPreempted,
  );
  counter(registry, "sidecar_tokens_generated_total", "Tokens generated.", () => metrics.tokensGenerated);
  counter(
    registry,
    "sidecar_prompt_tokens_total",
    "Prompt tokens of finished generations.",
    () => metrics.promptTokens,
  );
  counter(
    registry,
    "sidecar_prefix_copies_total",
    "Prompts whose prefix was copied from another sequence instead of evaluated.",
    () => metrics.prefixCopies,
  );
  counter(
    registry,
    "sidecar_prefix_copied_tokens_total",
    "Prompt tokens those copies gave.",
    () => metrics.prefixCopiedTokens,
  );
}

/** The load gauges, under this server's names and the ones an Inference Gateway's endpoint picker reads. */
function loadGauges(registry: Registry, metrics: EngineMetrics, load: () => Load): void {
  gauge(registry, "sidecar_generations_active", "Generations running now.", () => metrics.generationsActive);
  gauge(registry, "sidecar_sequences_busy", "Sequences in use.", () => load().running);
  gauge(registry, "sidecar_queue_length", "Interactive requests waiting for a sequence.", () => load().queued);
  gauge(
    registry,
    "sidecar_batch_requests_waiting",
    "Batch (PRIORITY_BATCH) requests waiting for a sequence.",
    () => load().batchQueued ?? 0,
  );
  gauge(
    registry,
    "sidecar_batch_requests_running",
    "Batch (PRIORITY_BATCH) requests holding sequences.",
    () => load().batchRunning ?? 0,
  );
  gauge(
    registry,
    "sidecar_kv_cache_usage_ratio",
    "Share of the KV cache held by running sequences (0..1).",
    () => load().kvCacheUsage,
  );
  gauge(
    registry,
    "vllm:num_requests_waiting",
    "Interactive requests waiting for a sequence (Inference Gateway name).",
    () => load().queued,
  );
  gauge(registry, "vllm:num_requests_running", "Requests generating (Inference Gateway name).", () => load().running);
  gauge(
    registry,
    "vllm:gpu_cache_usage_perc",
    "KV-cache use, 1 = full (Inference Gateway name).",
    () => load().kvCacheUsage,
  );
  gauge(
    registry,
    "vllm:kv_cache_usage_perc",
    "KV-cache use, 1 = full (newer Inference Gateway name).",
    () => load().kvCacheUsage,
  );
}

/** Registers every metric on `metrics.registry`; returns the renderer. */
export function prometheusMetrics(metrics: EngineMetrics, load: () => Load): () => Promise<string> {
  const registry = metrics.registry;
  requestCounters(registry, metrics);
  new Counter({
    name: "sidecar_requests_total",
    help:
      "Requests by outcome: completed (ran to a finish), aborted (caller left while generating), " +
      "preempted (a batch request that gave way), rejected (queue full), cancelled_in_queue.",
    labelNames: ["outcome"],
    registers: [registry],
    collect() {
      this.reset();
      this.inc(
        { outcome: "completed" },
        metrics.requestsStarted - metrics.generationsActive - metrics.generationsAborted - metrics.generationsPreempted,
      );
      this.inc({ outcome: "aborted" }, metrics.generationsAborted);
      this.inc({ outcome: "preempted" }, metrics.generationsPreempted);
      this.inc({ outcome: "rejected" }, metrics.requestsRejected);
      this.inc({ outcome: "cancelled_in_queue" }, metrics.requestsCancelledInQueue);
    },
  });
  counter(
    registry,
    "sidecar_grammar_builds_total",
    "Grammars built (output constraints, tool calls).",
    () => grammarCache.builds,
  );
  counter(
    registry,
    "sidecar_grammar_cache_hits_total",
    "Grammars found already built (the same schema again).",
    () => grammarCache.hits,
  );
  loadGauges(registry, metrics, load);
  kvTierMetrics(registry, () => load().kvTier);
  modelMetrics(registry, () => load().models ?? []);
  loraInfoGauge(registry, () => load().lora ?? { running: [], waiting: [], max: 0 });
  return () => registry.metrics();
}

/** Per-model gauges, one series per catalogued model (docs/contract.md, "Metrics"). */
function modelMetrics(registry: Registry, read: () => readonly ModelLoad[]): void {
  const perModel = (name: string, help: string, value: (m: ModelLoad) => number): void => {
    new Gauge({
      name,
      help,
      labelNames: ["model"],
      registers: [registry],
      collect() {
        this.reset();
        for (const m of read()) this.set({ model: m.model }, value(m));
      },
    });
  };
  perModel("sidecar_model_loaded", "1 while the model is loaded.", (m) => Number(m.loaded));
  perModel("sidecar_model_loading", "1 while the model loads.", (m) => Number(m.loading));
  perModel(
    "sidecar_model_memory_bytes",
    "Memory the loaded model takes (its weights and contexts, estimated); 0 when not loaded.",
    (m) => m.memoryBytes,
  );
  perModel("sidecar_model_requests", "Requests using the model or waiting for it to load.", (m) => m.requests);
  const perModelCounter = (name: string, label: string, help: string, value: (m: ModelLoad) => number): void => {
    new Counter({
      name,
      help,
      labelNames: [label],
      registers: [registry],
      collect() {
        this.reset();
        for (const m of read()) if (m.loaded) this.inc({ [label]: m.model }, value(m));
      },
    });
  };
  const drafted = "Tokens drafted by prompt lookup (speculative decoding) and checked, since the model's load.";
  const accepted = "Of those, tokens the model's own choice confirmed and the reply took.";
  perModelCounter("sidecar_model_draft_tokens_total", "model", drafted, (m) => m.draftedTokens);
  perModelCounter("sidecar_model_draft_accepted_tokens_total", "model", accepted, (m) => m.acceptedTokens);
  perModelCounter(
    "vllm:spec_decode_num_draft_tokens_total",
    "model_name",
    `${drafted} (vLLM's name)`,
    (m) => m.draftedTokens,
  );
  perModelCounter(
    "vllm:spec_decode_num_accepted_tokens_total",
    "model_name",
    `${accepted} (vLLM's name)`,
    (m) => m.acceptedTokens,
  );
}

/** The KV cache tier in host memory (sidecar/engine/llama/kv-tier.ts); all 0 when it is off. */
function kvTierMetrics(registry: Registry, read: () => KvTierStats | undefined): void {
  const of = (key: keyof KvTierStats) => () => read()?.[key] ?? 0;
  gauge(registry, "sidecar_kv_tier_states", "Sequence states the KV cache tier holds.", of("states"));
  gauge(
    registry,
    "sidecar_kv_tier_marked_states",
    "Of those, states a cache mark in force keeps ahead of the rest.",
    of("marked"),
  );
  gauge(registry, "sidecar_kv_tier_bytes", "Bytes of the sequence states the KV cache tier holds.", of("bytes"));
  counter(registry, "sidecar_kv_tier_hits_total", "Prompts whose prefix was restored from a saved state.", of("hits"));
  counter(
    registry,
    "sidecar_kv_tier_misses_total",
    "Prompts mostly evaluated cold that no saved state helped (or whose state did not load).",
    of("misses"),
  );
  counter(
    registry,
    "sidecar_kv_tier_saves_total",
    "Sequence states saved before their sequence was taken over.",
    of("saves"),
  );
  counter(
    registry,
    "sidecar_kv_tier_evictions_total",
    "Saved states removed to stay within --cache-ram: unmarked ones least recently used first, then marked ones by " +
      "expiry.",
    of("evictions"),
  );
  counter(
    registry,
    "sidecar_kv_tier_dropped_total",
    "Saved states that failed to load and were dropped.",
    of("dropped"),
  );
  counter(
    registry,
    "sidecar_kv_tier_restore_seconds_total",
    "Time spent restoring states (over hits: the mean restore time).",
    of("restoreSeconds"),
  );
}
