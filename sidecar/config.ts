// The sidecar's settings: each flag, its environment variable, default and help (`usage`), read by `readConfig`.
import { readFileSync } from "node:fs";
import os from "node:os";
import { parseArgs } from "node:util";
import { ENGINE_CHOICES, FLASH_ATTENTION_CHOICES, type EngineChoice, type ModelOptions } from "./engine/llama/model.js";
import type { ResumableOptions } from "./engine/streams/resumable-streams.js";
import type { PrioritySetting } from "./nice-value.js";
import { parseGpu, parseGpuLayers } from "./engine/llama/gpu.js";
import { BATCH_THREADS_MAX_MIN_TOKENS } from "./engine/llama/batch-threads.js";
import { MAX_STEP_TOKENS } from "./engine/llama/batch-shares.js";
import { DEFAULT_LOOKUP_DRAFT } from "./engine/llama/prompt-lookup.js";
import { DRAFT_MIN_P } from "./engine/llama/draft-model.js";
import { DEFAULT_KV_BLOCK_SIZE, type KvEventsSettings } from "./kv-events/settings.js";
import { traceSettingsFromEnv, type SidecarTraceSettings } from "./trace/trace-settings.js";

/** One `--lora`: an adapter's name, its file (a source like `--model`) and its default scale. */
export interface LoraFlag {
  readonly name: string;
  readonly path: string;
  readonly scale: number;
}

type EngineSettings =
  | "threads"
  | "threadsBatch"
  | "engine"
  | "sequences"
  | "maxQueue"
  | "queueTimeoutMs"
  | "embeddingContextSize"
  | "gpu"
  | "gpuLayers"
  | "cacheRam"
  | "cacheDir"
  | "flashAttention"
  | "specLookup"
  | "draftMinP"
  | "chatTemplate";

export interface SidecarConfig extends Pick<ModelOptions, EngineSettings> {
  /** Tokens per sequence, or "auto" (sized by memory). */
  readonly contextSize: number | "auto";
  /**
   * Every `--model`: a GGUF path, a name in `modelsDir`, or a remote model (catalogue/model-source.ts).
   * None (and no other source of models): the embedded demo model.
   */
  readonly models: readonly string[];
  /** Where models are named from and downloaded to. */
  readonly modelsDir?: string;
  /** Whether `--models-dir` was given explicitly: then every `.gguf` in it is in the catalogue. */
  readonly serveModelsDir?: boolean;
  /** `--models-preset`: the presets file (catalogue/presets.ts). */
  readonly modelsPreset?: string | undefined;
  readonly modelId: string | undefined;
  /** `--keep-alive` seconds (-1: never); unset: 300, or never with one model in the catalogue. */
  readonly keepAliveSeconds?: number | undefined;
  /** `--models-max`: models loaded at once. */
  readonly modelsMax?: number;
  /** `--preload`: models loaded at start. */
  readonly preload?: readonly string[];
  /** `--default-model`: the model that serves names the catalogue does not know. */
  readonly defaultModel?: string | undefined;
  /** `--mmproj`: the multimodal projector of the models given by `--model` (a preset's `mmproj` wins). */
  readonly mmproj?: string | undefined;
  /** `--model-draft`: the draft model of the models given by `--model` (a preset's `draft` wins for its model). */
  readonly modelDraft?: string | undefined;
  /** Every `--lora name=path[:scale]`: LoRA adapters of the one `--model` (presets' `lora` for others). */
  readonly lora?: readonly LoraFlag[];
  /** A separate GGUF for embeddings (resolved like `model`); none: the served model embeds. */
  readonly embeddingModel?: string | undefined;
  readonly host: string;
  readonly port: number;
  readonly drainMs: number;
  /** Scheduling priority of the main thread (see nice-value.ts); "off" when not given. */
  readonly priority?: PrioritySetting;
  /** The shared secret every call must carry (`authorization: Bearer <token>`); none: no check. */
  readonly token?: string | undefined;
  /** Silence on a call after which a heartbeat event is sent (proto: Heartbeat); 0 turns them off. */
  readonly heartbeatMs?: number;
  /** Resumable generations: grace period, retention after the finish, memory cap. */
  readonly resumable?: ResumableOptions;
  /** PEM files: with both, the port speaks TLS (native gRPC over HTTP/2, gRPC-Web over HTTPS). */
  readonly tlsCert?: string | undefined;
  readonly tlsKey?: string | undefined;
  /** A second port that serves only GET /metrics and GET /healthz, without the token (for a scraper
   * or a probe that cannot reach `host`, e.g. an Inference Gateway's endpoint picker); none: off. */
  readonly metricsPort?: number | undefined;
  readonly metricsHost?: string;
  /** The KV-cache events (`--kv-events`, sidecar/kv-events/); none: off. */
  readonly kvEvents?: KvEventsSettings | undefined;
  /** Traces (OTEL_EXPORTER_OTLP_*, sidecar/trace/); none: off. */
  readonly trace?: SidecarTraceSettings | undefined;
}

