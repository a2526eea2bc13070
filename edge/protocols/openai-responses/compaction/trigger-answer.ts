// The answer to a Responses request whose last input item is a compaction_trigger
// (docs/contract.md, "Compaction"): one compaction item holding the model's sealed summary, in
// place of the message it wrote. Streamed: response.created, response.in_progress (again with `prompt_progress` for
// each progress event, with `return_progress`), then at the end
// response.output_item.added and .done with the whole item, the terminal event and [DONE]; the
// summary's text is not streamed (the item is opaque).
import type { Finish, Progress, Start, Token } from "../../../../proto/gen/inference/v1/inference_pb.js";
import type { ApiError } from "../../../base/errors.js";
import { collectBlocks } from "../../../core/content.js";
import type { ResponseMeta, StreamEncoder } from "../../../core/endpoint.js";
import type { GenerationResult } from "../../../upstream/generation.js";
import { DONE, jsonEvent, type SseEvent } from "../../../sse/frame.js";
import { sealCompaction } from "./compaction-prompt.js";
import { responsesFinish } from "../finish.js";
import { type CompactionItem, responseObject, type ResponseState } from "../response.js";
import type { ResponsesRequest } from "../schema.js";
import { responsesUsage } from "../usage.js";
import { promptProgress } from "../../openai-common/llama-extras.js";

/** The compaction item of a summary: its text (reasoning left out), trimmed and sealed. */
export function compactionItem(meta: ResponseMeta, summary: string): CompactionItem {
  return { id: `cmp_${meta.newId()}`, type: "compaction", encrypted_content: sealCompaction(summary.trim()) };
}

/** The terminal Response of a compaction: its one item, usage and ending. */
function terminal(
  meta: ResponseMeta,
  finish: Finish,
  item: CompactionItem,
): Omit<ResponseState, "output"> & { output: CompactionItem[] } {
  const ending = responsesFinish(finish) ?? { status: "completed" as const, incomplete_details: null };
  return {
    ...ending,
    completed_at: Math.floor(meta.now() / 1000),
    error: null,
    usage: responsesUsage(finish),
    output: [item],
  };
}

/** The summary the model wrote: its text, without reasoning (what a stream of it collects). */
export function summaryOf(result: GenerationResult): string {
  return collectBlocks(result)
    .filter((block) => block.kind === "text")
    .map((block) => block.text)
    .join("");
}

export function encodeCompactionResponse(
  body: ResponsesRequest,
  meta: ResponseMeta,
  result: GenerationResult,
): Record<string, unknown> {
  return responseObject(body, meta, terminal(meta, result.finish, compactionItem(meta, summaryOf(result))));
}

export function createCompactionStreamEncoder(body: ResponsesRequest, meta: ResponseMeta): StreamEncoder {
  let sequence = 0;
  let text = "";
  const event = (type: string, fields: Record<string, unknown>): SseEvent =>
    jsonEvent({ type, ...fields, sequence_number: sequence++ }, type);
  const inProgress = () =>
    responseObject(body, meta, {
      status: "in_progress",
      error: null,
      incomplete_details: null,
      usage: null,
      output: [],
    });
  return {
    start(_start: Start) {
      const response = inProgress();
      return [event("response.created", { response }), event("response.in_progress", { response })];
    },
    progress: (progress: Progress) => [
      event("response.in_progress", { response: inProgress(), prompt_progress: promptProgress(progress) }),
    ],
    token(token: Token) {
      text += token.text;
      return [];
    },
    finish(finish: Finish) {
      if (responsesFinish(finish) === null) return [];
      const item = compactionItem(meta, text + finish.text);
      const state = terminal(meta, finish, item);
      return [
        event("response.output_item.added", { output_index: 0, item }),
        event("response.output_item.done", { output_index: 0, item }),
        event(`response.${state.status}`, { response: responseObject(body, meta, state) }),
        DONE,
      ];
    },
    fail(error: ApiError) {
      const failed: ResponseState = {
        status: "failed",
        completed_at: Math.floor(meta.now() / 1000),
        error: { code: "server_error", message: error.message },
        incomplete_details: null,
        usage: null,
        output: [],
      };
      return [event("response.failed", { response: responseObject(body, meta, failed) }), DONE];
    },
  };
}
