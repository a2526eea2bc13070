// What a generation tells the request log (docs/contract.md, "Request logs"): the model and prompt
// size at `start`, the time to the first token, the reply, the completion tokens and the outcome.
import { FinishReason, type Finish, type Token } from "../../proto/gen/inference/v1/inference_pb.js";
import type { GenerationResult, OpenedGeneration } from "../upstream/generation.js";
import type { ResponseMeta } from "./endpoint.js";
import type { RequestRecord } from "./request-log.js";

/** The request log's view of a token: the time to the first one, and the reply's text. */
export function noteToken(record: RequestRecord | undefined, token: Token): void {
  if (record === undefined) return;
  record.trace?.token(token);
  record.ttftMs ??= performance.now() - record.startedAtMonotonic;
  // With several choices (`n`), the reply text is the first choice's.
  if (record.withBodies && token.choice === 0) record.replyText = (record.replyText ?? "") + token.text;
}

/** A finish: its completion tokens added (summed over the choices of `n`), the outcome the last finish's. */
export function noteFinish(record: RequestRecord | undefined, finish: Finish): void {
  if (record === undefined) return;
  record.trace?.finished(finish);
  record.completionTokens = (record.completionTokens ?? 0) + finish.completionTokens;
  record.outcome =
    finish.reason === FinishReason.ABORT
      ? "client_left"
      : finish.reason === FinishReason.LENGTH || finish.reason === FinishReason.CONTEXT_FULL
        ? "length"
        : "completed";
  if (record.withBodies && finish.choice === 0) record.replyText = (record.replyText ?? "") + finish.text;
}

/** The request log's view of an accepted generation. */
export function noteStart(
  record: RequestRecord | undefined,
  meta: ResponseMeta,
  opened: OpenedGeneration,
  body: unknown,
): RequestRecord | undefined {
  if (record !== undefined) {
    [record.model, record.promptTokens, record.cachedTokens] = [
      meta.model,
      opened.start.promptTokens,
      opened.start.cachedTokens,
    ];
    record.trace?.started(opened.start, meta.id, meta.model);
    if (record.withBodies) record.requestBody = JSON.stringify(body);
  }
  return record;
}

/** A non-streaming answer of several choices: each noted; the reply text is the first choice's. */
export function noteCollectedChoices(record: RequestRecord | undefined, results: readonly GenerationResult[]): void {
  for (const result of results.toReversed()) noteCollected(record, result);
}

/**
 * A non-streaming answer's log: nothing is sent before the end, so the time to the first token is the sidecar's own.
 */
export function noteCollected(record: RequestRecord | undefined, result: GenerationResult): void {
  if (record?.trace !== undefined) for (const token of result.tokens) record.trace.token(token);
  noteFinish(record, result.finish);
  if (record === undefined) return;
  const timings = result.finish.timings;
  if (timings !== undefined && result.tokens.length > 0) record.ttftMs = timings.queueMs + timings.promptMs;
  if (record.withBodies) record.replyText = result.text;
}
