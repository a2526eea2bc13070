// POST /v1/responses request body (OpenAI Responses API). Fields this
// server does not use (user, reasoning, truncation, include, …) are ignored;
// `null` is accepted for optional fields; `store` and `previous_response_id` are the handler's
// (edge/state/responses/ with a store; refused or false without one).
// Tools of type "function", and those of "namespace" tools, are offered to the model (tools.ts);
// other tool types that agents send (web_search, file_search, code_interpreter, mcp, …) are
// ignored and named in the Response's `warnings`. Input items: messages, function_call, function_call_output, and
// reasoning items (their text becomes the next assistant message's reasoning), and compaction
// items this server made (their summary becomes a user message; compaction/compaction-prompt.ts).
// Refused with a 400 naming the field: `conversation`, other input item types, content
// parts other than input_text / output_text / input_image (an image by `image_url` or `file_id`, in user messages
// and function_call_output; core/media/ reads it).
import * as z from "zod";
import { CallLedger, duplicateNames, report, toolName, unknownChoice } from "../../fields/tool-checks.js";
import { anyTool, checkTool, functionTool, offeredTools } from "./tools.js";
import { textFormatConstraint, textFormatField } from "../openai-common/response-format.js";
import { promptCacheFields } from "../openai-common/prompt-cache.js";
import { openaiRequestFields, openaiSamplingFields } from "../openai-common/fields.js";
import { positiveInteger, tokenLimit, UINT32_MAX } from "../../fields/checks.js";
import { DOCS } from "../../fields/docs-text.js";
import { docOf, ignored, implemented, refused, shapeOf } from "../../fields/field-table.js";
import { effortBudget } from "../../fields/reasoning-effort.js";
import { openCompaction } from "./compaction/compaction-prompt.js";
import { returnProgressRow } from "../../fields/progress.js";

export const RESPONSES_ROLES = ["system", "developer", "user", "assistant"] as const;
export type ResponsesRole = (typeof RESPONSES_ROLES)[number];

const TEXT_PARTS = new Set(["input_text", "output_text"]);
const PART_TYPES = ["input_text", "output_text", "input_image"];

/** An input_image part: its `image_url` (a data: URL or an http(s) URL) or `file_id` (core/media/). */
export interface InputImage {
  readonly image_url?: string;
  readonly file_id?: string;
}

const imagePart = z
  .object({
    type: z.literal("input_image"),
    image_url: z.string().min(1).nullish(),
    file_id: z.string().min(1).nullish(),
    // Accepted and unused (as every hint: docs/contract.md, "Hints never refuse").
    detail: z.string().nullish(),
  })
  .superRefine((part, ctx) => {
    if ((part.image_url == null) === (part.file_id == null))
      ctx.addIssue({
        code: "custom",
        path: ["image_url"],
        message: "an input_image needs 'image_url' or 'file_id', one of them",
      });
  })
  .transform(
    (part): InputImage => (part.file_id == null ? { image_url: part.image_url ?? "" } : { file_id: part.file_id }),
  );

const textPart = z
  .object({ type: z.string(), text: z.unknown().optional() })
  .superRefine((part, ctx) => {
    if (!TEXT_PARTS.has(part.type)) {
      const why = part.type === "input_audio" ? " (no audio model is served here)" : "";
      ctx.addIssue({
        code: "custom",
        path: ["type"],
        message:
          `content parts of type '${part.type}' are not supported${why}; supported: ` +
          PART_TYPES.map((t) => `'${t}'`).join(", "),
      });
    } else if (typeof part.text !== "string") {
      ctx.addIssue({ code: "custom", path: ["text"], message: "expected a string" });
    }
  })
  .transform((part) => String(part.text));

/** A content part: its text, or an image. */
const contentPart = z.union([
  z.custom<unknown>((part) => (part as { type?: unknown } | null)?.type === "input_image").pipe(imagePart),
  textPart,
]);
export type ResponsesContentPart = string | InputImage;

const messageItem = z
  .object({
    type: z.literal("message"),
    role: z.enum(RESPONSES_ROLES, {
      error: `expected one of ${RESPONSES_ROLES.map((r) => `'${r}'`).join(", ")}`,
    }),
    content: z.union([z.string(), z.array(contentPart)]),
  })
  .superRefine((item, ctx) => {
    if (item.role === "user" || typeof item.content === "string") return;
    item.content.forEach((part, j) => {
      if (typeof part !== "string")
        ctx.addIssue({ code: "custom", path: ["content", j, "type"], message: "images go in user messages only" });
    });
  });

