// POST /v1/chat/completions request body. Fields this server does not use (user,
// metadata, store, …) are ignored, so stock OpenAI clients work unchanged.
//
// Tools: `tools` (function tools only), `tool_choice`, `parallel_tool_calls`; assistant
// messages with `tool_calls` (content null or absent), `tool` messages answering a call made
// earlier in the conversation, and the reasoning a previous reply carried. The legacy
// `functions` / `function_call` are refused: their clients read `message.function_call` and
// finish_reason "function_call" back, which this server does not send (it answers in
// `tool_calls`), so accepting them would break those clients silently.
import * as z from "zod";
import { hint, positiveInteger, tokenLimit } from "../../fields/checks.js";
import { DOCS } from "../../fields/docs-text.js";
import { ignored, implemented, refused, shapeOf } from "../../fields/field-table.js";
import { effortBudget } from "../../fields/reasoning-effort.js";
import { topLogprobsField } from "../../fields/sampling-fields.js";
import { CallLedger, duplicateNames, report, schemaObject, toolName, unknownChoice } from "../../fields/tool-checks.js";
import { openaiRequestFields, openaiSamplingFields } from "../openai-common/fields.js";
import { responseFormatRow } from "../openai-common/response-format.js";
import { promptCacheFields } from "../openai-common/prompt-cache.js";

const LEGACY_FUNCTIONS =
  'the legacy "functions" / "function_call" are not supported: send "tools", "tool_choice" and assistant ' +
  '"tool_calls" instead';

export const CHAT_ROLES = ["system", "developer", "user", "assistant", "tool"] as const;
export type ChatRole = (typeof CHAT_ROLES)[number];

const textPart = z.object({ type: z.literal("text"), text: z.string() });
/** An image by URL: a data: URL or an http(s) URL the edge fetches (core/media/); `detail` is accepted and unused. */
const imagePart = z.object({
  type: z.literal("image_url"),
  image_url: z.object({ url: z.string().min(1), detail: hint(["auto", "low", "high"]) }),
});
const PART_TYPES = ["text", "image_url"];
const contentPart = z.discriminatedUnion("type", [textPart, imagePart], {
  error: (issue) => {
    if (issue.code !== "invalid_union" || issue.note !== "No matching discriminator") return undefined;
    const type = String((issue.input as { type?: unknown } | undefined)?.type);
    const why = type === "input_audio" ? " (no audio model is served here)" : "";
    const supported = PART_TYPES.map((t) => `'${t}'`).join(", ");
    return `content parts of type '${type}' are not supported${why}; supported: ${supported}`;
  },
});
export type ChatContentPart = z.output<typeof contentPart>;

const toolCall = z.object({
  id: z.string().min(1),
  type: z.literal("function", { error: 'only "function" tool calls are supported' }).optional(),
  function: z.object({ name: toolName(), arguments: z.string() }),
});

const message = z
  .object({
    role: z.enum(CHAT_ROLES, {
      error: `expected one of ${CHAT_ROLES.map((r) => `'${r}'`).join(", ")}`,
    }),
    // null is how clients send an assistant turn that only called tools.
    content: z.union([z.string(), z.array(contentPart)]).nullish(),
    tool_calls: z.array(toolCall).nullish(),
    tool_call_id: z.string().nullish(),
    // Reasoning a previous reply carried (`reasoning` is the other name clients use).
    reasoning_content: z.string().nullish(),
    reasoning: z.string().nullish(),
    // The legacy spelling of tool_calls (refused below).
    function_call: z.unknown().optional(),
  })
  .superRefine((m, ctx) => {
    if (m.function_call != null) {
      ctx.addIssue({ code: "custom", path: ["function_call"], message: LEGACY_FUNCTIONS });
    }
    if (m.role !== "assistant" && m.content == null) {
      ctx.addIssue({ code: "custom", path: ["content"], message: `a ${m.role} message needs content` });
    }
    if (m.role === "tool" && (m.tool_call_id == null || m.tool_call_id === "")) {
      ctx.addIssue({
        code: "custom",
        path: ["tool_call_id"],
        message: "a tool message needs the tool_call_id it answers",
      });
    }
    if (m.role !== "user" && Array.isArray(m.content)) {
      m.content.forEach((part, j) => {
        if (part.type !== "text")
          ctx.addIssue({ code: "custom", path: ["content", j, "type"], message: "images go in user messages only" });
      });
    }
    if (m.role !== "assistant" && m.tool_calls != null && m.tool_calls.length > 0) {
      ctx.addIssue({ code: "custom", path: ["tool_calls"], message: "only assistant messages carry tool_calls" });
    }
  });

