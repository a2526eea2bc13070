// POST /v1/messages (and /v1/messages/count_tokens) request body, as Anthropic's
// Messages API defines it. Fields this server does not use (metadata, service_tier, …) are
// ignored; `null` is accepted for optional fields. `cache_control` (on system, tool, text,
// tool_use and tool_result blocks, and the request's own) is checked here and becomes the
// request's cache marks in cache-control.ts.
// A `system` message inside `messages` (Claude Code sends one, with its environment) stands where
// it is: the sidecar renders it there, or merges it into the system prompt when the model's
// template cannot (docs/contract.md, "Histories").
// Refused with a 400 naming the field: roles other than user/assistant/system, content blocks
// other than text / image / tool_use / tool_result / thinking / redacted_thinking, server tools (web
// search, bash, text editor…: this server runs custom tools only), and a last message from the
// assistant (a prefill: the sidecar contract has no way yet to continue an assistant turn
// instead of starting a new one).
import * as z from "zod";
import { hint, MAX_STOP_SEQUENCES, nonEmptyStops, positiveInteger, tokenLimit, uint32 } from "../../fields/checks.js";
import { DOCS } from "../../fields/docs-text.js";
import { docOf, ignored, implemented, shapeOf } from "../../fields/field-table.js";
import { formatConstraint } from "../../fields/output-constraint.js";
import { keepAliveRow, temperatureField, topKField, topPField } from "../../fields/sampling-fields.js";
import { CallLedger, duplicateNames, report, schemaObject, toolName, unknownChoice } from "../../fields/tool-checks.js";
import { returnProgressRow } from "../../fields/progress.js";

/** A cache breakpoint: `{type: "ephemeral", ttl?: "5m" | "1h"}` (docs/contract.md, "Cache hints"). */
const cacheControl = z
  .object({
    type: z.literal("ephemeral", { error: "expected 'ephemeral'" }),
    ttl: hint(["5m", "1h"], "5m"),
  })
  .nullish();
export type CacheControl = z.output<typeof cacheControl>;

const textBlock = z.object({ type: z.literal("text"), text: z.string(), cache_control: cacheControl });
const toolUseBlock = z.object({
  type: z.literal("tool_use"),
  cache_control: cacheControl,
  id: z.string().min(1),
  name: toolName(),
  input: z.record(z.string(), z.unknown(), { error: "expected the call's input object" }),
});
/** The image types Anthropic's base64 source takes. */
export const IMAGE_MEDIA_TYPES = ["image/jpeg", "image/png", "image/gif", "image/webp"] as const;
/** An image: base64 with its media type, or a URL the edge fetches (core/media/). */
const imageBlock = z.object({
  type: z.literal("image"),
  source: z.discriminatedUnion(
    "type",
    [
      z.object({
        type: z.literal("base64"),
        media_type: z.enum(IMAGE_MEDIA_TYPES, {
          error: `expected one of ${IMAGE_MEDIA_TYPES.map((t) => `'${t}'`).join(", ")}`,
        }),
        data: z.string().min(1),
      }),
      z.object({ type: z.literal("url"), url: z.string().min(1) }),
    ],
    { error: "expected an image source of type 'base64' or 'url'" },
  ),
  cache_control: cacheControl,
});
export type ImageBlock = z.output<typeof imageBlock>;
/** A tool result's text block (a document result is named in the error). */
const resultTextBlock = z.object({
  type: z.literal("text", {
    error: (issue) =>
      `tool_result content blocks of type '${String(issue.input)}' are not supported; send the result as a string, ` +
      `or 'text', 'image' and 'tool_reference' blocks`,
  }),
  text: z.string(),
  cache_control: cacheControl,
});
/**
 * A tool search's answer inside a tool result (Claude Code's ToolSearch): the deferred tool it
 * loads. Every tool is already in the prompt here, so it is rendered as a line naming the tool.
 */
const toolReferenceBlock = z.object({ type: z.literal("tool_reference"), tool_name: toolName() });
const toolResultBlock = z.object({
  type: z.literal("tool_result"),
  tool_use_id: z.string().min(1),
  content: z.union([z.string(), z.array(z.union([resultTextBlock, imageBlock, toolReferenceBlock]))]).nullish(),
  is_error: z.boolean().nullish(),
  cache_control: cacheControl,
});
const thinkingBlock = z.object({ type: z.literal("thinking"), thinking: z.string(), signature: z.string().nullish() });
const redactedThinkingBlock = z.object({ type: z.literal("redacted_thinking"), data: z.string().nullish() });