export type ResponsesMessageItem = z.output<typeof messageItem>;

const functionCallItem = z.object({
  type: z.literal("function_call"),
  call_id: z.string().min(1),
  name: toolName(),
  arguments: z.string(),
  // The namespace of a namespaced tool's call: names are unique across namespaces, so it is not needed.
  namespace: z.string().nullish(),
});
const functionCallOutputItem = z.object({
  type: z.literal("function_call_output"),
  call_id: z.string().min(1),
  output: z.union([z.string(), z.array(contentPart)]),
});
/**
 * A reasoning item sent back: its reasoning_text (else the text its encrypted_content holds, else
 * its summary) goes with the next assistant turn.
 */
const reasoningItem = z.object({
  type: z.literal("reasoning"),
  summary: z.array(z.object({ text: z.string() })).nullish(),
  content: z.array(z.object({ text: z.string() })).nullish(),
  encrypted_content: z.string().nullish(),
});

/**
 * A compaction item sent back (from POST /v1/responses/compact): its encrypted_content must be one
 * this server sealed (compaction/compaction-prompt.ts); the summary it holds stands for the conversation it replaced.
 */
const compactionItem = z
  .object({ type: z.literal("compaction"), encrypted_content: z.string(), id: z.string().nullish() })
  .transform((item, ctx) => {
    const summary = openCompaction(item.encrypted_content);
    if (summary === undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["encrypted_content"],
        message:
          "is not a compaction this server made: send back the compaction item this server's /v1/responses/compact " +
          "returned, unchanged",
      });
      return z.NEVER;
    }
    return { type: "compaction" as const, summary };
  });

/**
 * `compaction_trigger` (OpenAI's compaction inside a Responses request, as Codex's remote compaction
 * sends it): the reply is one compaction item in place of an answer; only as the last input item.
 */
const compactionTriggerItem = z.object({ type: z.literal("compaction_trigger"), metadata: z.unknown().optional() });

const ITEM_TYPES = [
  "message",
  "function_call",
  "function_call_output",
  "reasoning",
  "compaction",
  "compaction_trigger",
];

/** An input item; a message may leave out its `type`. */
export const inputItem = z.preprocess(
  (item) =>
    typeof item === "object" && item !== null && !Array.isArray(item) && (item as { type?: unknown }).type == null
      ? { ...item, type: "message" }
      : item,
  z.discriminatedUnion(
    "type",
    [messageItem, functionCallItem, functionCallOutputItem, reasoningItem, compactionItem, compactionTriggerItem],
    {
      error: (issue) => {
        if (issue.code !== "invalid_union" || issue.note !== "No matching discriminator") return undefined;
        const type = String((issue.input as { type?: unknown } | undefined)?.type);
        const stored = type === "item_reference" ? " (stored items are not supported: this server stores nothing)" : "";
        return (
          `input items of type '${type}' are not supported; supported: ` +
          `${ITEM_TYPES.map((t) => `'${t}'`).join(", ")}${stored}`
        );
      },
    },
  ),
);
export type ResponsesInputItem = z.output<typeof inputItem>;

const CHOICES = 'use "none", "auto", "required" or {"type":"function","name":…}';

/**
 * "none" / "auto" / "required" / {type: "function", name}. A choice that forces a tool of
 * another type (web_search, file_search, mcp, custom, …) or limits the tools (allowed_tools)
 * is refused naming its type: those tools are ignored here, so it cannot be honoured.
 */
const toolChoice = z
  .union([z.enum(["none", "auto", "required"]), z.looseObject({ type: z.string(), name: z.unknown().optional() })], {
    error: `expected ${CHOICES}`,
  })
  .superRefine((choice, ctx) => {
    if (typeof choice === "string") return;
    if (choice.type !== "function") {
      const why =
        choice.type === "allowed_tools"
          ? 'is not supported: send only the allowed function tools in \'tools\' with tool_choice "auto" or "required"'
          : `is not supported: tools of type '${choice.type}' are ignored by this server; ${CHOICES}`;
      ctx.addIssue({ code: "custom", path: ["type"], message: `a tool_choice of type '${choice.type}' ${why}` });
    } else if (typeof choice.name !== "string") {
      ctx.addIssue({ code: "custom", path: ["name"], message: "expected the name of the function to call" });
    }
  })
  .transform((choice) =>
    typeof choice === "string" ? choice : { type: "function" as const, name: String(choice.name) },
  );