const options = {
  model: {
    type: "string",
    env: "MODEL",
    help:
      "GGUF file, a name in --models-dir, hf:<user>/<repo>/<file>.gguf or an https URL (downloaded once into " +
      "--models-dir, at its " +
      "first load); repeat the flag (MODEL: comma-separated) to serve several; default: the embedded demo model",
  },
  "models-dir": {
    type: "string",
    env: "MODELS_DIR",
    default: "models",
    help:
      "where models are named from and downloaded to; when given (flag or variable), every .gguf in it is served " +
      "too, by its file name",
  },
  "models-preset": {
    type: "string",
    env: "MODELS_PRESET",
    help:
      "JSON file of per-model options keyed by model name: model (a source: adds it), contextSize, sequences, " +
      "chatTemplate, gpuLayers, " +
      'specLookup, fimOrder, lora (LoRA adapters), alias (docs/contract.md, "Model catalogue (sidecar)")',
  },
  "default-model": {
    type: "string",
    env: "DEFAULT_MODEL",
    help: "with several models, the one that serves names the catalogue does not know (else 404)",
  },
  "keep-alive": {
    type: "string",
    env: "KEEP_ALIVE",
    help:
      "seconds a model stays loaded after its last request (0: unloaded at once, -1: never; a request's keep_alive " +
      "overrides it); " +
      "default: 300, or never with one model in the catalogue",
  },
  "models-max": {
    type: "string",
    env: "MODELS_MAX",
    default: "3",
    help: "models loaded at once; the least recently used idle one is unloaded to load another",
  },
  preload: {
    type: "string",
    env: "PRELOAD",
    help:
      "models to load at start (comma-separated names); with one model in the catalogue it is always loaded at " +
      "start",
  },
  "embedding-model": {
    type: "string",
    env: "EMBEDDING_MODEL",
    help: "a separate model for /v1/embeddings (path, name, hf: or https URL like --model); default: the served model",
  },
  mmproj: {
    type: "string",
    env: "MMPROJ",
    help:
      "the multimodal projector of the models given by --model (path, name, hf: or https URL like --model): images " +
      "(and sounds) in; default: mmproj-<model file name>.gguf beside the model, when there is one",
  },
  "model-draft": {
    type: "string",
    env: "MODEL_DRAFT",
    help:
      "a draft model of the same vocabulary for the models given by --model (path, name, hf: or https URL like " +
      "--model): speculative decoding in place of prompt lookup; a model whose vocabulary differs is refused at load",
  },
  lora: {
    type: "string",
    env: "LORA",
    help:
      "a LoRA adapter of the --model, name=path[:scale] (path, name, hf: or https URL like --model; scale default " +
      "1): served as a model of that name, loaded with its base; repeat the flag (LORA: comma-separated) for several",
  },
  "model-id": { type: "string", env: "MODEL_ID", help: "name clients use (default: the file name)" },
  "chat-template-file": {
    type: "string",
    env: "CHAT_TEMPLATE_FILE",
    help: "a Jinja chat template file served instead of the models' own (a preset's chatTemplate wins for its model)",
  },
  host: { type: "string", env: "SIDECAR_HOST", default: "127.0.0.1", help: "address to bind" },
  port: { type: "string", env: "SIDECAR_PORT", default: "50051", help: "port for native gRPC and gRPC-Web" },
  threads: {
    type: "string",
    env: "THREADS",
    help:
      "llama.cpp threads for one or a few streams' next tokens, or auto: all cores with a local build, half (>= " +
      "1) with the prebuilt one",
    default: "auto",
  },
  "threads-batch": {
    type: "string",
    env: "THREADS_BATCH",
    help:
      `llama.cpp threads for batches of several tokens (prompts, many streams: ${BATCH_THREADS_MAX_MIN_TOKENS} ` +
      `tokens or more on a ` +
      `model as small as 120 MB, 2 or more from ~450 MB up), or auto: every core; default: auto when --threads is, ` +
      `else the same number`,
  },
  engine: {
    type: "string",
    env: "ENGINE",
    default: "auto",
    help: "llama.cpp library: auto, prebuilt or local (npm run build:engine)",
  },
  gpu: {
    type: "string",
    env: "GPU",
    default: "auto",
    help:
      "llama.cpp GPU backend: auto (the best this host can load), cuda, vulkan, metal or false (CPU only); one this " +
      "host " +
      "cannot load stops the start, naming those it can",
  },
  "gpu-layers": {
    type: "string",
    env: "GPU_LAYERS",
    default: "auto",
    help: "model layers on the GPU: auto (what fits), max, or a number",
  },
  "flash-attention": {
    type: "string",
    env: "FLASH_ATTENTION",
    default: "auto",
    help:
      "llama.cpp's flash attention: on, off, or auto (on a CPU-only host: on with the engine build `npm ci` makes, " +
      "whose kernel keeps seeded replies, off with the prebuilt library; llama.cpp's own choice on a GPU)",
  },
  sequences: {
    type: "string",
    env: "SEQUENCES",
    default: "4",
    help: "requests generated at once (batched in one context)",
  },
  "spec-lookup": {
    type: "string",
    env: "SPEC_LOOKUP",
    default: String(DEFAULT_LOOKUP_DRAFT),
    help:
      `speculative decoding by prompt lookup: tokens drafted at most per step from where the reply's last tokens ` +
      `occur in its prompt (checked in the same decode, the reply unchanged; in steps a stream has alone, as many as ` +
      `the measured step cost pays for, unless the reply is seeded), 0 to ${MAX_STEP_TOKENS - 1}; 0: off`,
  },
  "draft-p-min": {
    type: "string",
    env: "DRAFT_P_MIN",
    default: String(DRAFT_MIN_P),
    help:
      "a draft model's guess ends at its first token it gives less than this probability (0 to 1; 0: every " +
      "guess is as long as it may be)",
  },
  "context-size": {
    type: "string",
    env: "CONTEXT_SIZE",
    default: "auto",
    help:
      "tokens per request (prompt + reply), or auto: the model's trained context, less if memory does not hold that " +
      "much for " +
      "every sequence (the start line says why)",
  },
  "embedding-context-size": {
    type: "string",
    env: "EMBEDDING_CONTEXT_SIZE",
    default: "8192",
    help:
      "tokens one embedding input, or one rerank query and document, may hold (capped by the model's trained " +
      "context)",
  },
  "max-queue": {
    type: "string",
    env: "MAX_QUEUE",
    default: "64",
    help:
      "interactive requests that may wait for a sequence; more get RESOURCE_EXHAUSTED (HTTP 429); batch ones " +
      "wait apart",
  },
  "queue-timeout-ms": {
    type: "string",
    env: "QUEUE_TIMEOUT_MS",
    default: "60000",
    help: "longest wait of an interactive request for a sequence (then DEADLINE_EXCEEDED, HTTP 504)",
  },
  "cache-ram": {
    type: "string",
    env: "CACHE_RAM",
    default: "auto",
    help:
      "MiB of host memory for sequences' KV states saved when another prompt takes their sequence and restored when " +
      "their " +
      "prompt returns (least recently used out first); auto: min(8192, half the free memory at start); 0: off",
  },
  "cache-dir": {
    type: "string",
    env: "CACHE_DIR",
    help:
      "keep the --cache-ram states in this folder, so a restarted sidecar still has them (each model and context " +
      "size in a " +
      "subfolder of its own, with an index.json, used by one running sidecar at a time; another gets a private " +
      "folder); " +
      "default: the sidecar's memory on the local engine build, else a private folder in /dev/shm when it has room " +
      "for the " +
      "budget (else the temp folder), removed at stop",
  },
  "drain-ms": {
    type: "string",
    env: "DRAIN_MS",
    default: "30000",
    help: "on SIGTERM, how long streams in progress may finish",
  },
  priority: {
    type: "string",
    env: "SIDECAR_PRIORITY",
    default: "auto",
    help:
      "nice value of the main thread, which every decode step waits for: auto (-5 when permitted: root or " +
      "CAP_SYS_NICE), off, or -20..19",
  },
  token: {
    type: "string",
    env: "SIDECAR_TOKEN",
    help:
      "shared secret every call must carry (authorization: Bearer <token>); required to listen on a non-loopback " +
      "address",
  },
  insecure: {
    type: "string",
    env: "SIDECAR_INSECURE",
    default: "false",
    help: "true: listen on a non-loopback address without a token",
  },
  "resume-grace-ms": {
    type: "string",
    env: "RESUME_GRACE_MS",
    default: "60000",
    help: "how long a resumable generation nobody reads goes on waiting for a reader (also the most a request may ask)",
  },
  "resume-retention-ms": {
    type: "string",
    env: "RESUME_RETENTION_MS",
    default: "300000",
    help: "how long a finished resumable generation can still be read",
  },
  "resume-buffer-mib": {
    type: "string",
    env: "RESUME_BUFFER_MIB",
    default: "64",
    help: "memory cap of all resumable generations' events (finished ones are dropped oldest first)",
  },
  "heartbeat-ms": {
    type: "string",
    env: "HEARTBEAT_MS",
    default: "5000",
    help: "a heartbeat event after this much silence on a call (0: none)",
  },
  "tls-cert": {
    type: "string",
    env: "SIDECAR_TLS_CERT",
    help: "PEM certificate (chain): the port speaks TLS (native gRPC over HTTP/2, gRPC-Web over HTTPS, chosen by ALPN)",
  },
  "tls-key": { type: "string", env: "SIDECAR_TLS_KEY", help: "PEM private key of --tls-cert" },
  "metrics-port": {
    type: "string",
    env: "METRICS_PORT",
    help:
      "a second port serving only GET /metrics and /healthz, without the token, for a scraper or probe that " +
      "cannot hold it (default: none)",
  },
  "metrics-host": { type: "string", env: "METRICS_HOST", default: "127.0.0.1", help: "address of --metrics-port" },
  "kv-events": {
    type: "string",
    env: "KV_EVENTS",
    help:
      "publish the KV-cache blocks each model holds as vLLM's KV-cache events (ZeroMQ PUB, msgpack), for llm-d's " +
      "precise prefix-cache scorer: tcp://*:5557 binds, tcp://<host>:<port> connects (default: off)",
  },
  "kv-events-pod": {
    type: "string",
    env: "KV_EVENTS_POD",
    help:
      "the pod in the events' topic kv@<pod>@<model>; llm-d's scorer knows a pod as <pod IP>:<port> of its " +
      "InferencePool (default: the host name)",
  },
  "kv-events-block-size": {
    type: "string",
    env: "KV_EVENTS_BLOCK_SIZE",
    default: String(DEFAULT_KV_BLOCK_SIZE),
    help: "tokens per block in the KV-cache events (llm-d's and vLLM's default block size)",
  },
  "kv-events-replay": {
    type: "string",
    env: "KV_EVENTS_REPLAY",
    help:
      "a ZeroMQ ROUTER address (tcp://*:5558) where a subscriber that joins late or sees the sidecar restart asks " +
      "for the last 10,000 batches again (default: none)",
  },
} as const;

