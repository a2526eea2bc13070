// Several replies to one prompt (GenerateRequest.n > 1): n sequences taken at once, the prompt
// evaluated once on the first and its KV cells copied to the others, then one decode loop per
// choice with a plan of its own (sampler and seed + i, stops, constraint, reply reader), their
// steps decoded in the same batches and their events merged as they come. docs/decisions.md,
// "Several choices share one prompt evaluation".
import type { LlamaContextSequence } from "node-llama-cpp";
import type { GenerateRequest } from "../../../proto/gen/inference/v1/inference_pb.js";
import { invalidArgument } from "../engine-errors.js";
import type { EngineMetrics } from "../engine-metrics.js";
import type { Arrival } from "../llama/arrivals.js";
import type { LoadedModel } from "../llama/model.js";
import { copySequence } from "../llama/sequence-copy.js";
import { DecodeState, decode, finish, type GenerateEvent } from "./decode-loop.js";
import { planChoice, planGeneration, type GenerationPlan } from "./generation-plan.js";
import { mergeEvents } from "./merge-events.js";
import { scorePrompt } from "./prompt-logprobs.js";
import { Preemption } from "./preemption.js";
import { acquireMany, evaluatePromptRange, release, reuseCachedPrefix } from "./sequences.js";
import { beginUse, endUse, useOf } from "./slot-uses.js";

/**
 * Runs a request for `request.n` choices: `start` once (the prompt's counts), then every choice's
 * `token` events as they come and a `finish` per choice, each naming its choice. Refused before
 * `start`: more choices than the model has sequences, and a resumable request.
 */
export async function* runChoices(
  loaded: LoadedModel,
  request: GenerateRequest,
  signal: AbortSignal,
  metrics: EngineMetrics,
  arrival: Arrival,
): AsyncGenerator<GenerateEvent> {
  const n = request.n;
  if (n > loaded.pool.size)
    throw invalidArgument(
      `n is ${n}, but model "${loaded.id}" generates at most ${loaded.pool.size} replies at once (its sequences)`,
    );
  if (request.resumable) throw invalidArgument("a resumable generation has one choice: n must be 1");
  const plans = await planChoices(loaded, request, n);
  const [first] = plans as [GenerationPlan];
  try {
    yield* runPlanned(loaded, request, plans, signal, metrics, arrival);
  } finally {
    first.prompt.media?.dispose();
  }
}

/** The planned choices on `n` sequences taken at once. */
async function* runPlanned(
  loaded: LoadedModel,
  request: GenerateRequest,
  plans: readonly GenerationPlan[],
  signal: AbortSignal,
  metrics: EngineMetrics,
  arrival: Arrival,
): AsyncGenerator<GenerateEvent> {
  const [first] = plans as [GenerationPlan];
  const n = plans.length;
  // Waiting for sequences is not arriving: a batch does not wait for it.
  if (loaded.pool.size - loaded.pool.busy < n) arrival.leave();
  const queuedAt = performance.now();
  const preemption = new Preemption(request.priority, signal);
  const sequences = await acquireMany(loaded, first, request.clientId, preemption, metrics, n);
  const [primary] = sequences as [LlamaContextSequence];
  arrival.bind(primary);
  for (const [i, sequence] of sequences.entries()) beginUse(sequence, request, plans[i] as GenerationPlan);
  const queueMs = performance.now() - queuedAt;
  metrics.requestsStarted++;
  metrics.generationsActive++;
  try {
    yield* shared(loaded, plans, sequences, { queueMs, progress: request.returnProgress }, preemption, metrics);
  } finally {
    metrics.generationsActive--;
    for (const sequence of sequences) {
      endUse(sequence);
      await release(loaded, sequence);
    }
    // As generate.ts does: the prompt's sequence saved while nothing decodes (kv-tier.ts).
    if (loaded.pool.busy === 0) loaded.kvTier?.saveAhead(primary);
  }
}

/** The first choice's plan (every check of the request), then the others' on its prompt. */
async function planChoices(loaded: LoadedModel, request: GenerateRequest, n: number): Promise<GenerationPlan[]> {
  const first = await planGeneration(loaded, request);
  const plans = [first];
  try {
    for (let choice = 1; choice < n; choice++) plans.push(await planChoice(loaded, request, first, choice));
  } catch (error) {
    first.prompt.media?.dispose();
    throw error;
  }
  return plans;
}