const BLOCK_TYPES = ["text", "image", "tool_use", "tool_result", "thinking", "redacted_thinking"] as const;

const contentBlock = z.discriminatedUnion(
  "type",
  [textBlock, imageBlock, toolUseBlock, toolResultBlock, thinkingBlock, redactedThinkingBlock],
  {
    error: (issue) =>
      issue.code === "invalid_union" && issue.note === "No matching discriminator"
        ? `content blocks of type '${String((issue.input as { type?: unknown } | undefined)?.type)}' are not ` +
          `supported; supported: ` +
          `${BLOCK_TYPES.map((t) => `'${t}'`).join(", ")}`
        : undefined,
  },
);
export type AnthropicBlock = z.output<typeof contentBlock>;

const content = z.union([z.string(), z.array(contentBlock)]);
export type AnthropicContent = z.output<typeof content>;
const systemContent = z.union([z.string(), z.array(textBlock)]);

export const ANTHROPIC_ROLES = ["user", "assistant", "system"] as const;
export type AnthropicRole = (typeof ANTHROPIC_ROLES)[number];

/** Which role may send which blocks. */
const BLOCKS_OF: Record<AnthropicRole, readonly string[]> = {
  user: ["text", "image", "tool_result"],
  assistant: ["text", "tool_use", "thinking", "redacted_thinking"],
  system: ["text"],
};

const message = z
  .object({
    role: z.enum(ANTHROPIC_ROLES, { error: "expected 'user', 'assistant' or 'system'" }),
    content,
  })
  .superRefine((m, ctx) => {
    if (typeof m.content === "string") return;
    m.content.forEach((block, i) => {
      if (!BLOCKS_OF[m.role].includes(block.type)) {
        ctx.addIssue({
          code: "custom",
          path: ["content", i, "type"],
          message: `a ${m.role} message cannot hold '${block.type}' blocks`,
        });
      }
    });
  });

/** A custom tool. Server tools (a `type` such as "web_search_20250305") are refused by name. */
const tool = z
  .object({
    type: z.string().nullish(),
    name: toolName(),
    description: z.string().nullish(),
    input_schema: schemaObject().optional(),
    cache_control: cacheControl,
  })
  .superRefine((t, ctx) => {
    if (t.type != null && t.type !== "custom") {
      ctx.addIssue({
        code: "custom",
        path: ["type"],
        message:
          `server tools ('${t.type}') are not supported: this server runs custom tools ({"name", ` +
          `"description", "input_schema"}) only`,
      });
    } else if (t.input_schema === undefined) {
      ctx.addIssue({ code: "custom", path: ["input_schema"], message: "a custom tool needs its input_schema" });
    }
  });

const toolChoice = z.discriminatedUnion(
  "type",
  [
    z.object({ type: z.literal("auto"), disable_parallel_tool_use: z.boolean().nullish() }),
    z.object({ type: z.literal("any"), disable_parallel_tool_use: z.boolean().nullish() }),
    z.object({ type: z.literal("tool"), name: z.string(), disable_parallel_tool_use: z.boolean().nullish() }),
    z.object({ type: z.literal("none") }),
  ],
  { error: "expected a tool_choice of type 'auto', 'any', 'tool' (with a name) or 'none'" },
);

/**
 * What Messages and count_tokens share: the conversation, the tools and the model (mapped in to-request.ts, `toChat`).
 */
