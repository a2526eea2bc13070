// One request's generation: its plan turned into `start`, `token`… and `finish` events, on one
// sequence (the decode loop: decode-loop.ts), or on several for several choices (several-choices.ts).
import type { GenerateRequest } from "../../../proto/gen/inference/v1/inference_pb.js";
import { planGeneration, type GenerationPlan } from "./generation-plan.js";
import { scorePrompt } from "./prompt-logprobs.js";
import type { EngineMetrics } from "../engine-metrics.js";
import type { Arrival } from "../llama/arrivals.js";
import { holdCells, type LoadedModel } from "../llama/model.js";
import type { KvBlocks } from "../llama/kv-blocks.js";
import type { LlamaContextSequence } from "node-llama-cpp";
import { runChoices } from "./several-choices.js";
import { DecodeState, decode, finish, type GenerateEvent } from "./decode-loop.js";
import { Preemption } from "./preemption.js";
import { copyLongerPrefix } from "./prefix-copy.js";
import { acquire, release, reuseCachedPrefix } from "./sequences.js";
import { beginUse, endUse } from "./slot-uses.js";

export type { GenerateEvent } from "./decode-loop.js";

/** Where the first token is among the events (`start` comes first) of a request without `return_progress`. */
export const FIRST_TOKEN_POSITION = 1;

/**
 * The events a waiting reader takes at once (streams/read-ahead.ts): the first token, whose latency is the time to
 * first token, and progress events; with `return_progress` the first token follows the last progress event at once,
 * in the same step of the decode loop, so the reader woken for that event finds it queued.
 */
export function sentAtOnce(position: number, event: GenerateEvent): boolean {
  return position === FIRST_TOKEN_POSITION || event.event?.case === "progress";
}

/**
 * Runs one request: builds and checks its plan (`generation-plan.ts`), waits for a sequence, then
 * streams `start`, `token`… and `finish`; with `n` > 1, several choices (several-choices.ts). Everything
 * that can be refused is refused before `start`. Aborting `signal` ends generation at the next
 * token (or prompt chunk).
 */
export async function* generate(
  loaded: LoadedModel,
  request: GenerateRequest,
  signal: AbortSignal,
  metrics: EngineMetrics,
): AsyncGenerator<GenerateEvent> {
  // On its way to its first decode: an idle context's first batch waits for it (arrivals.ts).
  const arrival = loaded.scheduler.arrive(request.arrivingWith);
  try {
    yield* request.n > 1
      ? runChoices(loaded, request, signal, metrics, arrival)
      : run(loaded, request, signal, metrics, arrival);
  } finally {
    arrival.leave();
  }
}

async function* run(
  loaded: LoadedModel,
  request: GenerateRequest,
  signal: AbortSignal,
  metrics: EngineMetrics,
  arrival: Arrival,
): AsyncGenerator<GenerateEvent> {
  const plan = await planGeneration(loaded, request);
  try {
    yield* runPlanned(loaded, request, plan, signal, metrics, arrival);
  } finally {
    plan.prompt.media?.dispose();
  }
}

/** One planned reply on a sequence of its own. */
async function* runPlanned(
  loaded: LoadedModel,
  request: GenerateRequest,
  plan: GenerationPlan,
  signal: AbortSignal,
  metrics: EngineMetrics,
  arrival: Arrival,
): AsyncGenerator<GenerateEvent> {
  // Waiting for a sequence is not arriving: a batch does not wait for it.
  if (loaded.pool.busy >= loaded.pool.size) arrival.leave();
  const queuedAt = performance.now();
  // A batch request runs on a signal its preemption aborts too (preemption.ts).
  const preemption = new Preemption(request.priority, signal);
  const running = preemption.signal;
  const sequence = await acquire(loaded, plan, request.clientId, preemption, metrics);
  arrival.bind(sequence);
  const use = beginUse(sequence, request, plan);
  const queueMs = performance.now() - queuedAt;
  metrics.requestsStarted++;
  metrics.generationsActive++;
  try {
    const tokens = plan.prompt.tokens;
    // What the sequence would lose is saved, and a longer saved prefix restored (kv-tier.ts).
    await loaded.kvTier?.prepare(sequence, tokens, !plan.promptLogprobs, plan.marks);
    // A longer prefix another sequence holds is copied rather than evaluated (prefix-copy.ts).
    if (!plan.promptLogprobs) await copyLongerPrefix(loaded, sequence, tokens, tokens.length - 1, metrics);
    // Scoring the prompt needs every token's logits: nothing cached is kept for it.
    const limit = plan.promptLogprobs ? 0 : tokens.length - 1;
    const cachedTokens = await reuseCachedPrefix(loaded, sequence, tokens, limit, plan.prompt.media?.spans);
    holdCells(loaded.kvBlocks, sequence);
    const state = new DecodeState(loaded, plan, queueMs, cachedTokens);
    state.progress = request.returnProgress;
    use.state = state;
    const cacheWrittenTokens = state.cacheWrittenTokens;
    const prompt = plan.promptLogprobs ? await scorePrompt(loaded, sequence, tokens, plan.topLogprobs, running) : [];
    if (plan.promptLogprobs) state.evaluated = tokens.length - 1;
    yield {
      event: {
        case: "start",
        value: { model: loaded.id, promptTokens: tokens.length, cachedTokens, prompt, cacheWrittenTokens },
      },
    };
    yield* heldAtFirstToken(loaded.kvBlocks, sequence, decode(loaded, plan, state, sequence, running, metrics));
    preemption.check(state.interrupted, plan.generated.length, metrics);
    yield finish(plan, state, signal, metrics);
  } finally {
    metrics.generationsActive--;
    endUse(sequence);
    await release(loaded, sequence);
    // Left idle with nothing decoding: its state is saved now rather than at its takeover (kv-tier.ts).
    if (loaded.pool.busy === 0) loaded.kvTier?.saveAhead(sequence);
  }
}

/** The events, the prompt's blocks reported once its first token is out (kv-blocks.ts): held while it decodes. */
async function* heldAtFirstToken(
  blocks: KvBlocks | undefined,
  sequence: LlamaContextSequence,
  events: AsyncGenerator<GenerateEvent>,
): AsyncGenerator<GenerateEvent> {
  if (blocks === undefined) return yield* events;
  let first = true;
  for await (const event of events) {
    if (first && event.event?.case === "token") {
      first = false;
      holdCells(blocks, sequence);
    }
    yield event;
  }
}