/** The sidecar's flags and variables (`npm run docs:config` writes docs/configuration.md from them). */
export const SIDECAR_OPTIONS: Readonly<
  Record<string, { readonly env: string; readonly help: string; readonly default?: string }>
> = options;

export function usage(): string {
  const lines = Object.entries(options).map(([name, o]) => {
    const def = "default" in o ? ` [${o.default}]` : "";
    return `  --${name.padEnd(18)} ${o.env.padEnd(17)} ${o.help}${def}`;
  });
  return `usage: sidecar [flags]   (each flag can also be set by the environment variable shown)\n${lines.join("\n")}`;
}

function positiveInt(name: string, raw: string, min = 1): number {
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min)
    throw new Error(`--${name} must be an integer of at least ${min}, got "${raw}"`);
  return value;
}

function specLookupOf(raw: string): number {
  const value = positiveInt("spec-lookup", raw, 0);
  if (value > MAX_STEP_TOKENS - 1)
    throw new Error(`--spec-lookup must be at most ${MAX_STEP_TOKENS - 1}, got "${raw}"`);
  return value;
}

function probabilityOf(flag: string, raw: string): number {
  const value = Number(raw);
  if (raw.trim() === "" || !Number.isFinite(value) || value < 0 || value > 1)
    throw new Error(`--${flag} must be a number from 0 to 1, got "${raw}"`);
  return value;
}

