// Loading a model: the llama.cpp library, the model, its context and sequence pool, and what is
// resolved once per model (`LoadedModel`, `loadModel`).
import { modelMedia, type ModelMedia } from "./projector.js";
import { fimTokensOf, type FimOrder, type FimTokens } from "./fim-tokens.js";
import os from "node:os";
import path from "node:path";
import {
  getLlama,
  JinjaTemplateChatWrapper,
  LlamaLogLevel,
  resolveChatWrapper,
  specializedChatWrapperTypeNames,
  type ChatWrapper,
  type ResolveChatWrapperWithModelOptions,
  type SpecializedChatWrapperTypeName,
  type Llama,
  type LlamaContext,
  type LlamaContextOptions,
  type LlamaContextSequence,
  type LlamaModel,
  type Token,
  type Tokenizer,
} from "node-llama-cpp";
import { Embedder } from "./embedder.js";
import { modelKind, Ranker, type ModelKind } from "./ranking.js";
import { checkGpuAvailable, gpuReport, type GpuChoice, type GpuLayers, type GpuReport } from "./gpu.js";
import { Arrivals } from "./arrivals.js";
import { cpuPromptBatchTokens, shareBatchOf } from "./batch-shares.js";
import { scheduleBatches, type BatchScheduler } from "./batch-scheduling.js";
import { SequencePool, type PoolOptions } from "./sequence-pool.js";
import { blockView, KvBlocks, type KvBlock, type KvBlocksOption, type KvLora } from "./kv-blocks.js";
import { modelReplySyntax } from "./model-reply-syntax.js";
import type { ReplySyntax } from "../syntax/reply-syntax.js";
import { thinkingOffWrapper } from "./thinking-switch.js";
import { templateVariablesWrappers } from "./template-variables.js";
import { TokenBytes } from "./token-bytes.js";
import { batchThreadsMinTokens, useBatchThreads } from "./batch-threads.js";
import { presampleSteps, type PresampleCounts } from "./presampling.js";
import {
  checkLlamaInternals,
  draftsCheckedWhole,
  sequenceIdOf,
  sequenceStates,
  type SequenceStates,
  timeBatches,
} from "./llama-internals.js";
import { cachedTokenizer } from "./tokenizer-cache.js";
import { cacheRamMiB, KvTier, modelIdentity, savedWhenTaken } from "./kv-tier.js";
import { DEFAULT_LOOKUP_DRAFT, PromptLookup } from "./prompt-lookup.js";
import type { Drafter } from "./drafting.js";
import { loadDraftModel } from "./draft-model.js";
import { AppliedLora, type LoraAdapter } from "./lora.js";
import { Teardown } from "./teardown.js";
import type { StepTimes } from "./step-cost.js";

/**
 * Which llama.cpp library to load: "auto" takes this host's own build (`npm run build:engine`)
 * when there is one and the prebuilt library shipped with node-llama-cpp otherwise; "prebuilt"
 * and "local" insist on one of them.
 */
export type EngineChoice = "auto" | "prebuilt" | "local";
export const ENGINE_CHOICES: readonly EngineChoice[] = ["auto", "prebuilt", "local"];

/** The CMake options `npm run build:engine` builds with; the local build is found by them. */
export const LOCAL_BUILD_CMAKE_OPTIONS: Readonly<Record<string, string>> = { GGML_OPENMP: "OFF" };

