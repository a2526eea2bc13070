// Many models on one sidecar (docs/decisions.md, "Many models on one sidecar"), on a sidecar whose
// catalogue holds the bench model and another, none loaded at start:
//  - load on demand: the model's load alone (LoadModel over native gRPC, then UnloadModel) next to
//    the time from a first request naming the unloaded model (a short streaming chat completion
//    through the edge) to its first token, and the same request's once the model is loaded;
//  - the catalogue's cost on a loaded model: one stream at a time through the edge to a sidecar
//    serving the model alone and to the catalogue's sidecar (the model loaded, the other
//    available), requests interleaved, each pair the same prompt: TTFT and decode tok/s.
import type { GrpcClient } from "../clients/grpc.js";
import { streamSse } from "../clients/sse.js";
import { completionBody } from "../parties.js";
import { decodeRate, type StreamSample } from "../sample.js";
import { max, median, medianInterval, min } from "../stats.js";
import { fmt } from "../table.js";
import { streamPrompt } from "../workload.js";
import { chatBody } from "./sessions.js";

/** Tokens of the load-on-demand requests: their first token is what is measured. */
export const FIRST_REQUEST_TOKENS = 8;

export interface ModelsOptions {
  /** The bench model's name in the catalogue, and the other model's. */
  readonly model: string;
  readonly other: string;
  /** Load-on-demand rounds. */
  readonly runs: number;
  /** Requests per catalogue in the cost comparison, and the tokens each generates. */
  readonly requests: number;
  readonly maxTokens: number;
  readonly timeoutMs: number;
}

/**
 * One load-on-demand round: the load alone, a first request for the unloaded model, the same kind of request loaded.
 */
export interface LoadRound {
  readonly loadMs: number;
  readonly firstRequest: StreamSample;
  readonly loaded: StreamSample;
}

export interface ModelsResult {
  readonly options: ModelsOptions;
  readonly rounds: LoadRound[];
  /** The model's memory once loaded (ModelInfo.memory_bytes of the last load). */
  readonly memoryBytes: number;
  /** One stream at a time through the edge: the sidecar serving the model alone, and the catalogue's. */
  readonly oneModel: StreamSample[];
  readonly twoModels: StreamSample[];
}

const chat = (edgeUrl: string, model: string, variant: number, timeoutMs: number): Promise<StreamSample> =>
  streamSse(
    `${edgeUrl}/v1/chat/completions`,
    chatBody([{ role: "user", content: streamPrompt(variant) }], FIRST_REQUEST_TOKENS, model),
    timeoutMs,
  );

/** The time of `work`, ms. */
async function timed<T>(work: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const started = performance.now();
  const value = await work();
  return { ms: performance.now() - started, value };
}

/**
 * One round, the model unloaded at its start: the load alone, unloaded again, then a first request and one more; the
 * model stays loaded.
 */
async function loadRound(
  client: GrpcClient,
  edgeUrl: string,
  options: ModelsOptions,
  variant: number,
): Promise<LoadRound & { memoryBytes: number }> {
  const { model, timeoutMs } = options;
  const load = await timed(() => client.loadModel({ model }));
  await client.unloadModel({ model });
  const firstRequest = await chat(edgeUrl, model, variant, timeoutMs);
  // Another prompt of the same length: nothing of it but the template's first tokens is cached.
  const loaded = await chat(edgeUrl, model, variant + 1, timeoutMs);
  return { loadMs: load.ms, firstRequest, loaded, memoryBytes: Number(load.value.memoryBytes) };
}

/**
 * Load-on-demand rounds on the catalogue's sidecar, the model unloaded before each: an untimed
 * warm-up round first (the file in the page cache, every path run once). The model is left loaded.
 */
export async function runLoadOnDemand(
  client: GrpcClient,
  edgeUrl: string,
  options: ModelsOptions,
  log: (m: string) => void,
): Promise<Omit<ModelsResult, "oneModel" | "twoModels">> {
  const rounds: LoadRound[] = [];
  let memoryBytes = Number.NaN;
  for (let r = -1; r < options.runs; r++) {
    if (r >= 0) await client.unloadModel({ model: options.model });
    const { memoryBytes: bytes, ...round } = await loadRound(client, edgeUrl, options, 600 + 2 * r);
    if (r < 0) continue;
    rounds.push(round);
    memoryBytes = bytes;
    log(`models: load on demand, round ${r + 1}/${options.runs} done`);
  }
  return { options, rounds, memoryBytes };
}

/** Warm-up requests on each side before the catalogue's cost is measured (the first loads the catalogue's model). */
const WARM_UP = 3;