/**
 * `start`, then the prompt but its last token evaluated on the first sequence and copied to the
 * others, then every choice's loop. Each choice evaluates the prompt's last token itself (its
 * logits pick the choice's first token): those n tokens go in one batch.
 */
async function* shared(
  loaded: LoadedModel,
  plans: readonly GenerationPlan[],
  sequences: readonly LlamaContextSequence[],
  { queueMs, progress }: { readonly queueMs: number; readonly progress: boolean },
  preemption: Preemption,
  metrics: EngineMetrics,
): AsyncGenerator<GenerateEvent> {
  // A batch request runs on a signal its preemption aborts too (preemption.ts).
  const signal = preemption.signal;
  const [first] = plans as [GenerationPlan];
  const [primary, ...others] = sequences as [LlamaContextSequence, ...LlamaContextSequence[]];
  const tokens = first.prompt.tokens;
  // What each sequence would lose is saved; the first may restore a longer saved prefix (kv-tier.ts).
  await loaded.kvTier?.prepare(primary, tokens, !first.promptLogprobs, first.marks);
  for (const other of others) await loaded.kvTier?.prepare(other, tokens, false);
  // Scoring the prompt needs every token's logits: nothing cached is kept for it.
  const spans = first.prompt.media?.spans ?? [];
  const limit = first.promptLogprobs ? 0 : tokens.length - 1;
  const cachedTokens = await reuseCachedPrefix(loaded, primary, tokens, limit, spans);
  const states = plans.map((plan) => new DecodeState(loaded, plan, queueMs, cachedTokens));
  // The prompt is evaluated before the choices' loops: its progress is one event, the first choice's last.
  if (states[0] !== undefined) states[0].progress = progress;
  // Slots reads each choice's decode state (slot-uses.ts).
  for (const [i, sequence] of sequences.entries()) {
    const use = useOf(sequence);
    const state = states[i];
    if (use !== undefined && state !== undefined) use.state = state;
  }
  const prompt = first.promptLogprobs ? await scorePrompt(loaded, primary, tokens, first.topLogprobs, signal) : [];
  const start = {
    model: loaded.id,
    promptTokens: tokens.length,
    cachedTokens,
    prompt,
    cacheWrittenTokens: states[0]?.cacheWrittenTokens ?? 0,
  };
  yield { event: { case: "start", value: start } };
  const evaluated = first.promptLogprobs ? tokens.length - 1 : cachedTokens;
  const evaluationPriority = first.evaluationPriority;
  const range = { from: evaluated, to: tokens.length - 1 };
  await evaluatePromptRange(primary, tokens, spans, range, signal, evaluationPriority);
  if (!signal.aborted)
    await copySequence(
      loaded.context,
      (sequence, work) => loaded.scheduler.between(sequence, work),
      primary,
      others,
      loaded.states,
    );
  for (const state of states) state.evaluated = tokens.length - 1;
  const choice = (plan: GenerationPlan, i: number) => ({
    plan,
    state: states[i] as DecodeState,
    sequence: sequences[i] as LlamaContextSequence,
    index: i,
  });
  yield* mergeEvents(plans.map((plan, i) => choiceEvents(loaded, choice(plan, i), preemption, metrics)));
}

/** One choice of a request: its plan, decode state, sequence and index. */
interface Choice {
  readonly plan: GenerationPlan;
  readonly state: DecodeState;
  readonly sequence: LlamaContextSequence;
  readonly index: number;
}

/** One choice's decode loop and finish, each event naming the choice; the request's metrics count choice 0's finish. */
async function* choiceEvents(
  loaded: LoadedModel,
  choice: Choice,
  preemption: Preemption,
  metrics: EngineMetrics,
): AsyncGenerator<GenerateEvent> {
  const { plan, state, index } = choice;
  for await (const event of decode(loaded, plan, state, choice.sequence, preemption.signal, metrics))
    yield ofChoice(event, index);
  preemption.check(state.interrupted, plan.generated.length, metrics);
  yield ofChoice(finish(plan, state, preemption.caller, metrics, index === 0), index);
}

function ofChoice(event: GenerateEvent, choice: number): GenerateEvent {
  const inner = event.event;
  if (inner?.case === "token" || inner?.case === "finish") inner.value.choice = choice;
  return event;
}
