// POST /v1/messages (and /v1/messages/count_tokens) request body, as Anthropic's
// Messages API defines it. Fields this server does not use (metadata, service_tier,
// thinking, tool_choice, cache_control on blocks, …) are ignored; `null` is accepted
// for optional fields. Refused with a 400 naming the field: roles other than
// user/assistant (the system prompt is the top-level `system`), content blocks other
// than `text` (tool_use / tool_result / thinking blocks come with tool support), a
// non-empty `tools`, and a last message from the assistant (a prefill: the sidecar
// contract has no way yet to continue an assistant turn instead of starting a new one).
import { z } from "zod";
import { integer, MAX_STOP_SEQUENCES, positiveInteger, UINT32_MAX } from "../../fields.js";

/** Block types that arrive with tools and reasoning (issue 4), named in the refusal. */
const LATER_BLOCKS = new Set(["tool_use", "tool_result", "thinking", "redacted_thinking", "server_tool_use"]);

/** A content block; only `text` is supported: {"type":"text","text":…}. */
const contentBlock = z
  .object({ type: z.string(), text: z.unknown().optional() })
  .superRefine((block, ctx) => {
    if (block.type !== "text") {
      const later = LATER_BLOCKS.has(block.type) ? " (tool and thinking blocks come with tool support)" : "";
      ctx.addIssue({
        code: "custom",
        path: ["type"],
        message: `content blocks of type '${block.type}' are not supported; only 'text' blocks are${later}`,
      });
    } else if (typeof block.text !== "string") {
      ctx.addIssue({ code: "custom", path: ["text"], message: "expected a string" });
    }
  })
  .transform((block) => ({ type: "text" as const, text: String(block.text) }));

const content = z.union([z.string(), z.array(contentBlock)]);
export type AnthropicContent = z.output<typeof content>;

export const ANTHROPIC_ROLES = ["user", "assistant"] as const;
export type AnthropicRole = (typeof ANTHROPIC_ROLES)[number];

const message = z.object({
  role: z.enum(ANTHROPIC_ROLES, {
    error: "expected 'user' or 'assistant' (the system prompt is the top-level 'system' field)",
  }),
  content,
});

/** What Messages and count_tokens share: the conversation and the model. */
const conversation = {
  model: z.string({ error: "expected a model name" }),
  messages: z.array(message).min(1, { error: "at least one message is required" }),
  system: content.nullish(),
  tools: z
    .array(z.unknown())
    .nullish()
    .refine((tools) => tools == null || tools.length === 0, {
      error: "not supported yet (tools come with the next version); send no tools or an empty list",
    }),
};

function noPrefill(body: { messages: readonly { role: AnthropicRole }[] }, ctx: z.RefinementCtx): void {
  const last = body.messages.length - 1;
  if (body.messages[last]?.role === "assistant") {
    ctx.addIssue({
      code: "custom",
      path: ["messages", last, "role"],
      message: "the last message must be from the user: continuing an assistant message (prefill) is not supported",
    });
  }
}

export const messagesRequestSchema = z
  .object({
    ...conversation,
    // Required, as Anthropic requires it.
    max_tokens: positiveInteger(),
    stop_sequences: z
      .array(z.string())
      .max(MAX_STOP_SEQUENCES, { error: `at most ${MAX_STOP_SEQUENCES} stop sequences are supported` })
      .nullish(),
    // Anthropic's ranges: temperature 0..1, top_p (0, 1], top_k ≥ 0 (0: off).
    temperature: z.number().min(0).max(1).nullish(),
    top_p: z.number().gt(0).max(1).nullish(),
    top_k: integer().min(0).max(UINT32_MAX).nullish(),
    stream: z.boolean().nullish(),
    metadata: z.object({ user_id: z.string().nullish() }).nullish(),
  })
  .superRefine(noPrefill);

export type MessagesRequest = z.output<typeof messagesRequestSchema>;

export const countTokensRequestSchema = z.object(conversation).superRefine(noPrefill);

export type CountTokensRequest = z.output<typeof countTokensRequestSchema>;