const NOT_STORED =
  "not supported yet: this server stores no responses (the stored, stateful side of the Responses API comes in a " +
  "later " +
  "version); send the whole conversation in 'input'";

/** Why previous_response_id is refused by a server without a store. */
export const NOT_STORED_HERE =
  "is not supported by this server without a store (no database is configured): send the whole conversation in 'input'";

/** Every request field (docs/contract.md, "Request fields: Responses"): its check, fate, proto field and why. */
export const RESPONSES_FIELDS = {
  model: openaiRequestFields.model,
  input: implemented(
    z.union([z.string(), z.array(inputItem).min(1, { error: "at least one input item is required" })]),
    {
      doc: DOCS && {
        proto: "Chat.messages",
        limits:
          "text, or at least one item: message, function_call, function_call_output, reasoning, compaction, " +
          "compaction_trigger",
        why: "messages and items (to-request.ts)",
      },
    },
  ),
  instructions: implemented(z.string().nullish(), {
    doc: DOCS && { proto: "Chat.messages (first, system)", absent: "none", why: "the system message (to-request.ts)" },
  }),
  max_output_tokens: implemented(positiveInteger().nullish(), {
    doc: openaiRequestFields.max_tokens.doc,
    write: (value, draft) => {
      draft.request.maxTokens = tokenLimit(value);
    },
  }),
  temperature: openaiSamplingFields.temperature,
  top_p: openaiSamplingFields.top_p,
  stream: implemented(z.boolean().nullish(), {
    doc: DOCS && { proto: "(the answer's form)", absent: "one JSON answer", why: "SSE with named events" },
  }),
  metadata: echoed(z.record(z.string(), z.string()).nullish()),
  // With a store (edge/state/responses/) the handler sets `store` to what is done and puts the
  // previous responses' items first in `input`; without one it refuses previous_response_id and
  // sets `store` to false.
  store: implemented(z.boolean().nullish(), {
    doc: DOCS && {
      proto: "(the store, edge/state/responses/)",
      absent: "true with a store",
      why:
        "with a store: true unless `false`, and the Response says what was done; without one: nothing is stored, " +
        "the Response says `store: false`",
    },
  }),
  previous_response_id: implemented(z.string().min(1).nullish(), {
    doc: DOCS && {
      proto: "(the store: items before `input`)",
      absent: "none",
      why:
        "with a store: the stored response's input and output go before `input` (not its `instructions`); unknown or " +
        "another key's: " +
        "400 `previous_response_not_found`, as OpenAI answers it. Without a store: the same 400, saying nothing is " +
        "stored",
    },
  }),
  // With a store the handler takes `conversation` out before parsing and puts `{id}` back after
  // (edge/state/responses/conversation.ts); without one it is refused here.
  conversation: implemented(
    z
      .unknown()
      .optional()
      .refine((value): boolean => value == null, { error: NOT_STORED }),
    {
      doc: DOCS && {
        proto: "(the store: the conversation's items before `input`)",
        absent: "none",
        why:
          "with a store: the OpenAI conversation's items go before `input` and the finished turn is appended to it " +
          '("OpenAI conversations"); not with `previous_response_id`. Without a store: a 400 naming it',
      },
    },
  ),
  text: implemented(z.object({ format: textFormatField }).nullish(), {
    doc: DOCS && {
      proto: "GenerateRequest.constraint",
      absent: "free text",
      why: "`format`: JSON object or schema",
    },
    write: (value, draft) => {
      draft.request.constraint = textFormatConstraint(value.format);
    },
  }),
  tools: implemented(z.array(anyTool).nullish(), {
    doc: DOCS && {
      proto: "Chat.tools",
      absent: "none",
      why:
        "function tools, and those of namespace tools; other types are ignored with a warning in the Response " +
        "(to-request.ts)",
    },
  }),
  tool_choice: implemented(toolChoice.nullish(), {
    doc: DOCS && {
      proto: "Chat.tool_choice, Chat.tool_name",
      absent: "the sidecar's auto",
      why: "tools (to-request.ts)",
    },
  }),
  parallel_tool_calls: implemented(z.boolean().nullish(), {
    doc: DOCS && {
      proto: "Chat.parallel_tool_calls",
      absent: "true",
      why: "tools; `max_tool_calls` 1 makes it false",
    },
    write: (value, draft) => {
      draft.chat.parallelToolCalls ??= value;
    },
  }),
  // Sampling the proto carries, echoed in the Response.
  presence_penalty: openaiSamplingFields.presence_penalty,
  frequency_penalty: openaiSamplingFields.frequency_penalty,
  // Logprobs on output text are not produced on this endpoint yet: 0 (or unset) only.
  top_logprobs: refused(
    DOCS && { why: "no logprobs on this endpoint yet", sample: 3 },
    z
      .number()
      .nullish()
      .refine((n) => n == null || n === 0, {
        error: "top_logprobs on /v1/responses is not supported yet; use /v1/chat/completions with logprobs",
      }),
  ),
  return_progress: returnProgressRow(
    "`response.in_progress` events with llama-server's `prompt_progress` while the prompt is evaluated",
  ),
  // At most one call per reply when 1 (more are not counted yet: any larger value allows parallel calls).
  max_tool_calls: implemented(z.number().int().min(1).max(UINT32_MAX).nullish(), {
    doc: DOCS && {
      proto: "Chat.parallel_tool_calls",
      absent: "no limit",
      limits: "≥ 1",
      why: "1 means one call",
    },
    write: (value, draft) => {
      if (value === 1) draft.chat.parallelToolCalls = false;
    },
  }),
  // A resumable stream with stream: true, else a job to poll (docs/contract.md, "Resumable streams").
  background: implemented(z.boolean().nullish(), {
    doc: DOCS && {
      proto: "GenerateRequest.resumable, detached",
      absent: "false",
      why:
        'with `stream: true` a resumable stream; without, a job answered at once (`status: "queued"`) and polled ' +
        "with " +
        '`GET /v1/responses/{id}` ("Resumable streams"); the Response says `background: true`',
    },
  }),
  reasoning: implemented(z.object({ effort: z.string().nullish(), summary: z.string().nullish() }).nullish(), {
    doc: DOCS && {
      proto: "Chat.reasoning_budget",
      absent: "no limit",
      why: "`effort` is the reasoning budget; `summary` is echoed (no summary is made)",
    },
    write: (value, draft) => {
      const budget = effortBudget(value.effort);
      if (budget !== undefined) draft.chat.reasoningBudget = budget;
    },
  }),
  service_tier: implemented(z.string().nullish(), {
    doc: DOCS && { proto: "(the Response)", absent: "`default`", why: "the Response says `default`" },
  }),
  safety_identifier: echoed(z.string().nullish()),
  ...promptCacheFields,
  prompt_cache_key: {
    ...promptCacheFields.prompt_cache_key,
    doc: DOCS && {
      ...docOf(promptCacheFields.prompt_cache_key),
      why: 'echoed; joins the affinity key across sidecars ("Cache hints")',
    },
  },
  prompt_cache_retention: {
    ...promptCacheFields.prompt_cache_retention,
    doc: DOCS && {
      ...docOf(promptCacheFields.prompt_cache_retention),
      why:
        '`"in_memory"` / `"24h"`: the whole prompt kept ahead of unmarked ones for 10 minutes / 24 h; echoed when ' +
        'given ("Cache hints")',
    },
  },
  user: echoed(z.string().nullish()),
  truncation: implemented(z.enum(["auto", "disabled"]).nullish(), {
    doc: DOCS && {
      proto: "(the Response)",
      absent: "`disabled`",
      why: "echoed; a prompt that does not fit is refused either way",
    },
  }),
  keep_alive: openaiSamplingFields.keep_alive,
  // "reasoning.encrypted_content" gives reasoning items an encrypted_content to send back next
  // turn (encrypted-reasoning.ts); other values add nothing this server makes.
  include: implemented(z.array(z.string()).nullish(), {
    doc: DOCS && {
      proto: "(the Response's reasoning items)",
      absent: "none",
      why:
        '`"reasoning.encrypted_content"` gives reasoning items an `encrypted_content` that carries their text to the ' +
        "next turn; " +
        "other values add nothing this server makes",
    },
  }),
  // Server-side compaction (compaction/automatic.ts): compacts before generating when the prompt
  // reaches `compact_threshold` tokens (else when it would not leave room for the reply).
  context_management: implemented(
    z
      .array(
        z.object({
          type: z.literal("compaction", { error: "the only context_management type is 'compaction'" }),
          compact_threshold: positiveInteger().nullish(),
        }),
      )
      .nullish(),
    {
      doc: DOCS && {
        proto: "(a compaction pass first)",
        absent: "no compaction",
        why:
          '`[{"type":"compaction","compact_threshold":N}]`: the request is compacted before it is answered when its ' +
          "prompt reaches " +
          'the threshold ("Compaction"); another type: a 400 naming it',
      },
    },
  ),
  // Stored prompt templates live on OpenAI's platform; this server has none.
  prompt: refused(
    DOCS && { why: "no stored prompt templates", sample: { id: "pmpt_1" } },
    "prompt templates are not supported: this server stores no prompts; send the instructions and input",
  ),
  client_metadata: ignored(
    DOCS && { why: "the client's own labels (Codex sends them); they change nothing", sample: { x: "y" } },
  ),
  verbosity: ignored(
    DOCS && { why: 'a hint: replies are not shortened or lengthened on request ("Hints never refuse")', sample: "low" },
  ),
  moderation: ignored(DOCS && { why: "no moderation runs here", sample: { model: "omni-moderation-latest" } }),
  prompt_cache_options: ignored(DOCS && { why: "caching is automatic", sample: {} }),
  stream_options: ignored(DOCS && { why: "no obfuscation padding is sent", sample: { include_obfuscation: false } }),
};

