// Command-line flags of `npm run bench`.
import { availableParallelism } from "node:os";
import { parseArgs } from "node:util";
import type { EngineChoice } from "../sidecar/engine/llama/model.js";
import { PEER_VARIANTS, parsePeerVariants, type PeerVariant } from "./peer-paths.js";
import { DEFAULT_MAX_TOKENS } from "./workload.js";

export const SECTIONS = [
  "newcomer",
  "engine",
  "single",
  "sweep",
  "reject",
  "prefix",
  "stateful",
  "join",
  "long",
  "embeddings",
  "encoders",
  "sessions",
  "models",
  "batch",
  "fim",
] as const;
export type Section = (typeof SECTIONS)[number];

export interface BenchFlags {
  readonly quick: boolean;
  /** The model: a catalogue name of gguf/models.ts (written if missing) or a GGUF file's path. */
  readonly model: string;
  /** llama.cpp threads for every party (node-llama-cpp, the sidecar, llama-server). */
  readonly threads: number;
  /**
   * llama.cpp threads of batches of several tokens, for every party (the sidecar's `--threads-batch`, llama-server's
   * `-tb`).
   */
  readonly threadsBatch: number;
  readonly engine: EngineChoice;
  /** Sequences of the sidecar's context (and llama-server's `-np`). */
  readonly sequences: number;
  /** Tokens per sequence (prompt plus reply). */
  readonly contextSize: number;
  /** The sweep's sidecar queue (16 streams on 8 sequences queue 8). */
  readonly maxQueue: number;
  /** The queue of the small run that must reject with 429. */
  readonly rejectQueue: number;
  /** Streams sent at once in the rejection run. */
  readonly rejectStreams: number;
  readonly maxTokens: number;
  /** Single-stream runs per party. */
  readonly runs: number;
  /** Runs per sweep level. */
  readonly sweepRuns: number;
  readonly levels: readonly number[];
  /** Prefix-reuse rounds (one cold and `prefixWarm` warm requests each) and system prompt size. */
  readonly prefixRounds: number;
  readonly prefixWarm: number;
  readonly prefixTokens: number;
  /** Rounds of the long-prompt-joins-streams run. */
  readonly joinRounds: number;
  /** Tokens of the agent-sized prompt of the long-prompt run. */
  readonly longTokens: number;
  /** Tokens generated after the agent-sized prompt (its decode row). */
  readonly longDecodeTokens: number;
  /** Edits (one-line changes of the file) per server in the fill-in-the-middle run. */
  readonly fimRounds: number;
  /** Requests each client sends in the embeddings run, per level. */
  readonly embeddingRequests: number;
  /** Many sessions on one box: sessions, sequences, opening prompt tokens and turns per session. */
  readonly sessions: number;
  readonly sessionSequences: number;
  readonly sessionTokens: number;
  readonly sessionTurns: number;
  /** Many models on one sidecar: load-on-demand rounds, requests per catalogue, the catalogue's other model. */
  readonly modelsRuns: number;
  readonly modelsRequests: number;
  readonly modelsOther: string;
  /** The batch section: its lines, tokens per line, and rounds of interactive streams alone and beside it. */
  readonly batchLines: number;
  readonly batchTokens: number;
  readonly batchRounds: number;
  /** Rounds of the engine-build comparison. */
  readonly engineRounds: number;
  /** The newcomer section: its model (as --model), fresh starts, rounds per start, tokens per stream. */
  readonly newcomerModel: string;
  readonly newcomerRuns: number;
  readonly newcomerRounds: number;
  readonly newcomerTokens: number;
  /** The newcomer's sessions (the --sessions settings) on this model; "none": not run. */
  readonly newcomerSessionsModel: string;
  /** Encoder micro-bench: repetitions and milliseconds per repetition. */
  readonly encoderReps: number;
  readonly encoderMs: number;
  /** Build the peer if it is missing (otherwise a missing peer is skipped). */
  readonly peer: boolean;
  readonly noPeer: boolean;
  /** The llama-server builds to run (each skipped with a note when not built). */
  readonly peers: readonly PeerVariant[];
  readonly wrangler: boolean;
  readonly sections: readonly Section[];
  /** Longest a stream may take before it counts as hung. */
  readonly streamTimeoutMs: number;
  /** Write V8 CPU profiles of the child processes into the results folder. */
  readonly profile: boolean;
  readonly out: string;
}