/**
 * One stream at a time through each edge, the two sidecars in turn (which goes first alternates),
 * each pair the same prompt (their KV caches are their own); `WARM_UP` requests each first.
 */
export async function runCatalogueCost(
  oneModelEdge: string,
  twoModelsEdge: string,
  options: ModelsOptions,
  log: (m: string) => void,
): Promise<{ oneModel: StreamSample[]; twoModels: StreamSample[] }> {
  const run = (edgeUrl: string, variant: number): Promise<StreamSample> =>
    streamSse(
      `${edgeUrl}/v1/completions`,
      { ...completionBody(variant, options.maxTokens), model: options.model },
      options.timeoutMs,
    );
  for (let i = 0; i < WARM_UP; i++) for (const edgeUrl of [oneModelEdge, twoModelsEdge]) await run(edgeUrl, 700 + i);
  const result = { oneModel: [] as StreamSample[], twoModels: [] as StreamSample[] };
  for (let i = 0; i < options.requests; i++) {
    const variant = 710 + i;
    const oneFirst = i % 2 === 0;
    const a = await run(oneFirst ? oneModelEdge : twoModelsEdge, variant);
    const b = await run(oneFirst ? twoModelsEdge : oneModelEdge, variant);
    result.oneModel.push(oneFirst ? a : b);
    result.twoModels.push(oneFirst ? b : a);
  }
  log(`models: ${options.requests} requests on each catalogue done`);
  return result;
}

/** A median with the range of the samples it comes from. */
export interface Spread {
  readonly n: number;
  readonly p50: number;
  readonly min: number;
  readonly max: number;
}

export interface CatalogueRow {
  readonly label: string;
  /** Requests completed / sent. */
  readonly completed: string;
  readonly ttftP50: number;
  readonly decodeTps: Spread;
}

export interface ModelsSummary {
  readonly model: string;
  readonly other: string;
  readonly memoryMiB: number;
  readonly load: Spread;
  readonly firstRequestTtft: Spread;
  readonly loadedTtft: Spread;
  /** First request's TTFT − (load + loaded TTFT), medians. */
  readonly overheadMs: number;
  readonly oneModel: CatalogueRow;
  readonly twoModels: CatalogueRow;
  /**
   * Over the pairs (the same prompt on each sidecar, one after the other) both completed: the median of two − one
   * TTFT, ms, and of two / one decode rate.
   */
  readonly pairs: number;
  readonly addedTtftMs: number;
  readonly decodeRatio: number;
  /** Their 95% intervals (stats.ts, medianInterval): the noise they are measured with. */
  readonly addedTtftInterval: readonly [number, number];
  readonly decodeRatioInterval: readonly [number, number];
}

const spread = (values: readonly number[]): Spread => ({
  n: values.filter(Number.isFinite).length,
  p50: median(values),
  min: min(values),
  max: max(values),
});
const done = (samples: readonly StreamSample[]): StreamSample[] => samples.filter((s) => s.outcome === "completed");

function catalogueRow(label: string, samples: readonly StreamSample[]): CatalogueRow {
  const ok = done(samples);
  return {
    label,
    completed: `${ok.length} / ${samples.length}`,
    ttftP50: median(ok.map((s) => s.ttftMs)),
    decodeTps: spread(ok.map(decodeRate)),
  };
}

/**
 * The pairs both completed: the median TTFT difference and decode ratio, the catalogue of two against the model alone.
 */
function paired(
  one: readonly StreamSample[],
  two: readonly StreamSample[],
): Pick<ModelsSummary, "pairs" | "addedTtftMs" | "decodeRatio" | "addedTtftInterval" | "decodeRatioInterval"> {
  const pairs = one.flatMap((a, i) => {
    const b = two[i];
    return a.outcome === "completed" && b?.outcome === "completed" ? [[a, b] as const] : [];
  });
  const added = pairs.map(([a, b]) => b.ttftMs - a.ttftMs);
  const ratios = pairs.map(([a, b]) => decodeRate(b) / decodeRate(a));
  return {
    pairs: pairs.length,
    addedTtftMs: median(added),
    decodeRatio: median(ratios),
    addedTtftInterval: medianInterval(added),
    decodeRatioInterval: medianInterval(ratios),
  };
}

export function summarizeModels(result: ModelsResult): ModelsSummary {
  const { model, other } = result.options;
  const load = spread(result.rounds.map((r) => r.loadMs));
  const firstRequestTtft = spread(done(result.rounds.map((r) => r.firstRequest)).map((s) => s.ttftMs));
  const loadedTtft = spread(done(result.rounds.map((r) => r.loaded)).map((s) => s.ttftMs));
  return {
    model,
    other,
    memoryMiB: result.memoryBytes / 2 ** 20,
    load,
    firstRequestTtft,
    loadedTtft,
    overheadMs: firstRequestTtft.p50 - (load.p50 + loadedTtft.p50),
    oneModel: catalogueRow(`${model} alone (loaded at start)`, result.oneModel),
    twoModels: catalogueRow(`${model} and ${other} (${model} loaded, ${other} available)`, result.twoModels),
    ...paired(result.oneModel, result.twoModels),
  };
}

