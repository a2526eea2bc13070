// Generation events → OpenAI Responses stream events, and the whole Response for
// non-streaming requests.
//
// Every event is an `event: <type>` line and a `data:` line whose JSON has the same `type`
// and a `sequence_number` that grows by one from 0. Order:
//   response.created, response.in_progress    on the sidecar's `start`: status
//                                             in_progress, empty output
//   response.in_progress + prompt_progress    with `return_progress`: one per progress event of
//                                             the prompt's evaluation, the Response as it stands
//                                             and llama-server's `prompt_progress` beside
//   per output item (one open at a time, opened at its first non-empty delta;
//   `output_index` is its position in the final `output`):
//     message:   response.output_item.added → response.content_part.added →
//                response.output_text.delta… → response.output_text.done →
//                response.content_part.done → response.output_item.done
//     reasoning: the same with a reasoning_text part and response.reasoning_text.delta / .done
//     function_call: response.output_item.added → response.function_call_arguments.delta… →
//                response.function_call_arguments.done → response.output_item.done
//   response.completed | response.incomplete (max_output_tokens) | response.failed
//   data: [DONE]
// The terminal event carries the whole Response, usage included. A failure after
// `start` is `response.failed` with `error` (the partial output kept, its open item
// `incomplete`), then [DONE].
import type { Finish, Progress, Start, Token } from "../../../proto/gen/inference/v1/inference_pb.js";
import { BlockSequencer, collectBlocks, finishContent, tokenContent, type Block } from "../../core/content.js";
import type { ApiError } from "../../base/errors.js";
import type { GenerationResult } from "../../upstream/generation.js";
import type { ResponseMeta, StreamEncoder } from "../../core/endpoint.js";
import { DONE, jsonEvent, type SseEvent } from "../../sse/frame.js";
import {
  itemIdPrefix,
  itemOptions,
  outputItem,
  outputTextPart,
  reasoningTextPart,
  responseObject,
  type ItemOptions,
  type ItemStatus,
  type OutputItem,
  type OutputTextPart,
  type ReasoningTextPart,
  type ResponseState,
} from "./response.js";
import { compactionTriggered, type ResponsesRequest } from "./schema.js";
import { createCompactionStreamEncoder, encodeCompactionResponse } from "./compaction/trigger-answer.js";
import { responsesFinish } from "./finish.js";
import { responsesUsage } from "./usage.js";
import { compactionOf } from "./compaction/opening-item.js";
import { promptProgress } from "../openai-common/llama-extras.js";

/** Unix seconds now, for a terminal Response's `completed_at`. */
function completedAt(meta: ResponseMeta): number {
  return Math.floor(meta.now() / 1000);
}

/** What the stream knows of one output item. */
interface ItemRecord {
  readonly block: Block;
  readonly id: string;
  status: ItemStatus;
  readonly options: ItemOptions;
}

function itemOf(record: ItemRecord): OutputItem {
  return outputItem(record.block, record.id, record.status, true, record.options);
}

/** The content part a block's item holds (none for a function call). */
function partOf(block: Block, text: string): OutputTextPart | ReasoningTextPart | undefined {
  switch (block.kind) {
    case "text":
      return outputTextPart(text);
    case "reasoning":
      return reasoningTextPart(text);
    case "tool_call":
      return undefined;
    default: {
      const unknownKind: never = block.kind;
      throw new Error(`unknown content kind ${String(unknownKind)}`);
    }
  }
}

/** The output items of one stream: the block sequencer that opens, fills and closes them as events. */
interface ItemEvents {
  readonly items: ItemRecord[];
  readonly blocks: BlockSequencer<SseEvent>;
  /** The status items get when they close from now on (`incomplete`: cut at a token limit). */
  closingStatus: ItemStatus;
  record(block: Block): ItemRecord;
}