export const USAGE = `usage: npm run bench -- [flags]
  --quick               smoke run (~1 minute): fewer runs and levels
  --model M             a model of gguf/models.ts (written if missing, e.g. random-850m; random-850m:Q8_0
                        quantized) or a .gguf path [random-60m]
  --threads N           llama.cpp threads for every party [1]
  --threads-batch N     threads of batches of several tokens, every party [every core]
  --engine E            auto | prebuilt | local (sidecar and in-process baseline) [auto]
  --sequences N         sidecar sequences, llama-server -np [8]
  --context-size N      tokens per sequence [2048]
  --max-queue N         sidecar queue in the sweep [64]
  --reject-queue N      sidecar queue in the rejection run [2]
  --reject-streams N    streams sent at once in the rejection run [16]
  --max-tokens N        tokens generated per stream [${DEFAULT_MAX_TOKENS}]
  --runs N              single-stream runs per party [9; quick 2]
  --sweep-runs N        runs per concurrency level [3; quick 1]
  --levels L            concurrency levels, comma-separated [1,2,4,8,16; quick 1,8,16]
  --prefix-rounds N     prefix-reuse rounds, and the stateful section's [3; quick 1]
  --prefix-warm N       warm requests per round [3; quick 2]
  --prefix-tokens N     shared system prompt size in tokens, and the stateful conversation's [1500]
  --join-rounds N       rounds of a long prompt joining two streams [3; quick 1]
  --long-tokens N       the agent-sized prompt of the long-prompt run [8000; quick 2000; an agent's full size: 40000]
  --long-decode-tokens N  tokens generated after it, its decode row [1024; quick 128]
  --embedding-requests N  requests per client in the embeddings run [16; quick 4]
  --fim-rounds N        one-line edits of the 2,000-token file per server in the fill-in-the-middle run [12; quick 3]
  --sessions N          sessions of the many-sessions run [8]
  --session-sequences N its sequences (sidecar and llama-server -np) [4]
  --session-tokens N    each session's opening prompt in tokens [6600; quick 1500]
  --session-turns N     turns per session, round-robin [3; quick 2]
  --models-runs N       load-on-demand rounds of the many-models run (load alone, first request, loaded) [9; quick 3]
  --models-requests N   its requests per catalogue (one model vs two) [16; quick 4]
  --models-other M      the catalogue's second model, never loaded (as --model) [demo]
  --batch-lines N       PRIORITY_BATCH lines of the batch section [200; quick 40]
  --batch-tokens N      tokens each batch line generates [32]
  --batch-rounds N      its rounds of 4 interactive streams, alone and beside the batch [8; quick 2]
  --engine-rounds N     rounds of the engine-build comparison [3; quick 1]
  --newcomer-model M    the newcomer section's model (as --model) [random-850m; quick random-60m]
  --newcomer-runs N     its fresh starts of both servers, pooled [3; quick 1]
  --newcomer-rounds N   its rounds per start, one stream and four [4; quick 2]
  --newcomer-tokens N   tokens per stream [48]
  --newcomer-sessions-model M  its sessions (--sessions, --session-*) on M; none: not run [random-60m]
  --encoder-reps N      encoder micro-bench repetitions [5; quick 3]
  --encoder-ms N        milliseconds per repetition [1000; quick 300]
  --peers P             llama-server builds, comma-separated: ${PEER_VARIANTS.join(",")} [every one that is built]
  --peer                build the llama-servers of --peers first if missing (npm run bench:peer-build)
  --no-peer             leave llama-server out even if it is built
  --no-wrangler         leave the wrangler dev party out
  --sections S          comma-separated subset of ${SECTIONS.join(",")} [all]
  --stream-timeout-ms N a stream still open after this counts as hung [120000]
  --profile             write V8 CPU profiles of the child processes (bench/results/profiles/)
  --out DIR             results folder [bench/results]
  --help`;

function int(name: string, raw: string | undefined, fallback: number, min = 1): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min)
    throw new Error(`--${name} must be an integer of at least ${min}, got "${raw}"`);
  return value;
}

/** The flags `npm run bench` takes (see USAGE). */
const OPTIONS = {
  quick: { type: "boolean" },
  model: { type: "string" },
  threads: { type: "string" },
  "threads-batch": { type: "string" },
  engine: { type: "string" },
  sequences: { type: "string" },
  "context-size": { type: "string" },
  "max-queue": { type: "string" },
  "reject-queue": { type: "string" },
  "reject-streams": { type: "string" },
  "max-tokens": { type: "string" },
  runs: { type: "string" },
  "sweep-runs": { type: "string" },
  levels: { type: "string" },
  "prefix-rounds": { type: "string" },
  "prefix-warm": { type: "string" },
  "prefix-tokens": { type: "string" },
  "models-runs": { type: "string" },
  "models-requests": { type: "string" },
  "models-other": { type: "string" },
  "engine-rounds": { type: "string" },
  "newcomer-model": { type: "string" },
  "newcomer-runs": { type: "string" },
  "newcomer-rounds": { type: "string" },
  "newcomer-tokens": { type: "string" },
  "newcomer-sessions-model": { type: "string" },
  "batch-lines": { type: "string" },
  "batch-tokens": { type: "string" },
  "batch-rounds": { type: "string" },
  sessions: { type: "string" },
  "session-sequences": { type: "string" },
  "session-tokens": { type: "string" },
  "session-turns": { type: "string" },
  "long-tokens": { type: "string" },
  "long-decode-tokens": { type: "string" },
  "embedding-requests": { type: "string" },
  "fim-rounds": { type: "string" },
  "join-rounds": { type: "string" },
  "encoder-reps": { type: "string" },
  "encoder-ms": { type: "string" },
  peer: { type: "boolean" },
  "no-peer": { type: "boolean" },
  peers: { type: "string" },
  "no-wrangler": { type: "boolean" },
  sections: { type: "string" },
  "stream-timeout-ms": { type: "string" },
  profile: { type: "boolean" },
  out: { type: "string" },
  help: { type: "boolean" },
} as const;