export interface ModelOptions {
  /** A GGUF file. */
  readonly modelPath: string;
  /** The name clients use; defaults to the file name without `.gguf`. */
  readonly id?: string;
  /**
   * Threads llama.cpp decodes small batches on (one or a few streams' next tokens); "auto" picks by
   * measurement: all cores with this host's own build (it keeps a thread pool), half of them (at
   * least 1) with the prebuilt library, which starts new threads for every batch.
   */
  readonly threads: number | "auto";
  /**
   * Threads for batches of several tokens (prompts, many streams; how many: batch-threads.ts);
   * "auto": every core. Unset: the same as `threads`.
   */
  readonly threadsBatch?: number | "auto";
  readonly engine: EngineChoice;
  /** Requests generated at the same time, each in its own sequence of one shared context. */
  readonly sequences: number;
  /**
   * Tokens one sequence holds (prompt plus reply); "auto": the model's trained context, or less
   * when memory does not hold that many for every sequence (node-llama-cpp sizes it); `{ max }`:
   * as "auto", at most `max` (the catalogue's memory budget sized it).
   */
  readonly contextSize: number | "auto" | { readonly max: number };
  /** Requests allowed to wait for a free sequence; more are refused at once. */
  readonly maxQueue: number;
  /** How long a request may wait for a free sequence, in milliseconds. */
  readonly queueTimeoutMs: number;
  /** The llama.cpp GPU backend (`--gpu`); default "auto". */
  readonly gpu?: GpuChoice;
  /** Layers on the GPU (`--gpu-layers`); default "auto" (what fits). */
  readonly gpuLayers?: GpuLayers;
  /** A separate GGUF whose vectors Embed returns; none: this model's own. */
  readonly embeddingModelPath?: string;
  /** An embedder shared by several models (`--embedding-model` with a catalogue): used, never disposed, by this one. */
  readonly sharedEmbedder?: Embedder;
  /** A chat template in place of the file's: a node-llama-cpp chat wrapper name, or a Jinja template's text. */
  readonly chatTemplate?: string;
  /** Stops the load (the sidecar is stopping). */
  readonly loadSignal?: AbortSignal;
  /** Tokens one embedding input may hold (capped by the trained context); default 8,192. */
  readonly embeddingContextSize?: number;
  /**
   * llama.cpp's flash attention (`--flash-attention`): "auto" on the CPU is on with the local build and off with the
   * prebuilt library (docs/decisions.md, "Flash attention on the CPU, one arithmetic a row"), llama.cpp's own choice
   * on a GPU. Default "auto".
   */
  readonly flashAttention?: FlashAttentionChoice;
  /**
   * The most prompt tokens a batch holds once it has one prompt (batch-shares.ts); default
   * `cpuPromptBatchTokens` of the model's size on a CPU, every prompt that fits on a GPU.
   */
  readonly promptBatchTokens?: number;
  /** The KV cache tier's budget in MiB (`--cache-ram`): a number, or "auto"; 0 or unset: no tier. */
  readonly cacheRam?: number | "auto";
  /** A folder that keeps the tier's states across restarts (`--cache-dir`); unset: a private RAM-backed one. */
  readonly cacheDir?: string | undefined;
  /**
   * Tokens prompt lookup drafts at most per step (`--spec-lookup`; prompt-lookup.ts); 0: none. Default
   * DEFAULT_LOOKUP_DRAFT.
   */
  readonly specLookup?: number;
  /** Streams' next tokens sampled with their decode where the library can (presampling.ts); default true. */
  readonly presample?: boolean;
  /**
   * What prompt lookup weighs its drafts by (prompt-lookup.ts, step-cost.ts): the context's measured steps by default;
   * fixed step times in their place; "none": drafts as long as the match allows, beside other streams too (tests that
   * count drafts).
   */
  readonly draftCost?: StepTimes | "none";
  /**
   * A draft model of the same vocabulary (`--model-draft`, `draft` in presets; draft-model.ts): drafts in place of
   * prompt lookup.
   */
  readonly draftModelPath?: string | undefined;
  /** A draft model's guess ends at its first token below this probability (`--draft-p-min`; draft-model.ts). */
  readonly draftMinP?: number;
  /** The order of its fill-in-the-middle prompts (a preset's `fimOrder`); default prefix-suffix-middle. */
  readonly fimOrder?: FimOrder;
  /** Its multimodal projector (projector.ts); none: the model reads text only. */
  readonly projectorPath?: string | undefined;
  /** Its LoRA adapters (lora.ts): each served by these weights in a context of its own. */
  readonly lora?: readonly LoraAdapter[] | undefined;
  /** Load progress, 0..1. */
  readonly onProgress?: (fraction: number) => void;
  /** The KV-cache events (`--kv-events`; kv-blocks.ts): the blocks it holds reported there; unset: none kept. */
  readonly kvBlocks?: KvBlocksOption | undefined;
}

export const FLASH_ATTENTION_CHOICES = ["auto", "on", "off"] as const;
export type FlashAttentionChoice = (typeof FLASH_ATTENTION_CHOICES)[number];

/**
 * node-llama-cpp's `flashAttention` for a choice: "auto" on a CPU-only library is on for the local build (whose kernel
 * computes a row alike whatever shares its batch: sidecar/native/fa-invariant.patch) and off for the prebuilt one.
 */
export function flashAttentionOf(choice: FlashAttentionChoice, llama: Llama): boolean | "auto" {
  if (choice === "auto") return llama.gpu === false ? llama.buildType === "localBuild" : "auto";
  return choice === "on";
}