/** `--kv-events` and its pod and block size; undefined when off. */
function kvEventsOf(get: (name: keyof typeof options) => string | undefined): KvEventsSettings | undefined {
  const endpoint = get("kv-events");
  if (endpoint === undefined || endpoint === "") return undefined;
  if (!/^(tcp|ipc|inproc):\/\/./.test(endpoint))
    throw new Error(`--kv-events must be a ZeroMQ address (tcp://*:5557, tcp://<host>:<port>), got "${endpoint}"`);
  const pod = get("kv-events-pod") ?? os.hostname();
  if (pod === "" || pod.includes("@")) throw new Error(`--kv-events-pod must be a name without "@", got "${pod}"`);
  const blockSize = positiveInt("kv-events-block-size", get("kv-events-block-size") ?? String(DEFAULT_KV_BLOCK_SIZE));
  const replay = get("kv-events-replay");
  if (replay !== undefined && !/^(tcp|ipc|inproc):\/\/./.test(replay))
    throw new Error(`--kv-events-replay must be a ZeroMQ address (tcp://*:5558), got "${replay}"`);
  return { endpoint, pod, blockSize, ...(replay === undefined || replay === "" ? {} : { replay }) };
}

function metricsPortOf(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const port = positiveInt("metrics-port", raw, 0);
  if (port > 65535) throw new Error(`--metrics-port must be at most 65535, got "${raw}"`);
  return port;
}