const conversationFields = {
  model: implemented(z.string({ error: "expected a model name" }), {
    doc: DOCS && {
      proto: "GenerateRequest.model",
      why: "as OpenAI's",
    },
    write: (value, draft) => {
      draft.request.model = value;
    },
  }),
  messages: implemented(z.array(message).min(1, { error: "at least one message is required" }), {
    doc: DOCS && {
      proto: "Chat.messages",
      limits: "at least one; the last from the user",
      why: "the conversation, system messages in it included",
    },
  }),
  system: implemented(systemContent.nullish(), {
    doc: DOCS && { proto: "Chat.messages (first, system)", absent: "none", why: "the system prompt" },
  }),
  tools: implemented(z.array(tool).nullish(), {
    doc: DOCS && { proto: "Chat.tools", absent: "none", why: "custom tools; server tools are refused" },
  }),
  tool_choice: implemented(toolChoice.nullish(), {
    doc: DOCS && {
      proto: "Chat.tool_choice, tool_name, parallel_tool_calls",
      absent: "the sidecar's auto",
      why: "tools",
    },
  }),
  // Extended thinking: "enabled" (or "adaptive") shows the model's reasoning as thinking blocks
  // (not with display "omitted"); "disabled" means no reasoning (docs/contract.md, "Reasoning effort").
  thinking: implemented(
    z
      .object({
        type: z.enum(["enabled", "disabled", "adaptive"]),
        budget_tokens: uint32().nullish(),
        // A display this server does not know ("updates") shows the reasoning, as "summarized" does.
        display: hint(["summarized", "omitted"], "summarized"),
      })
      .nullish(),
    {
      doc: DOCS && {
        proto: "Chat.reasoning_budget",
        absent: "no limit, not shown",
        why: 'shown or not, and the reasoning budget ("Reasoning effort")',
      },
    },
  ),
};

const conversation = shapeOf(conversationFields);

function checkConversation(
  body: {
    messages: readonly z.output<typeof message>[];
    tools?: readonly { name: string }[] | null | undefined;
    tool_choice?: z.output<typeof toolChoice> | null | undefined;
    thread?: { type: string } | null | undefined;
  },
  ctx: z.RefinementCtx,
): void {
  // A thread's turn holds only the new messages: without a store threads.ts refuses it whole (with
  // one, edge/state/threads/ validates the thread's whole conversation, `thread` taken out).
  if (body.thread != null) return;
  const last = body.messages.length - 1;
  if (body.messages[last]?.role === "assistant") {
    ctx.addIssue({
      code: "custom",
      path: ["messages", last, "role"],
      message: "the last message must be from the user: continuing an assistant message (prefill) is not supported",
    });
  }
  const names = (body.tools ?? []).map((t) => t.name);
  report(
    ctx,
    duplicateNames(names, (i) => ["tools", i, "name"]),
  );
  if (body.tool_choice?.type === "tool")
    report(ctx, unknownChoice(body.tool_choice.name, names, ["tool_choice", "name"]));
  if (body.tool_choice?.type === "any" && names.length === 0) {
    ctx.addIssue({ code: "custom", path: ["tool_choice"], message: "'any' needs at least one tool" });
  }
  const ledger = new CallLedger();
  body.messages.forEach((m, i) => {
    if (typeof m.content === "string") return;
    m.content.forEach((block, j) => {
      if (block.type === "tool_use") ledger.call(block.id);
      if (block.type === "tool_result") ledger.result(block.tool_use_id, ["messages", i, "content", j, "tool_use_id"]);
    });
  });
  report(ctx, ledger.issues);
}

/** `thread` (beta message-threads-2026-08-12): start a thread the server keeps, or continue one. */
export const threadParam = z.discriminatedUnion(
  "type",
  [
    z.object({ type: z.literal("create") }),
    z.object({ type: z.literal("continue"), previous_message_id: z.string().min(1) }),
  ],
  { error: "expected a thread of type 'create', or 'continue' with a previous_message_id" },
);

/**
 * Every request field (docs/contract.md, "Request fields: Anthropic Messages"): its check, fate, proto field and why.
 */