/** Tokens one embedding input may hold unless configured. */
const DEFAULT_EMBEDDING_CONTEXT_SIZE = 8192;

/** One loaded model: its context, its sequences and what is resolved once per model. */
export interface LoadedModel {
  readonly id: string;
  readonly created: number;
  readonly llama: Llama;
  readonly model: LlamaModel;
  readonly context: LlamaContext;
  readonly chatWrapper: ChatWrapper;
  /**
   * The Jinja template chats are rendered with directly (chat/template-prompt.ts): set where node-llama-cpp has no
   * built-in wrapper for it.
   */
  readonly jinjaTemplate: string | undefined;
  /** The chat template's text (the file's, or the override); empty without one. */
  readonly chatTemplate: string;
  /** The chat wrapper with the template's own thinking switch off (thinking-switch.ts); undefined without one. */
  readonly thinkingOff: ChatWrapper | undefined;
  /** The model's template rendered with a request's extra variables (`chat_template_kwargs`; template-variables.ts). */
  readonly withVariables: (variables: Record<string, unknown>) => ChatWrapper;
  /** How the chat template marks reasoning and tool calls in a reply. */
  readonly replySyntax: ReplySyntax;
  readonly pool: SequencePool;
  readonly tokenBytes: TokenBytes;
  readonly contextSize: number;
  /** The context the model was trained with (its GGUF metadata). */
  readonly trainedContextSize: number;
  readonly vocabularySize: number;
  /** Threads of small batches and of large ones (see batch-threads.ts). */
  readonly threads: number;
  readonly threadsBatch: number;
  /** The fewest tokens a batch runs on `threadsBatch` threads (batch-threads.ts). */
  readonly batchThreadsFrom: number;
  /** What sampling with the decode did (presampling.ts); undefined where it is off or the library lacks it. */
  readonly presampled: PresampleCounts | undefined;
  /** How decode steps and cache trims share the context (see batch-scheduling.ts). */
  readonly scheduler: BatchScheduler;
  /** The GPU it runs on, if any. */
  readonly gpu: GpuReport;
  /** Embeddings with this model (its own context, made on first use). */
  readonly embedder: Embedder;
  /** "rank" for a reranker (it answers Rank only), "generate" otherwise (ranking.ts). */
  readonly kind: ModelKind;
  /** Ranking with this model (its own context, made on first use; ranking.ts). */
  readonly ranker: Ranker;
  /** Sequences' states kept in host memory (kv-tier.ts); undefined when `--cache-ram` is 0. */
  readonly kvTier: KvTier | undefined;
  /** The blocks its sequences and saved states hold, for the KV-cache events (kv-blocks.ts); undefined when off. */
  readonly kvBlocks: KvBlocks | undefined;
  /**
   * Drafts from a draft model (draft-model.ts) or from the prompt (prompt-lookup.ts); undefined when neither is on
   * or the model cannot take drafts back.
   */
  readonly drafter: Drafter | undefined;
  /** The model's tokenizer, keeping long texts' tokens for the turns that send them again (tokenizer-cache.ts). */
  readonly tokenizer: Tokenizer;
  /**
   * Sequence states copied in memory, where the engine can (llama-internals.ts); else the tier and choices use state
   * files.
   */
  readonly states: SequenceStates | undefined;
  /** Its fill-in-the-middle tokens (fim-tokens.ts); undefined when it has none. */
  readonly fim: FimTokens | undefined;
  /** What it reads besides text, and its projector (projector.ts). */
  readonly media: ModelMedia;
  /** Its LoRA adapters by name, each a model of its own (its context, sequences, caches) on these weights. */
  readonly adapters: ReadonlyMap<string, LoadedModel>;
  /** When this is an adapter of another model: which, and its scale now (lora.ts). */
  readonly lora: AppliedLora | undefined;
  dispose(): Promise<void>;
}

let llamaInstance: Promise<Llama> | undefined;

/**
 * llama.cpp's own messages, to stderr, except the text of a grammar it could not parse: that is
 * a request's content, which never reaches a log (the request gets INVALID_ARGUMENT instead).
 */
function engineLog(_level: LlamaLogLevel, message: string): void {
  const text = message.includes("error parsing grammar")
    ? "llama.cpp: a request's grammar did not parse (its text is not logged)"
    : message;
  process.stderr.write(text.endsWith("\n") ? text : `${text}\n`);
}