const functionDefinition = z.object({
  name: toolName(),
  description: z.string().nullish(),
  parameters: schemaObject().nullish(),
  strict: z.boolean().nullish(),
});

const tool = z.object({
  type: z.literal("function", { error: 'only "function" tools are supported' }),
  function: functionDefinition,
});

const toolChoice = z.union(
  [
    z.enum(["none", "auto", "required"]),
    z.object({ type: z.literal("function"), function: z.object({ name: z.string() }) }),
  ],
  {
    error: 'expected "none", "auto", "required" or {"type":"function","function":{"name":…}}',
  },
);

/** Every request field (docs/contract.md, "Request fields: chat completions"): its check, fate, proto field and why. */
export const CHAT_FIELDS = {
  messages: implemented(z.array(message).min(1, { error: "at least one message is required" }), {
    doc: DOCS && {
      proto: "Chat.messages",
      limits:
        "at least one; content parts `text` and (user messages) `image_url` (a data: URL or an http(s) URL, " +
        "`detail` ignored; [images](contract.md#images))",
      why: "the conversation (to-request.ts, `toMessage`)",
    },
  }),
  ...openaiRequestFields,
  max_completion_tokens: implemented(positiveInteger().nullish(), {
    doc: DOCS && {
      proto: "GenerateRequest.max_tokens",
      absent: "`max_tokens`, else until the model stops",
      limits: "≥ 1; wins over `max_tokens`",
      why: "token limit",
    },
    write: (value, draft) => {
      draft.request.maxTokens = tokenLimit(value);
    },
  }),
  ...openaiSamplingFields,
  ...promptCacheFields,
  logprobs: implemented(z.boolean().nullish(), {
    doc: DOCS && {
      proto: "GenerateRequest.logprobs",
      absent: "false",
      why: "per-token logprobs",
    },
    write: (value, draft) => {
      draft.request.logprobs = value;
    },
  }),
  top_logprobs: topLogprobsField,
  response_format: responseFormatRow,
  tools: implemented(z.array(tool).nullish(), {
    doc: DOCS && {
      proto: "Chat.tools",
      absent: "none",
      limits: "function tools; names `^[a-zA-Z0-9_-]{1,64}$`, once each",
      why: "function tools (to-request.ts)",
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
      why: "one call or several",
    },
    write: (value, draft) => {
      draft.chat.parallelToolCalls = value;
    },
  }),
  reasoning_effort: implemented(hint(["none", "minimal", "low", "medium", "high", "xhigh"]), {
    doc: DOCS && {
      proto: "Chat.reasoning_budget",
      absent: "no limit",
      limits: "`none` … `xhigh`; another value as absent",
      why: 'reasoning budget ("Reasoning effort")',
    },
    write: (value, draft) => {
      const budget = effortBudget(value);
      if (budget !== undefined) draft.chat.reasoningBudget = budget;
    },
  }),
  chat_template_kwargs: implemented(z.record(z.string(), z.unknown()).nullish(), {
    doc: DOCS && {
      proto: "Chat.template_variables",
      absent: "none",
      why:
        "extra variables for the model's chat template (an object; llama-server's and vLLM's field): " +
        '`{"enable_thinking": false}` renders with the template\'s thinking switch off, as a reasoning budget of 0 ' +
        "does; " +
        "other names reach a Jinja template as they are; the names the server sets " +
        "(`messages`, `tools`, `add_generation_prompt`, `bos_token`, `eos_token`) are a 400",
    },
    write: (value, draft) => {
      draft.chat.templateVariables = JSON.stringify(value);
    },
  }),
  audio: refused(
    DOCS && { why: "no audio output", sample: { voice: "alloy", format: "wav" } },
    "audio output is not supported: this server generates text",
  ),
  modalities: refused(
    DOCS && { why: 'only `["text"]` is accepted', sample: ["text", "audio"] },
    z
      .array(z.string())
      .nullish()
      .refine((m) => m == null || m.every((kind) => kind === "text"), {
        error: "only the 'text' modality is supported",
      }),
  ),
  web_search_options: refused(
    DOCS && { why: "no web search", sample: {} },
    "web search is not supported: this server runs no search",
  ),
  // The legacy spelling of tools and tool_choice (refused by the checks below, with both named).
  function_call: refused(
    DOCS && {
      why: "legacy functions: clients read `function_call` back, which is not sent; use `tools`",
      sample: "auto",
    },
    z.unknown().optional(),
  ),
  functions: refused(DOCS && { why: "as `function_call`", sample: [{ name: "f" }] }, z.unknown().optional()),
  // A hint: replies are not shortened or lengthened on request, whatever it says.
  verbosity: ignored(
    DOCS && { why: 'a hint: replies are not shortened or lengthened on request ("Hints never refuse")', sample: "low" },
    z.string().nullish(),
  ),
  metadata: ignored(DOCS && { why: "labels for stored completions; nothing is stored", sample: { k: "v" } }),
  moderation: ignored(
    DOCS && {
      why: "no moderation runs here; the answer is the model's either way",
      sample: { model: "omni-moderation-latest" },
    },
  ),
  prediction: ignored(
    DOCS && { why: "predicted output only speeds generation up", sample: { type: "content", content: "x" } },
  ),
  prompt_cache_options: ignored(DOCS && { why: "prompt caching is automatic (longest shared prefix)", sample: {} }),
  safety_identifier: ignored(DOCS && { why: "abuse monitoring label", sample: "u" }),
  service_tier: ignored(DOCS && { why: "one tier", sample: "auto" }),
  store: ignored(DOCS && { why: "chat completions are not stored", sample: true }),
  user: ignored(DOCS && { why: "end-user label", sample: "u" }),
};

