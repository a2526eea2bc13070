// `cache_control` breakpoints → the request's cache marks (docs/contract.md, "Cache hints";
// docs/decisions.md, "Cache hints"). A breakpoint on a block marks the prompt through the chat
// message that block ends up in (a tool_result block is a tool message of its own; a message's
// text follows its tool results); one on the system prompt or a tool marks through the system
// message (templates render tools in the system area); the request's own marks the whole prompt.
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { CacheMarkSchema } from "../../../proto/gen/inference/v1/inference_pb.js";
import { InvalidRequestError } from "../../base/errors.js";
import type { AnthropicBlock, CacheControl, MessagesRequest } from "./schema.js";

type CacheMarkInit = MessageInitShape<typeof CacheMarkSchema>;

/** The chat messages the request became (to-request.ts's `chatMessagesOf`): the system's, then each message's. */
export interface ChatParts {
  readonly system: readonly unknown[];
  readonly groups: readonly (readonly unknown[])[];
}

type Breakpoint = { messages: number | undefined; control: NonNullable<CacheControl> };

/** Anthropic's limit on blocks with cache_control in one request. */
export const MAX_BREAKPOINTS = 4;

const TTL_SECONDS = { "5m": 300, "1h": 3600 } as const;

const ttlOf = (control: NonNullable<CacheControl>): number => TTL_SECONDS[control.ttl ?? "5m"];

/** Each breakpoint as (chat messages through its end, ttl), in the order of the request. */
function breakpoints(body: MessagesRequest, { system, groups }: ChatParts): Breakpoint[] {
  const systemEnd = system.length > 0 ? 1 : undefined;
  const found: Breakpoint[] = [];
  for (const tool of body.tools ?? [])
    if (tool.cache_control != null) found.push({ messages: systemEnd, control: tool.cache_control });
  if (typeof body.system !== "string")
    for (const block of body.system ?? [])
      if (block.cache_control != null) found.push({ messages: systemEnd, control: block.cache_control });
  let offset = system.length;
  body.messages.forEach((message, i) => {
    const count = groups[i]?.length ?? 0;
    if (typeof message.content !== "string") {
      let results = 0;
      for (const block of message.content) {
        if (block.type === "tool_result") results++;
        const mark = controlOf(block);
        if (mark != null)
          found.push({ messages: offset + (block.type === "tool_result" ? results : count), control: mark });
      }
    }
    offset += count;
  });
  if (body.cache_control != null) found.push({ messages: offset, control: body.cache_control });
  return found;
}

/** A block's breakpoint: its own, or (a tool result) one on a text block of its content. */
function controlOf(block: AnthropicBlock): CacheControl {
  if ("cache_control" in block && block.cache_control != null) return block.cache_control;
  if (block.type !== "tool_result" || typeof block.content === "string") return undefined;
  for (const inner of block.content ?? [])
    if (inner.type === "text" && inner.cache_control != null) return inner.cache_control;
  return undefined;
}

/**
 * The request's cache marks, one per prefix (the longest ttl when several breakpoints end at the
 * same message). More than MAX_BREAKPOINTS breakpoints is a 400, as Anthropic refuses it; a
 * breakpoint on the system prompt or a tool with no system prompt marks nothing.
 */
export function cacheMarksOf(body: MessagesRequest, parts: ChatParts): CacheMarkInit[] {
  const found = breakpoints(body, parts);
  if (found.length > MAX_BREAKPOINTS) {
    throw new InvalidRequestError(
      `A maximum of ${MAX_BREAKPOINTS} blocks with cache_control may be provided. Found ${found.length}.`,
    );
  }
  const byEnd = new Map<number, number>();
  for (const { messages, control } of found)
    if (messages !== undefined) byEnd.set(messages, Math.max(byEnd.get(messages) ?? 0, ttlOf(control)));
  return [...byEnd].map(([messages, ttlSeconds]) => ({ messages, ttlSeconds }));
}

type Message = MessagesRequest["messages"][number];

/**
 * Messages without their breakpoints (a message thread stores them so: a breakpoint marks the
 * request that sent it, and a thread's later turns would otherwise pile them past the limit).
 */
export function withoutCacheControl(messages: readonly Message[]): Message[] {
  const strip = <T extends object>(block: T): T => {
    if (!("cache_control" in block)) return block;
    const { cache_control: _, ...rest } = block;
    return rest as T;
  };
  return messages.map((message) =>
    typeof message.content === "string"
      ? message
      : {
          ...message,
          content: message.content.map((block) =>
            block.type === "tool_result" && Array.isArray(block.content)
              ? strip({ ...block, content: block.content.map(strip) })
              : strip(block),
          ),
        },
  );
}