/**
 * The llama.cpp binding, loaded once per process (the first call's choices stay); never builds or
 * downloads anything. A GPU backend this host cannot load is refused, naming the ones it can.
 */
export function loadLlama(engine: EngineChoice = "auto", gpu: GpuChoice = "auto"): Promise<Llama> {
  llamaInstance ??= (async () => {
    await checkGpuAvailable(gpu);
    const llama = await getLlama({
      gpu,
      build: "never",
      // Always explicit: node-llama-cpp's own default is far more threads than small hosts have.
      maxThreads: os.availableParallelism(),
      logLevel: LlamaLogLevel.error,
      logger: engineLog,
      cmakeOptions: engine === "prebuilt" ? {} : { ...LOCAL_BUILD_CMAKE_OPTIONS },
    });
    if (engine === "local" && llama.buildType !== "localBuild") {
      throw new Error("--engine local: no local llama.cpp build was found; run `npm run build:engine` first");
    }
    return llama;
  })();
  return llamaInstance;
}

export async function loadModel(options: ModelOptions): Promise<LoadedModel> {
  const llama = await loadLlama(options.engine, options.gpu);
  const model = await llama.loadModel({
    modelPath: options.modelPath,
    gpuLayers: options.gpuLayers ?? "auto",
    ...(options.onProgress ? { onLoadProgress: options.onProgress } : {}),
    ...(options.loadSignal ? { loadSignal: options.loadSignal } : {}),
  });
  const teardown = new Teardown();
  teardown.add(model, (m) => m.dispose());
  let made: { base: LoadedModel; adapters: Map<string, LoadedModel> };
  try {
    made = await baseModel(llama, model, options, teardown);
  } catch (error) {
    // A step that failed after others (a projector, a template, the KV tier's folder read back): what they made is
    // freed, and the blocks the tier published are removed.
    await teardown.run().catch(() => undefined);
    throw error;
  }
  return withAdapters(made.base, made.adapters, options);
}

/** The loaded model and its adapters' map; each part it makes is added to `teardown`: `dispose` runs it. */
async function baseModel(
  llama: Llama,
  model: LlamaModel,
  options: ModelOptions,
  teardown: Teardown,
): Promise<{ base: LoadedModel; adapters: Map<string, LoadedModel> }> {
  const { threads, threadsBatch } = threadCounts(options, llama);
  const scheduled = await scheduledContext(llama, model, options, threads, threadsBatch);
  const { context, scheduler, batchThreadsFrom, presampled } = teardown.add(scheduled, (c) => c.context.dispose());
  const id = options.id ?? path.basename(options.modelPath).replace(/\.gguf$/i, "");
  const drafter = teardown.add(await drafterOf(llama, model, context, options), (d) => d?.dispose());
  timeSteps(context, drafter);
  const states = await sequenceStates(llama, model, context);
  const kvBlocks = options.kvBlocks === undefined ? undefined : blocksOf(options.kvBlocks, id);
  const { kvTier, pool } = await sequencesOf(context, scheduler, states, kvBlocks, options, teardown);
  await warmUp(pool.all()[0], model);
  const { embedder } = teardown.add(await loadEmbedder(llama, model, options, threadsBatch), (e) =>
    e.disposeEmbedder(),
  );
  const ranker = teardown.add(rankerOf(model, options, threadsBatch), (r) => r.dispose());
  const media = teardown.add(await modelMedia(llama, model, options.projectorPath, threadsBatch), (m) =>
    m.projector?.dispose(),
  );
  const adapters = new Map<string, LoadedModel>();
  const base: LoadedModel = {
    id,
    created: Math.floor(Date.now() / 1000),
    llama,
    model,
    context,
    ...templateOf(model, options.chatTemplate),
    pool,
    tokenBytes: new TokenBytes(model),
    tokenizer: cachedTokenizer(model.tokenizer),
    contextSize: context.contextSize,
    trainedContextSize: model.trainContextSize,
    vocabularySize: vocabularySize(model),
    threads,
    threadsBatch,
    batchThreadsFrom,
    presampled,
    scheduler,
    embedder,
    kind: modelKind(model.fileInsights),
    ranker,
    kvTier,
    kvBlocks,
    states,
    drafter,
    gpu: await gpuReport(llama, model),
    fim: fimTokensOf(model, options.fimOrder),
    media,
    adapters,
    lora: undefined,
    async dispose() {
      for (const adapter of adapters.values()) await adapter.dispose();
      await teardown.run();
    },
  };
  return { base, adapters };
}