/** `--sections`, checked: every section by default. */
function sectionsOf(value: string | undefined): Section[] {
  const sections = (value ?? SECTIONS.join(",")).split(",").map((s) => s.trim());
  for (const s of sections)
    if (!(SECTIONS as readonly string[]).includes(s)) throw new Error(`--sections: unknown section "${s}"`);
  return sections as Section[];
}

export function readFlags(argv: readonly string[]): BenchFlags | "help" {
  const { values } = parseArgs({
    args: [...argv],
    options: OPTIONS,
    allowPositionals: false,
  });
  if (values.help === true) return "help";
  const quick = values.quick === true;
  const engine = values.engine ?? "auto";
  if (engine !== "auto" && engine !== "prebuilt" && engine !== "local")
    throw new Error(`--engine must be auto, prebuilt or local, got "${engine}"`);
  const levels = (values.levels ?? (quick ? "1,8,16" : "1,2,4,8,16")).split(",").map((l) => int("levels", l.trim(), 1));
  return {
    quick,
    model: values.model ?? "random-60m",
    threads: int("threads", values.threads, 1),
    threadsBatch: int("threads-batch", values["threads-batch"], availableParallelism()),
    engine,
    sequences: int("sequences", values.sequences, 8),
    contextSize: int("context-size", values["context-size"], 2048, 64),
    maxQueue: int("max-queue", values["max-queue"], 64, 0),
    rejectQueue: int("reject-queue", values["reject-queue"], 2, 0),
    rejectStreams: int("reject-streams", values["reject-streams"], 16),
    maxTokens: int("max-tokens", values["max-tokens"], DEFAULT_MAX_TOKENS, 2),
    runs: int("runs", values.runs, quick ? 2 : 9),
    sweepRuns: int("sweep-runs", values["sweep-runs"], quick ? 1 : 3),
    levels,
    prefixRounds: int("prefix-rounds", values["prefix-rounds"], quick ? 1 : 3),
    prefixWarm: int("prefix-warm", values["prefix-warm"], quick ? 2 : 3),
    prefixTokens: int("prefix-tokens", values["prefix-tokens"], 1500),
    joinRounds: int("join-rounds", values["join-rounds"], quick ? 1 : 3),
    longTokens: int("long-tokens", values["long-tokens"], quick ? 2000 : 8000, 100),
    longDecodeTokens: int("long-decode-tokens", values["long-decode-tokens"], quick ? 128 : 1024, 2),
    embeddingRequests: int("embedding-requests", values["embedding-requests"], quick ? 4 : 16),
    fimRounds: int("fim-rounds", values["fim-rounds"], quick ? 3 : 12),
    sessions: int("sessions", values.sessions, 8),
    sessionSequences: int("session-sequences", values["session-sequences"], 4),
    sessionTokens: int("session-tokens", values["session-tokens"], quick ? 1500 : 6600, 100),
    sessionTurns: int("session-turns", values["session-turns"], quick ? 2 : 3, 2),
    modelsRuns: int("models-runs", values["models-runs"], quick ? 3 : 9),
    modelsRequests: int("models-requests", values["models-requests"], quick ? 4 : 16),
    modelsOther: values["models-other"] ?? "demo",
    engineRounds: int("engine-rounds", values["engine-rounds"], quick ? 1 : 3),
    newcomerModel: values["newcomer-model"] ?? (quick ? "random-60m" : "random-850m"),
    newcomerRuns: int("newcomer-runs", values["newcomer-runs"], quick ? 1 : 3),
    newcomerRounds: int("newcomer-rounds", values["newcomer-rounds"], quick ? 2 : 4),
    newcomerTokens: int("newcomer-tokens", values["newcomer-tokens"], 48, 2),
    newcomerSessionsModel: values["newcomer-sessions-model"] ?? "random-60m",
    batchLines: int("batch-lines", values["batch-lines"], quick ? 40 : 200),
    batchTokens: int("batch-tokens", values["batch-tokens"], 32),
    batchRounds: int("batch-rounds", values["batch-rounds"], quick ? 2 : 8),
    encoderReps: int("encoder-reps", values["encoder-reps"], quick ? 3 : 5),
    encoderMs: int("encoder-ms", values["encoder-ms"], quick ? 300 : 1000, 10),
    peer: values.peer === true,
    noPeer: values["no-peer"] === true,
    peers: parsePeerVariants(values.peers ?? "all", "--peers"),
    wrangler: values["no-wrangler"] !== true,
    sections: sectionsOf(values.sections),
    streamTimeoutMs: int("stream-timeout-ms", values["stream-timeout-ms"], 120_000),
    profile: values.profile === true,
    out: values.out ?? "bench/results",
  };
}