/** A field the Response echoes and nothing else reads. */
function echoed<S extends z.ZodType>(schema: S) {
  return implemented(schema, { doc: DOCS && { proto: "(the Response)", absent: "null", why: "echoed" } });
}

export const responsesRequestSchema = z.object(shapeOf(RESPONSES_FIELDS)).superRefine((body, ctx) => {
  (body.tools ?? []).forEach((tool, i) => {
    const parsed = checkTool(tool);
    for (const issue of parsed?.error?.issues ?? [])
      ctx.addIssue({ ...issue, code: "custom", path: ["tools", i, ...issue.path] } as never);
    if (parsed?.success === true && parsed.data.type === "namespace") {
      parsed.data.tools.forEach((inner, j) => {
        if (inner.type !== "function") return;
        for (const issue of functionTool.safeParse(inner).error?.issues ?? [])
          ctx.addIssue({ ...issue, code: "custom", path: ["tools", i, "tools", j, ...issue.path] } as never);
      });
    }
  });
  const offered = offeredTools(body.tools);
  const names = offered.map((o) => o.tool.name);
  report(
    ctx,
    duplicateNames(names, (i) => [...(offered[i]?.path ?? ["tools"]), "name"]),
  );
  const choice = body.tool_choice;
  if (typeof choice === "object" && choice !== null)
    report(ctx, unknownChoice(choice.name, names, ["tool_choice", "name"]));
  if (choice === "required" && names.length === 0) {
    ctx.addIssue({ code: "custom", path: ["tool_choice"], message: '"required" needs at least one function tool' });
  }
  if (typeof body.input !== "string") {
    const last = body.input.length - 1;
    body.input.forEach((item, i) => {
      if (item.type === "compaction_trigger" && i !== last) {
        ctx.addIssue({
          code: "custom",
          path: ["input", i, "type"],
          message: "a 'compaction_trigger' item must be the last input item",
        });
      }
    });
    const ledger = new CallLedger();
    body.input.forEach((item, i) => {
      if (!("call_id" in item)) return;
      if (item.type === "function_call") ledger.call(item.call_id);
      else ledger.result(item.call_id, ["input", i, "call_id"]);
    });
    report(ctx, ledger.issues);
  }
});

export type ResponsesRequest = z.output<typeof responsesRequestSchema>;

/**
 * Whether the request asks for a compaction (its last input item is a compaction_trigger): docs/contract.md,
 * "Compaction".
 */
export function compactionTriggered(body: Pick<ResponsesRequest, "input">): boolean {
  return typeof body.input !== "string" && body.input.at(-1)?.type === "compaction_trigger";
}