/** The base model with its adapters loaded into `adapters`; an adapter that fails to load frees the base. */
async function withAdapters(
  base: LoadedModel,
  adapters: Map<string, LoadedModel>,
  options: ModelOptions,
): Promise<LoadedModel> {
  try {
    for (const [i, lora] of (options.lora ?? []).entries())
      adapters.set(lora.name, await adapterModel(base, lora, i + 1, options));
  } catch (error) {
    await base.dispose();
    throw error;
  }
  return base;
}

/**
 * A context's KV tier and sequence pool, each sequence's cell removals in the scheduler's turn; the tier and the
 * block tracker are added to `teardown` (the tracker closed first: the tier's last saves are not published).
 */
async function sequencesOf(
  context: LlamaContext,
  scheduler: BatchScheduler,
  states: SequenceStates | undefined,
  kvBlocks: KvBlocks | undefined,
  options: ModelOptions,
  teardown: Teardown,
  adapter?: LoraAdapter,
): Promise<{ kvTier: KvTier | undefined; pool: SequencePool }> {
  const kvTier = await openKvTier(options, context.contextSize, scheduler, states, kvBlocks, adapter);
  const pool = new SequencePool(context, poolOptions(options, kvTier, kvBlocks));
  for (const sequence of pool.all()) scheduler.removalsInTurn(sequence);
  teardown.add(kvTier, (tier) => tier?.dispose(pool.all()));
  teardown.add(kvBlocks, (blocks) => blocks?.close());
  return { kvTier, pool };
}

/**
 * A LoRA adapter of `base` as a model of its own: the same weights and template, a context of its own with the
 * adapter applied (llama.cpp applies adapters per context), its own sequences, scheduler and KV tier (keyed by the
 * adapter), so that no batch mixes it with another adapter's requests and no cache serves one adapter's cells to
 * another. Its blocks are published under the base's topic with its id (`loraId`, from 1) and name, keyed apart
 * from the base's (kv-blocks.ts). Embeddings and ranking stay the base's.
 */
async function adapterModel(
  base: LoadedModel,
  lora: LoraAdapter,
  loraId: number,
  options: ModelOptions,
): Promise<LoadedModel> {
  const { llama, model } = base;
  const applied = new AppliedLora(lora, base.id);
  const teardown = new Teardown();
  const adapters = [{ filePath: lora.path, scale: lora.scale }];
  const scheduled = await scheduledContext(llama, model, options, base.threads, base.threadsBatch, { adapters });
  const { context, scheduler, batchThreadsFrom, presampled } = teardown.add(scheduled, (c) => c.context.dispose());
  applied.attach(context);
  timeSteps(context, base.drafter);
  try {
    const states = await sequenceStates(llama, model, context);
    const kvLora = { id: loraId, name: lora.name };
    const kvBlocks = options.kvBlocks === undefined ? undefined : blocksOf(options.kvBlocks, base.id, kvLora);
    const { kvTier, pool } = await sequencesOf(context, scheduler, states, kvBlocks, options, teardown, lora);
    await warmUp(pool.all()[0], model);
    return {
      ...base,
      id: lora.name,
      context,
      pool,
      scheduler,
      batchThreadsFrom,
      presampled,
      states,
      kvTier,
      kvBlocks,
      contextSize: context.contextSize,
      // A draft model drafts for its base's context; prompt lookup drafts for any.
      drafter: base.drafter?.kind === "lookup" ? base.drafter : undefined,
      adapters: new Map(),
      lora: applied,
      dispose: () => teardown.run(),
    };
  } catch (error) {
    await teardown.run().catch(() => undefined);
    throw error;
  }
}

/**
 * One token evaluated and erased before any request, as llama-server warms a model up at start: the
 * weights' pages and the compute buffers are touched at load, not by the first request (on the
 * 850M-class model that request's first token came after 1.1 s instead of 0.25 s).
 */
async function warmUp(sequence: LlamaContextSequence | undefined, model: LlamaModel): Promise<void> {
  if (sequence === undefined) return;
  await sequence.evaluateWithoutGeneratingNewTokens([model.tokens.bos ?? (0 as Token)]);
  await sequence.clearHistory();
}

type TemplateFields = Pick<
  LoadedModel,
  "chatWrapper" | "jinjaTemplate" | "chatTemplate" | "thinkingOff" | "withVariables" | "replySyntax"