export const MESSAGES_FIELDS = {
  // With a store, edge/state/threads/ answers a thread; without one threads.ts refuses it.
  thread: implemented(threadParam.nullish(), {
    doc: DOCS && {
      proto: "(the store, edge/state/threads/)",
      absent: "none",
      why:
        "with a store, the conversation is kept and continued from a reply's id; without one, refused as the API " +
        "refuses " +
        'what it cannot thread ("Anthropic message threads")',
    },
  }),
  ...conversationFields,
  // Structured output: the reply is JSON valid for the schema (the same grammar path as OpenAI's
  // response_format). `effort` changes how much the model reasons.
  output_config: implemented(
    z
      .object({
        format: z.object({ type: z.literal("json_schema"), schema: z.record(z.string(), z.unknown()) }).nullish(),
        effort: hint(["low", "medium", "high", "xhigh", "max"]),
      })
      .nullish(),
    {
      doc: DOCS && {
        proto: "GenerateRequest.constraint, Chat.reasoning_budget",
        absent: "free text, no limit",
        why: "`format` by grammar; `effort` is the reasoning budget",
      },
      write: (value, draft) => {
        const constraint = formatConstraint(value.format);
        if (constraint !== undefined) draft.request.constraint = constraint;
      },
    },
  ),
  // Required, as Anthropic requires it.
  max_tokens: implemented(positiveInteger(), {
    doc: DOCS && {
      proto: "GenerateRequest.max_tokens",
      limits: "required; ≥ 1 (above 4,294,967,295: no limit)",
      why: "token limit",
    },
    write: (value, draft) => {
      draft.request.maxTokens = tokenLimit(value);
    },
  }),
  stop_sequences: implemented(
    z
      .array(z.string())
      .max(MAX_STOP_SEQUENCES, { error: `at most ${MAX_STOP_SEQUENCES} stop sequences are supported` })
      .nullish(),
    {
      doc: DOCS && {
        proto: "GenerateRequest.stop",
        absent: "none",
        limits: `≤ ${MAX_STOP_SEQUENCES}; empty strings dropped`,
        why: "stop sequences",
      },
      write: (value, draft) => {
        draft.request.stop = nonEmptyStops(value);
      },
    },
  ),
  // Anthropic's ranges: temperature 0..1, top_p (0, 1], top_k ≥ 0 (0: off).
  temperature: temperatureField(1),
  top_p: topPField,
  top_k: topKField,
  stream: implemented(z.boolean().nullish(), {
    doc: DOCS && { proto: "(the answer's form)", absent: "one JSON answer", why: "SSE" },
  }),
  metadata: ignored(
    DOCS && { why: "end-user label", sample: { user_id: "u" } },
    z.object({ user_id: z.string().nullish() }).nullish(),
  ),
  // Automatic caching: the whole prompt is a breakpoint.
  cache_control: implemented(cacheControl, {
    doc: DOCS && {
      proto: "GenerateRequest.cache_marks",
      absent: "the blocks' own breakpoints",
      why: 'automatic caching: the whole prompt is a breakpoint ("Cache hints"; cache-control.ts)',
    },
  }),
  // Not Anthropic's: how long the model stays loaded (Ollama's field, docs/contract.md, "Models").
  keep_alive: {
    ...keepAliveRow,
    doc: DOCS && {
      ...docOf(keepAliveRow),
      why: 'not Anthropic\'s: how long the model stays loaded, as on the OpenAI routes ("Models")',
    },
  },
  container: ignored(DOCS && { why: "only for server tools, which are refused", sample: "container_1" }),
  diagnostics: ignored(DOCS && { why: "no diagnostics are produced", sample: {} }),
  inference_geo: ignored(DOCS && { why: "one place", sample: "us" }),
  service_tier: ignored(DOCS && { why: "one tier", sample: "auto" }),
  speed: ignored(DOCS && { why: "one speed", sample: "fast" }),
  user_profile_id: ignored(DOCS && { why: "account label", sample: "p" }),
  workspace_id: ignored(DOCS && { why: "account label", sample: "w" }),
  context_management: ignored(
    DOCS && {
      why: "earlier thinking is dropped by the chat template anyway",
      sample: { edits: [{ type: "clear_thinking_20251015", keep: "all" }] },
    },
  ),
  return_progress: returnProgressRow(
    "`prompt_progress` events after `message_start` while the prompt is evaluated (llama-server's counts)",
  ),
};

export const messagesRequestSchema = z.object(shapeOf(MESSAGES_FIELDS)).superRefine(checkConversation);

export type MessagesRequest = z.output<typeof messagesRequestSchema>;

export const countTokensRequestSchema = z.object(conversation).superRefine(checkConversation);

export type CountTokensRequest = z.output<typeof countTokensRequestSchema>;

/** Whether the reply's reasoning is shown (as thinking blocks). */
export const showsThinking = (body: Pick<MessagesRequest, "thinking">): boolean =>
  (body.thinking?.type === "enabled" || body.thinking?.type === "adaptive") && body.thinking.display !== "omitted";