function contextSizeOf(raw: string): number | "auto" {
  return raw === "auto" ? "auto" : positiveInt("context-size", raw, 16);
}

function cacheRamOf(raw: string): number | "auto" {
  return raw === "auto" ? "auto" : positiveInt("cache-ram", raw, 0);
}

function priorityOf(raw: string): PrioritySetting {
  if (raw === "auto" || raw === "off") return raw;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < -20 || value > 19)
    throw new Error(`--priority must be auto, off or a nice value from -20 to 19, got "${raw}"`);
  return value;
}

/** True for 127.0.0.0/8, ::1 and localhost. */
function isLoopbackAddress(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** A sidecar reachable from other machines must not be callable by anyone who reaches it. */
function checkExposure(host: string, token: string | undefined, insecure: string): void {
  if (insecure !== "true" && insecure !== "false")
    throw new Error(`--insecure must be true or false, got "${insecure}"`);
  if (token === undefined && !isLoopbackAddress(host) && insecure !== "true") {
    throw new Error(
      `refusing to listen on ${host} without a token: anyone who reaches it could skip the edge. Set SIDECAR_TOKEN ` +
        `(and the ` +
        `same on the edge), or --insecure true to accept unauthenticated calls`,
    );
  }
}

/** Flags that may be given more than once. */
const REPEATED: readonly string[] = ["model", "preload", "lora"];

/** `--lora name=path[:scale]`: a scale is the last `:number`, so a path may hold colons (hf:…). */
export function parseLora(raw: string): LoraFlag {
  const at = raw.indexOf("=");
  const name = raw.slice(0, at).trim();
  const rest = raw.slice(at + 1).trim();
  if (at <= 0 || name === "" || rest === "")
    throw new Error(`--lora must be name=path[:scale] (e.g. pirate=adapters/pirate.gguf:0.8), got "${raw}"`);
  const scaled = /^(.+):(-?\d+(?:\.\d+)?)$/.exec(rest);
  return scaled === null
    ? { name, path: rest, scale: 1 }
    : { name, path: scaled[1] as string, scale: Number(scaled[2]) };
}

type Values = Record<string, string | boolean | (string | boolean)[] | undefined>;

/** A setting's value: the flag, else its variable (an empty one counts as unset), else its default. */
function reader(values: Values, env: NodeJS.ProcessEnv): (name: keyof typeof options) => string | undefined {
  return (name) => {
    const flag = values[name];
    if (typeof flag === "string") return flag;
    if (Array.isArray(flag)) return flag.join(",");
    const o = options[name];
    const fromEnv = env[o.env];
    if (fromEnv !== undefined && fromEnv !== "") return fromEnv;
    return "default" in o ? o.default : undefined;
  };
}

/** The catalogue's settings (docs/decisions.md, "Many models on one sidecar"). */
function catalogueSettings(
  values: Values,
  env: NodeJS.ProcessEnv,
  get: ReturnType<typeof reader>,
): Partial<SidecarConfig> & Pick<SidecarConfig, "models"> {
  // Each --model flag is one source (a path may hold a comma); MODEL separates several with commas.
  const flags = values["model"];
  const models = Array.isArray(flags) ? flags.map(String) : splitList(get("model"));
  const keepAlive = get("keep-alive");
  if (keepAlive !== undefined && !/^-?\d+$/.test(keepAlive))
    throw new Error(`--keep-alive must be a number of seconds (0: at once, -1: never), got "${keepAlive}"`);
  const seconds = keepAlive === undefined ? undefined : Number(keepAlive);
  if (seconds !== undefined && seconds < -1)
    throw new Error(`--keep-alive must be -1 (never) or a number of seconds, got "${keepAlive}"`);
  return {
    models,
    modelsDir: get("models-dir") ?? "models",
    serveModelsDir: values["models-dir"] !== undefined || (env["MODELS_DIR"] ?? "") !== "",
    modelsPreset: get("models-preset"),
    keepAliveSeconds: seconds,
    modelsMax: positiveInt("models-max", get("models-max") ?? "3"),
    preload: splitList(get("preload")),
    defaultModel: get("default-model"),
    modelDraft: get("model-draft"),
    mmproj: get("mmproj"),
    lora: (Array.isArray(values["lora"]) ? values["lora"].map(String) : splitList(get("lora"))).map(parseLora),
  };
}

/** `--chat-template-file`'s template; a file that cannot be read, or is empty, stops the start. */
function chatTemplateFile(file: string | undefined): { chatTemplate?: string } {
  if (file === undefined) return {};
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new Error(
      `--chat-template-file: cannot read "${file}": ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  if (text.trim() === "") throw new Error(`--chat-template-file: "${file}" is empty`);
  return { chatTemplate: text };
}

function splitList(raw: string | undefined): string[] {
  return (raw ?? "")
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item !== "");
}

/** Flags win over environment variables, which win over defaults. */
export function readConfig(argv: readonly string[], env: NodeJS.ProcessEnv): SidecarConfig {
  const { values } = parseArgs({
    args: [...argv],
    options: Object.fromEntries(
      Object.entries(options).map(([k, o]) => [k, { type: o.type, multiple: REPEATED.includes(k) }]),
    ),
    allowPositionals: false,
  });
  const get = reader(values, env);
  const host = get("host") ?? "127.0.0.1";
  const token = get("token");
  checkExposure(host, token, get("insecure") ?? "false");
  const [tlsCert, tlsKey] = [get("tls-cert"), get("tls-key")];
  if ((tlsCert === undefined) !== (tlsKey === undefined)) throw new Error("--tls-cert and --tls-key go together");
  const threads = get("threads");
  const engine = get("engine") ?? "auto";
  if (!ENGINE_CHOICES.includes(engine as EngineChoice))
    throw new Error(`--engine must be one of ${ENGINE_CHOICES.join(", ")}, got "${engine}"`);
  return {
    ...catalogueSettings(values, env, get),
    ...chatTemplateFile(get("chat-template-file")),
    modelId: get("model-id"),
    embeddingModel: get("embedding-model"),
    host,
    port: positiveInt("port", get("port") ?? "50051", 0),
    ...threadSettings(threads, get("threads-batch")),
    engine: engine as EngineChoice,
    gpu: parseGpu(get("gpu") ?? "auto"),
    gpuLayers: parseGpuLayers(get("gpu-layers") ?? "auto"),
    flashAttention: choiceOf("flash-attention", get("flash-attention") ?? "auto", FLASH_ATTENTION_CHOICES),
    sequences: positiveInt("sequences", get("sequences") ?? "4"),
    specLookup: specLookupOf(get("spec-lookup") ?? String(DEFAULT_LOOKUP_DRAFT)),
    draftMinP: probabilityOf("draft-p-min", get("draft-p-min") ?? String(DRAFT_MIN_P)),
    contextSize: contextSizeOf(get("context-size") ?? "auto"),
    embeddingContextSize: positiveInt("embedding-context-size", get("embedding-context-size") ?? "8192", 16),
    maxQueue: positiveInt("max-queue", get("max-queue") ?? "64", 0),
    queueTimeoutMs: positiveInt("queue-timeout-ms", get("queue-timeout-ms") ?? "60000"),
    cacheRam: cacheRamOf(get("cache-ram") ?? "auto"),
    cacheDir: get("cache-dir"),
    drainMs: positiveInt("drain-ms", get("drain-ms") ?? "30000", 0),
    priority: priorityOf(get("priority") ?? "auto"),
    token,
    tlsCert,
    tlsKey,
    metricsPort: metricsPortOf(get("metrics-port")),
    metricsHost: get("metrics-host") ?? "127.0.0.1",
    kvEvents: kvEventsOf(get),
    heartbeatMs: positiveInt("heartbeat-ms", get("heartbeat-ms") ?? "5000", 0),
    trace: traceSettingsFromEnv(env),
    resumable: {
      graceMs: positiveInt("resume-grace-ms", get("resume-grace-ms") ?? "60000", 0),
      retentionMs: positiveInt("resume-retention-ms", get("resume-retention-ms") ?? "300000", 0),
      maxBytes: positiveInt("resume-buffer-mib", get("resume-buffer-mib") ?? "64", 0) * 2 ** 20,
    },
  };
}

/** `value` when it is one of `choices`, else an error naming the flag. */
function choiceOf<T extends string>(name: string, value: string, choices: readonly T[]): T {
  if (!choices.includes(value as T)) throw new Error(`--${name} must be one of ${choices.join(", ")}, got "${value}"`);
  return value as T;
}

/** `--threads` and `--threads-batch`: the batch threads follow a number given for `--threads`. */
function threadSettings(
  threads: string | undefined,
  batch: string | undefined,
): Pick<ModelOptions, "threads" | "threadsBatch"> {
  const parse = (name: string, value: string | undefined): number | "auto" | undefined =>
    value === undefined ? undefined : value === "auto" ? "auto" : positiveInt(name, value);
  const decode = parse("threads", threads) ?? "auto";
  return { threads: decode, threadsBatch: parse("threads-batch", batch) ?? decode };
}