>;

/**
 * What the chat template (the file's, or `override`) gives a model: its wrappers, and the reply syntax learned from it.
 */
function templateOf(model: LlamaModel, override: string | undefined): TemplateFields {
  const { chatWrapper, template } = chatWrapperOf(model, override);
  return {
    chatWrapper,
    jinjaTemplate: chatWrapper instanceof JinjaTemplateChatWrapper && template.trim() !== "" ? template : undefined,
    chatTemplate: template,
    thinkingOff: thinkingOffWrapper(
      template,
      chatWrapper,
      (settings) => chatWrapperOf(model, override, settings).chatWrapper,
    ),
    // Forced through the Jinja wrapper: a wrapper node-llama-cpp picks in the template's place takes no variables.
    withVariables: templateVariablesWrappers(
      (settings) => chatWrapperOf(model, override ?? template, settings).chatWrapper,
    ),
    replySyntax: modelReplySyntax(model, template, chatWrapper),
  };
}

/** The model's context, checked, with its thread counts per batch and its batch scheduler. */
async function scheduledContext(
  llama: Llama,
  model: LlamaModel,
  options: ModelOptions,
  threads: number,
  threadsBatch: number,
  lora?: LlamaContextOptions["lora"],
) {
  // Requests on their way to their first decode; an idle context's first batch waits for them.
  const arrivals = new Arrivals();
  const context = await createContext(llama, model, options, threadsBatch, arrivals, lora);
  await checkLlamaInternals({ llama, model, context });
  // Before the batch timer and thread wrappers, which call through it.
  const presampled = options.presample === false ? undefined : presampleSteps(context);
  const batchThreadsFrom = batchThreadsMinTokens(model.size);
  useBatchThreads(context, { decode: threads, batch: threadsBatch, minTokens: batchThreadsFrom });
  return { context, scheduler: scheduleBatches(context, arrivals), batchThreadsFrom, presampled };
}

/** The model's one context: every sequence, its batches shared and scheduled (batch-shares.ts, arrivals.ts). */
function createContext(
  llama: Llama,
  model: LlamaModel,
  options: ModelOptions,
  threadsBatch: number,
  arrivals: Arrivals,
  lora: LlamaContextOptions["lora"],
): Promise<LlamaContext> {
  return model.createContext({
    ...(lora === undefined ? {} : { lora }),
    sequences: options.sequences,
    // node-llama-cpp's context size is per sequence: each sequence gets this many tokens.
    contextSize: options.contextSize,
    // An explicit size stays what was asked for; "auto" is sized by the memory there is.
    ...(typeof options.contextSize === "number" ? { failedCreationRemedy: false as const } : {}),
    // The most any batch uses; each batch gets its own count (batch-threads.ts).
    threads: threadsBatch,
    flashAttention: flashAttentionOf(options.flashAttention ?? "auto", llama),
    // On a CPU, prompts that arrive together go a few at a time, the shortest first (batch-shares.ts).
    batching: {
      itemPrioritizationStrategy: shareBatchOf(
        options.promptBatchTokens ??
          (llama.gpu === false ? cpuPromptBatchTokens(model.size) : Number.POSITIVE_INFINITY),
      ),
      dispatchSchedule: arrivals.schedule,
    },
  });
}

/** The model's embedder (its own, a separate model's, or a shared one) and what frees it. */
async function loadEmbedder(
  llama: Llama,
  model: LlamaModel,
  options: ModelOptions,
  threadsBatch: number,
): Promise<{ embedder: Embedder; disposeEmbedder: () => Promise<void> }> {
  if (options.sharedEmbedder !== undefined)
    return { embedder: options.sharedEmbedder, disposeEmbedder: async () => undefined };
  const embeddingModel =
    options.embeddingModelPath === undefined
      ? model
      : await llama.loadModel({ modelPath: options.embeddingModelPath, gpuLayers: options.gpuLayers ?? "auto" });
  const embedder = embedderFor(embeddingModel, { ...options, threadsBatch });
  const disposeEmbedder = async (): Promise<void> => {
    await embedder.dispose();
    if (embeddingModel !== model) await embeddingModel.dispose();
  };
  return { embedder, disposeEmbedder };
}