const line = (cells: readonly string[]): string => `| ${cells.join(" | ")} |`;
const signed = (v: number): string => `${v >= 0 ? "+" : ""}${fmt(v, 2)}`;
/** The 95% intervals of the added TTFT (ms) and of the decode ratio, "lo to hi". */
export const ttftRange = (s: ModelsSummary): string =>
  `${signed(s.addedTtftInterval[0])} to ${signed(s.addedTtftInterval[1])}`;
export const ratioRange = (s: ModelsSummary): string =>
  `${fmt(s.decodeRatioInterval[0], 3)} to ${fmt(s.decodeRatioInterval[1], 3)}`;
const range = (s: Spread, digits = 1): string => `${fmt(s.min, digits)}–${fmt(s.max, digits)}`;

export function renderModels(s: ModelsSummary, result: ModelsResult): string {
  const o = result.options;
  const loadRows = [
    ["load alone (LoadModel over native gRPC)", s.load],
    [`first request for the unloaded model: time to first token`, s.firstRequestTtft],
    ["the same request, model loaded: time to first token", s.loadedTtft],
  ] as const;
  const firstHeader = ["what", "runs", "p50 ms", "min–max ms"];
  const secondHeader = [
    "sidecar's catalogue",
    "requests done",
    "TTFT p50 ms",
    "decode tok/s (min–max)",
    "vs the model alone: TTFT; decode (95% intervals)",
  ];
  return [
    `\n**Many models on one sidecar** (a catalogue of ${s.model} and ${s.other}, none loaded at start; ${s.model} ` +
      `takes ` +
      `${fmt(s.memoryMiB, 0)} MiB loaded. Load on demand: ${o.runs} rounds after a warm-up, each the load alone, ` +
      `then a ` +
      `streaming /v1/chat/completions through the edge (${FIRST_REQUEST_TOKENS} tokens) for the unloaded model, then ` +
      `another ` +
      "once loaded; overhead = first request − (load + loaded TTFT), medians)\n",
    line(firstHeader),
    line(firstHeader.map(() => "---")),
    ...loadRows.map(([what, v]) => line([what, String(v.n), fmt(v.p50), range(v)])),
    line(["overhead of loading on demand", "–", fmt(s.overheadMs), "–"]),
    `\nThe catalogue's cost on a loaded model (one stream at a time through the edge, /v1/completions, ` +
      `${o.maxTokens} tokens, ` +
      `${o.requests} requests each, interleaved, each pair the same prompt; against the model alone: the medians of ` +
      `the pairs' ` +
      "TTFT differences and decode ratios):\n",
    line(secondHeader),
    line(secondHeader.map(() => "---")),
    ...[s.oneModel, s.twoModels].map((r) =>
      line([
        r.label,
        r.completed,
        fmt(r.ttftP50),
        `${fmt(r.decodeTps.p50)} (${range(r.decodeTps)})`,
        r === s.oneModel
          ? "–"
          : `${signed(s.addedTtftMs)} ms (${ttftRange(s)}); ${fmt(s.decodeRatio, 3)}× (${ratioRange(s)}); ${s.pairs} ` +
            `pairs`,
      ]),
    ),
  ].join("\n");
}

/** The headline figures of the section (results-file.ts compares them run to run). */
export function modelsHeadline(s: ModelsSummary, headline: Record<string, number>): void {
  headline["models: load alone ms"] = s.load.p50;
  headline["models: first request TTFT, unloaded, ms"] = s.firstRequestTtft.p50;
  headline["models: TTFT loaded ms"] = s.loadedTtft.p50;
  headline["models: overhead of loading on demand ms"] = s.overheadMs;
  headline["models: one-model catalogue TTFT ms"] = s.oneModel.ttftP50;
  headline["models: two-model catalogue TTFT ms"] = s.twoModels.ttftP50;
  headline["models: one-model catalogue decode tok/s"] = s.oneModel.decodeTps.p50;
  headline["models: two-model catalogue decode tok/s"] = s.twoModels.decodeTps.p50;
  headline["models: catalogue's added TTFT ms (pairs)"] = s.addedTtftMs;
  headline["models: catalogue's decode ratio (pairs)"] = s.decodeRatio;
}