/** `offset`: the output items before the generated ones (a compaction item: compaction/automatic.ts). */
function itemEvents(
  meta: ResponseMeta,
  options: ItemOptions,
  event: (type: string, fields: Record<string, unknown>) => SseEvent,
  offset: number,
): ItemEvents {
  const items: ItemRecord[] = [];
  /** A block's item's position in the final `output`. */
  const indexOf = (block: Block): number => block.index + offset;
  const record = (block: Block): ItemRecord => {
    const found = items[block.index];
    if (found === undefined) throw new Error(`no output item for block ${block.index}`);
    return found;
  };
  /** `response.output_text` or `response.reasoning_text`: the event family of a block's text. */
  const textEvents = (block: Block): string =>
    block.kind === "reasoning" ? "response.reasoning_text" : "response.output_text";
  const state: ItemEvents = {
    items,
    record,
    closingStatus: "completed",
    blocks: new BlockSequencer<SseEvent>({
      open(block) {
        const item: ItemRecord = { block, id: `${itemIdPrefix(block)}${meta.newId()}`, status: "in_progress", options };
        items[block.index] = item;
        const output_index = indexOf(block);
        const added = event("response.output_item.added", {
          output_index,
          item: outputItem(block, item.id, "in_progress", false, item.options),
        });
        const part = partOf(block, "");
        if (part === undefined) return [added];
        return [
          added,
          event("response.content_part.added", { item_id: item.id, output_index, content_index: 0, part }),
        ];
      },
      delta(block, text) {
        const at = { item_id: record(block).id, output_index: indexOf(block) };
        if (block.kind === "tool_call")
          return [event("response.function_call_arguments.delta", { ...at, delta: text })];
        const logprobs = block.kind === "text" ? { logprobs: [] } : {};
        return [event(`${textEvents(block)}.delta`, { ...at, content_index: 0, delta: text, ...logprobs })];
      },
      close(block) {
        const item = record(block);
        item.status = state.closingStatus;
        const done = () => event("response.output_item.done", { output_index: indexOf(block), item: itemOf(item) });
        if (block.kind === "tool_call") {
          const args = {
            item_id: item.id,
            output_index: indexOf(block),
            name: block.call?.name ?? "",
            arguments: block.text,
          };
          return [event("response.function_call_arguments.done", args), done()];
        }
        const at = { item_id: item.id, output_index: indexOf(block), content_index: 0 };
        const logprobs = block.kind === "text" ? { logprobs: [] } : {};
        return [
          event(`${textEvents(block)}.done`, { ...at, text: block.text, ...logprobs }),
          event("response.content_part.done", { ...at, part: partOf(block, block.text) }),
          done(),
        ];
      },
    }),
  };
  return state;
}

export function createResponsesStreamEncoder(body: ResponsesRequest, meta: ResponseMeta): StreamEncoder {
  if (compactionTriggered(body)) return createCompactionStreamEncoder(body, meta);
  let sequence = 0;
  const event = (type: string, fields: Record<string, unknown>): SseEvent =>
    jsonEvent({ type, ...fields, sequence_number: sequence++ }, type);
  // A compacted request's Response opens with its compaction item (compaction/automatic.ts).
  const head = compactionOf(body);
  const output = itemEvents(meta, itemOptions(body), event, head === undefined ? 0 : 1);
  const { blocks, items, record } = output;
  const snapshot = (state: Omit<ResponseState, "output">, before: OutputItem[] = head === undefined ? [] : [head]) =>
    responseObject(body, meta, { ...state, output: [...before, ...items.map(itemOf)] });

  const inProgress = { status: "in_progress", error: null, incomplete_details: null, usage: null } as const;
  return {
    start(_start: Start) {
      const frames = [
        event("response.created", { response: snapshot(inProgress, []) }),
        event("response.in_progress", { response: snapshot(inProgress, []) }),
      ];
      if (head === undefined) return frames;
      return [
        ...frames,
        event("response.output_item.added", { output_index: 0, item: head }),
        event("response.output_item.done", { output_index: 0, item: head }),
      ];
    },
    // Before the first token: the Response as it stands is the one `start` announced (with its compaction item).
    progress: (progress: Progress) => [
      event("response.in_progress", { response: snapshot(inProgress), prompt_progress: promptProgress(progress) }),
    ],
    token(token: Token) {
      return blocks.pushAll(tokenContent(token));
    },
    finish(finish: Finish) {
      const ending = responsesFinish(finish);
      if (ending === null) return [];
      output.closingStatus = ending.status === "completed" ? "completed" : "incomplete";
      const frames = [...blocks.pushAll(finishContent(finish)), ...blocks.close()];
      const response = snapshot({
        ...ending,
        completed_at: completedAt(meta),
        error: null,
        usage: responsesUsage(finish),
      });
      frames.push(event(`response.${ending.status}`, { response }), DONE);
      return frames;
    },
    fail(error: ApiError) {
      const open = blocks.open;
      if (open !== undefined) record(open).status = "incomplete";
      const response = snapshot({
        status: "failed",
        completed_at: completedAt(meta),
        error: { code: "server_error", message: error.message },
        incomplete_details: null,
        usage: null,
      });
      return [event("response.failed", { response }), DONE];
    },
  };
}

export function encodeResponse(
  body: ResponsesRequest,
  meta: ResponseMeta,
  result: GenerationResult,
): Record<string, unknown> {
  if (compactionTriggered(body)) return encodeCompactionResponse(body, meta, result);
  const ending = responsesFinish(result.finish) ?? { status: "completed", incomplete_details: null };
  const status: ItemStatus = ending.status === "completed" ? "completed" : "incomplete";
  const options = itemOptions(body);
  const generated = collectBlocks(result).map((block) =>
    itemOf({ block, id: `${itemIdPrefix(block)}${meta.newId()}`, status, options }),
  );
  const head = compactionOf(body);
  const output = head === undefined ? generated : [head, ...generated];
  return responseObject(body, meta, {
    ...ending,
    completed_at: completedAt(meta),
    error: null,
    usage: responsesUsage(result.finish),
    output,
  });
}

/** The answer to a background request the sidecar accepted: `queued`, nothing generated yet. */
export function queuedResponse(body: ResponsesRequest, meta: ResponseMeta): Record<string, unknown> {
  return responseObject(body, meta, {
    status: "queued",
    output: [],
    error: null,
    incomplete_details: null,
    usage: null,
  });
}