/** An embedder on `model`: inputs of up to `--embedding-context-size` tokens, each evaluated as one batch. */
export function embedderFor(
  model: LlamaModel,
  options: Pick<ModelOptions, "embeddingContextSize" | "maxQueue"> & { threadsBatch: number },
): Embedder {
  return new Embedder(model, {
    threads: options.threadsBatch,
    contextSize: options.embeddingContextSize ?? DEFAULT_EMBEDDING_CONTEXT_SIZE,
    maxQueue: options.maxQueue,
    vocabularySize: vocabularySize(model),
  });
}

type WrapperSettings = NonNullable<ResolveChatWrapperWithModelOptions["customWrapperSettings"]>;

/**
 * The chat wrapper: the file's own template, or the one a preset names instead; and the template's
 * text. `settings`: wrapper settings to resolve it with (the thinking switch off, thinking-switch.ts).
 */
function chatWrapperOf(
  model: LlamaModel,
  override: string | undefined,
  settings: WrapperSettings = {},
): { chatWrapper: ChatWrapper; template: string } {
  const own = String(model.fileInfo.metadata.tokenizer?.chat_template ?? "");
  if (override === undefined)
    return { chatWrapper: resolveChatWrapper(model, { customWrapperSettings: settings }), template: own };
  if ((specializedChatWrapperTypeNames as readonly string[]).includes(override)) {
    return {
      chatWrapper: resolveChatWrapper(model, {
        type: override as SpecializedChatWrapperTypeName,
        customWrapperSettings: settings,
      }),
      template: own,
    };
  }
  const chatWrapper = resolveChatWrapper(model, {
    type: "jinjaTemplate",
    customWrapperSettings: { ...settings, jinjaTemplate: { ...settings.jinjaTemplate, template: override } },
    fallbackToOtherWrappersOnJinjaError: false,
  });
  return { chatWrapper, template: override };
}

/** The model's ranker: a (query, document) pair is one input, capped as an embedding input is. */
function rankerOf(model: LlamaModel, options: ModelOptions, threadsBatch: number): Ranker {
  return new Ranker(model, {
    threads: threadsBatch,
    contextSize: options.embeddingContextSize ?? DEFAULT_EMBEDDING_CONTEXT_SIZE,
    maxQueue: options.maxQueue,
  });
}

/** The KV cache tier of `--cache-ram` MiB, or none for 0. */
async function openKvTier(
  options: ModelOptions,
  contextSize: number,
  scheduler: BatchScheduler,
  states: SequenceStates | undefined,
  blocks: KvBlocks | undefined,
  adapter?: LoraAdapter,
): Promise<KvTier | undefined> {
  const mib = cacheRamMiB(options.cacheRam ?? 0);
  if (mib <= 0) return undefined;
  return KvTier.open({
    budgetBytes: mib * 2 ** 20,
    dir: options.cacheDir,
    states,
    identity: modelIdentity(options.modelPath, contextSize, adapter),
    between: (sequence, work) => scheduler.between(sequence, work),
    blocks,
  });
}

/** The model's block tracker: its changes published under its name (an adapter's under its base's, with its own). */
function blocksOf(option: KvBlocksOption, id: string, lora?: KvLora): KvBlocks {
  return new KvBlocks(option.blockSize, (events) => option.publish(id, events), lora);
}

/** The pool's options: the tier's check, and a released sequence's blocks reported (kv-blocks.ts). */
function poolOptions(options: ModelOptions, kvTier: KvTier | undefined, kvBlocks: KvBlocks | undefined): PoolOptions {
  return {
    maxQueue: options.maxQueue,
    queueTimeoutMs: options.queueTimeoutMs,
    idOf: sequenceIdOf,
    ...(kvTier === undefined
      ? {}
      : { kept: (sequence: LlamaContextSequence) => kvTier.keeps(sequence), saves: savedWhenTaken }),
    ...(kvBlocks === undefined ? {} : { released: (sequence: LlamaContextSequence) => holdCells(kvBlocks, sequence) }),
  };
}

/**
 * The blocks the model holds now, worked out afresh from its sequences' cells and its KV tier's states (not from what
 * was reported): what a subscriber to its KV-cache events rebuilds, keyed `<medium>:<hash>`.
 */
export function heldBlocks(loaded: LoadedModel, blockSize: number): Map<string, KvBlock> {
  const cells = loaded.pool.all().map((sequence) => ({ medium: "GPU" as const, tokens: sequence.contextTokens }));
  const states = (loaded.kvTier?.heldTokens() ?? []).map((tokens) => ({ medium: "CPU" as const, tokens }));
  return blockView([...cells, ...states], blockSize, loaded.kvBlocks?.lora);
}