export const chatRequestSchema = z.object(shapeOf(CHAT_FIELDS)).superRefine((body, ctx) => {
  if (body.top_logprobs != null && body.top_logprobs > 0 && body.logprobs !== true) {
    ctx.addIssue({ code: "custom", path: ["top_logprobs"], message: "requires logprobs to be true" });
  }
  if (body.tools != null && body.functions != null) {
    ctx.addIssue({
      code: "custom",
      path: ["functions"],
      message: `send tools or the legacy functions, not both (${LEGACY_FUNCTIONS})`,
    });
  } else if (body.functions != null) {
    ctx.addIssue({ code: "custom", path: ["functions"], message: LEGACY_FUNCTIONS });
  }
  if (body.function_call != null) ctx.addIssue({ code: "custom", path: ["function_call"], message: LEGACY_FUNCTIONS });
  const names = chatTools(body).map((t) => t.name);
  report(
    ctx,
    duplicateNames(names, (i) => ["tools", i, "function", "name"]),
  );
  const choice = chatToolChoice(body);
  if (typeof choice === "object") report(ctx, unknownChoice(choice.name, names, ["tool_choice"]));
  if (choice === "required" && names.length === 0) {
    ctx.addIssue({ code: "custom", path: ["tool_choice"], message: '"required" needs at least one tool' });
  }
  const ledger = new CallLedger();
  body.messages.forEach((m, i) => {
    for (const call of m.tool_calls ?? []) ledger.call(call.id);
    if (m.role === "tool" && m.tool_call_id != null) ledger.result(m.tool_call_id, ["messages", i, "tool_call_id"]);
  });
  report(ctx, ledger.issues);
});

export type ChatRequest = z.output<typeof chatRequestSchema>;

export interface ChatTool {
  readonly name: string;
  readonly description: string;
  readonly parameters: Record<string, unknown> | undefined;
}

/** The tools a request offers. */
export function chatTools(body: Pick<ChatRequest, "tools">): ChatTool[] {
  const definitions = body.tools?.map((t) => t.function) ?? [];
  return definitions.map((f) => ({
    name: f.name,
    description: f.description ?? "",
    parameters: f.parameters ?? undefined,
  }));
}

/** The tool choice: a mode or a named function. */
export function chatToolChoice(
  body: Pick<ChatRequest, "tool_choice">,
): "none" | "auto" | "required" | { name: string } | undefined {
  const choice = body.tool_choice ?? undefined;
  if (choice === undefined || typeof choice === "string") return choice;
  return { name: choice.function.name };
}
