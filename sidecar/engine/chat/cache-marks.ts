// A request's cache marks (`GenerateRequest.cache_marks`) checked and placed in its prompt tokens:
// where each marked prefix ends, for the KV cache tier (llama/kv-marks.ts). docs/decisions.md, "Cache hints".
import type { Token } from "node-llama-cpp";
import type { CacheMark, GenerateRequest } from "../../../proto/gen/inference/v1/inference_pb.js";
import { invalidArgument } from "../engine-errors.js";
import type { MarkRequest } from "../llama/kv-marks.js";
import { sharedPrefix } from "../llama/kv-tier.js";
import type { LoadedModel } from "../llama/model.js";
import { renderChatPrefix } from "./prompt.js";

/** The most marks one request may carry (Anthropic's limit on cache breakpoints). */
export const MAX_CACHE_MARKS = 4;
/** The longest a mark keeps its prefix: a day. */
export const MAX_MARK_TTL_SECONDS = 86_400;

/** Refuses more than MAX_CACHE_MARKS marks, or a ttl outside 1..MAX_MARK_TTL_SECONDS (INVALID_ARGUMENT). */
export function checkCacheMarks(marks: readonly CacheMark[]): void {
  if (marks.length > MAX_CACHE_MARKS)
    throw invalidArgument(`the request has ${marks.length} cache marks: at most ${MAX_CACHE_MARKS} are allowed`);
  marks.forEach((mark, index) => {
    if (mark.ttlSeconds < 1 || mark.ttlSeconds > MAX_MARK_TTL_SECONDS) {
      throw invalidArgument(`cache mark ${index} has ttl_seconds ${mark.ttlSeconds}: use 1 to ${MAX_MARK_TTL_SECONDS}`);
    }
  });
}

/**
 * Each mark's prefix length in `tokens` (the request's rendered prompt): the tokens the prompt
 * shares with the rendering of the chat's first `messages` messages, which is robust to templates
 * that end a message differently when it is the last; the whole prompt for a mark on a raw prompt or
 * on every message. At most the prompt's last token but one: that token is evaluated again on every
 * request (its logits pick the reply's first token), so it is never part of a kept prefix. No
 * rendering at all without marks.
 */
export function markPositions(loaded: LoadedModel, request: GenerateRequest, tokens: readonly Token[]): MarkRequest[] {
  const { input } = request;
  const whole = tokens.length - 1;
  const rendered = new Map<number, number>();
  return request.cacheMarks.map((mark) => {
    const ttlMs = mark.ttlSeconds * 1000;
    if (input.case !== "chat" || mark.messages === 0 || mark.messages >= input.value.messages.length)
      return { tokens: whole, ttlMs };
    let end = rendered.get(mark.messages);
    if (end === undefined) {
      try {
        end = sharedPrefix(renderChatPrefix(loaded, input.value, mark.messages), tokens);
      } catch {
        // A template that cannot render the head alone: nothing is marked.
        end = 0;
      }
      rendered.set(mark.messages, end);
    }
    return { tokens: Math.min(end, whole), ttlMs };
  });
}