/** Empties `sequence`'s cells, in its context's turn, and reports it (kv-blocks.ts). */
export async function forgetCells(loaded: LoadedModel, sequence: LlamaContextSequence): Promise<void> {
  await loaded.scheduler.between(sequence, () => sequence.clearHistory());
  holdCells(loaded.kvBlocks, sequence);
}

/**
 * Sets a LoRA adapter's scale for the requests after: the cells and KV tier states computed at another scale are let
 * go of (idle sequences now, busy ones when their request gives them back: lora.ts `stale`), so no prefix is served
 * from them.
 */
export async function setAdapterScale(adapter: LoadedModel, scale: number): Promise<void> {
  const lora = adapter.lora;
  if (lora === undefined || lora.scale === scale) return;
  await lora.setScale(scale);
  await adapter.kvTier?.forget();
  for (const sequence of adapter.pool.all()) if (!adapter.pool.isBusy(sequence)) await forgetCells(adapter, sequence);
}

/** What `sequence` holds now, reported to `blocks` (none: nothing). */
export function holdCells(blocks: KvBlocks | undefined, sequence: LlamaContextSequence): void {
  blocks?.hold(sequence, "GPU", sequence.contextTokens);
}

/** Prompt lookup weighs its drafts by a lone stream's steps in every context it drafts for (step-cost.ts). */
function timeSteps(context: LlamaContext, drafter: Drafter | undefined): void {
  if (!(drafter instanceof PromptLookup)) return;
  timeBatches(context, (tokens, sequences, ms) => {
    if (sequences === 1) drafter.steps.observe(tokens, ms);
  });
}

/**
 * The model's drafter: its draft model, else prompt lookup drafting `--spec-lookup` tokens, else none. A recurrent or
 * hybrid model cannot take back the cells of a draft it refuses without a state checkpoint per step, and node-llama-cpp
 * without the project's patch keeps one drafted token a step at most (patches/README.md): a draft model asked for
 * there is refused, saying why. A draft model that cannot load frees the served model's context and model.
 */
async function drafterOf(
  llama: Llama,
  model: LlamaModel,
  context: LlamaContext,
  options: ModelOptions,
): Promise<Drafter | undefined> {
  const insights = model.fileInsights;
  const why = insights.isRecurrent || insights.isHybrid ? "a recurrent or hybrid model" : undefined;
  const cannot = why ?? (draftsCheckedWhole() ? undefined : "node-llama-cpp without the project's patch");
  if (options.draftModelPath === undefined) {
    const draftMax = options.specLookup ?? DEFAULT_LOOKUP_DRAFT;
    return draftMax <= 0 || cannot !== undefined ? undefined : new PromptLookup(draftMax, options.draftCost);
  }
  try {
    if (cannot !== undefined) throw new Error(`a draft model cannot draft for ${cannot}`);
    return await loadDraftModel(llama, {
      path: options.draftModelPath,
      target: context,
      gpuLayers: options.gpuLayers ?? "auto",
      flashAttention: flashAttentionOf(options.flashAttention ?? "auto", llama) === true,
      minP: options.draftMinP,
      signal: options.loadSignal,
    });
  } catch (error) {
    await context.dispose();
    await model.dispose();
    throw error;
  }
}

/** `--threads` and `--threads-batch` as numbers on this library. */
export function threadCounts(
  options: Pick<ModelOptions, "threads" | "threadsBatch">,
  llama: Llama,
): { threads: number; threadsBatch: number } {
  const threads = resolveThreads(options.threads, llama);
  return {
    threads,
    threadsBatch: options.threadsBatch === undefined ? threads : resolveBatchThreads(options.threadsBatch),
  };
}

function resolveThreads(threads: number | "auto", llama: Llama): number {
  if (threads !== "auto") return threads;
  const cores = os.availableParallelism();
  return llama.buildType === "localBuild" ? cores : Math.max(1, Math.floor(cores / 2));
}

function resolveBatchThreads(threads: number | "auto"): number {
  return threads === "auto" ? os.availableParallelism() : threads;
}

function vocabularySize(model: LlamaModel): number {
  const metadata = model.fileInfo.metadata as unknown as {
    tokenizer?: { ggml?: { tokens?: readonly unknown[] } };
  };
  return metadata.tokenizer?.ggml?.tokens?.length ?? 0;
}
