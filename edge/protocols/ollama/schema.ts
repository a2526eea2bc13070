// POST /api/chat and POST /api/generate bodies (Ollama's shapes), one field table each
// (edge/fields/field-table.ts; docs/contract.md, "Ollama"): every field mapped, ignored or refused by
// name; the sampling is the `options` table (options.ts). Fields this server does not know are
// ignored, as Ollama ignores them; `stream` is true unless sent false, as Ollama's is.
import * as z from "zod";
import { DOCS } from "../../fields/docs-text.js";
import { implemented, refused, shapeOf } from "../../fields/field-table.js";
import { keepAliveRow, topLogprobsField } from "../../fields/sampling-fields.js";
import { effortBudget } from "../../fields/reasoning-effort.js";
import { duplicateNames, report, schemaObject, toolName } from "../../fields/tool-checks.js";
import { ollamaModelName } from "./names.js";
import { optionsSchema } from "./options.js";
import { returnProgressRow } from "../../fields/progress.js";

/** Base64 images (Ollama's `images`), read by a model with a projector (core/media/). */
const images = z.array(z.string({ error: "expected base64 image data" })).nullish();
const NO_IMAGES_OUT = "image generation is not served: this server generates text";
const TEMPLATE = "a request's own template is not served: the model's chat template is used";

/** Set only when it holds something: `[]` and null are fine. */
const emptyOr = (why: string) =>
  z
    .unknown()
    .optional()
    .refine((v) => v == null || v === "" || (Array.isArray(v) && v.length === 0), { error: why });

const toolCall = z.object({
  id: z.string().nullish(),
  function: z.object({
    index: z.number().nullish(),
    name: toolName(),
    // An object, as Ollama sends it; JSON text is taken as it is.
    arguments: z.union([z.record(z.string(), z.unknown()), z.string()]).nullish(),
  }),
});

export const OLLAMA_ROLES = ["system", "user", "assistant", "tool"] as const;

const message = z.object({
  // Ollama reads a role in any case.
  role: z
    .string()
    .transform((role) => role.toLowerCase())
    .pipe(z.enum(OLLAMA_ROLES, { error: `expected one of ${OLLAMA_ROLES.map((r) => `'${r}'`).join(", ")}` })),
  content: z.string().nullish(),
  thinking: z.string().nullish(),
  images,
  tool_calls: z.array(toolCall).nullish(),
  tool_name: z.string().nullish(),
  tool_call_id: z.string().nullish(),
});

const tool = z.object({
  type: z.literal("function", { error: 'only "function" tools are supported' }).optional(),
  function: z.object({
    name: toolName(),
    description: z.string().nullish(),
    parameters: schemaObject().nullish(),
  }),
});

/** `format`: "json", a JSON schema, or "" (none). */
const format = z.union([z.literal("json"), z.literal(""), schemaObject()], {
  error: 'expected "json" or a JSON schema object',
});

const modelRow = implemented(z.string({ error: "expected a model name" }).min(1, { error: "a model is required" }), {
  doc: DOCS && {
    proto: "GenerateRequest.model",
    limits: "an id or alias; `name:latest` is `name`",
    why: "the model (an unknown one is a 404)",
  },
  write: (value, draft) => {
    draft.request.model = ollamaModelName(value);
  },
});

/** The rows /api/chat and /api/generate share. */
const sharedRows = {
  stream: implemented(z.boolean().nullish(), {
    doc: DOCS && { proto: "(the answer's form)", absent: "true: NDJSON lines", why: "one JSON answer when false" },
  }),
  format: implemented(format.nullish(), {
    doc: DOCS && { proto: "GenerateRequest.constraint", absent: "free text", why: "JSON object or schema, by grammar" },
    write: (value, draft) => {
      if (value === "json") draft.request.constraint = { kind: { case: "jsonObject", value: true } };
      else if (typeof value === "object") {
        draft.request.constraint = { kind: { case: "jsonSchema", value: JSON.stringify(value) } };
      }
    },
  }),
  think: implemented(z.union([z.boolean(), z.enum(["low", "medium", "high"])]).nullish(), {
    doc: DOCS && {
      proto: "Chat.reasoning_budget",
      absent: "no limit",
      limits: 'true, false (no reasoning), "low", "medium", "high" ("Reasoning effort")',
      why: "reasoning, answered in `thinking`",
    },
    write: (value, draft) => {
      const budget = value === false ? 0 : value === true ? undefined : effortBudget(value);
      if (budget !== undefined) draft.chat.reasoningBudget = budget;
    },
  }),
  options: implemented(optionsSchema.nullish(), {
    doc: DOCS && { proto: "(the options table)", absent: "the sidecar's sampling", why: "sampling and limits" },
  }),
  keep_alive: keepAliveRow,
  truncate: refused(
    DOCS && { why: "a prompt over the context is a 400, never cut (false is accepted)", sample: true },
    z
      .boolean()
      .nullish()
      .refine((v) => v !== true, { error: "prompts are never truncated here: a prompt over the context is refused" }),
  ),
  shift: refused(
    DOCS && { why: "the context is never shifted: a full context ends the reply (false is accepted)", sample: true },
    z
      .boolean()
      .nullish()
      .refine((v) => v !== true, { error: "the context is never shifted here: a full context ends the reply" }),
  ),
  logprobs: implemented(z.boolean().nullish(), {
    doc: DOCS && { proto: "GenerateRequest.logprobs", absent: "false", why: "each token's `logprobs` entry" },
    write: (value, draft) => {
      draft.request.logprobs = value;
    },
  }),
  top_logprobs: topLogprobsField,
  _debug_render_only: refused(DOCS && { why: "no debug rendering", sample: true }, emptyOr("no debug rendering")),
  return_progress: returnProgressRow(
    "lines with empty content and llama-server's `prompt_progress` while the prompt is evaluated",
    "streams only (ignored with `stream: false`)",
  ),
};

export const OLLAMA_CHAT_FIELDS = {
  model: modelRow,
  messages: implemented(z.array(message).nullish(), {
    doc: DOCS && {
      proto: "Chat.messages",
      absent: "none: the model is loaded (or with `keep_alive: 0` unloaded)",
      limits: "a message's `images`: base64, before its text ([images](contract.md#images))",
      why: "the conversation (to-request.ts)",
    },
  }),
  tools: implemented(z.array(tool).nullish(), {
    doc: DOCS && { proto: "Chat.tools", absent: "none", why: "function tools (to-request.ts)" },
  }),
  ...sharedRows,
};

export const OLLAMA_GENERATE_FIELDS = {
  model: modelRow,
  prompt: implemented(z.string().nullish(), {
    doc: DOCS && {
      proto: "GenerateRequest.prompt, or a user message",
      absent: "the model is loaded (or with `keep_alive: 0` unloaded)",
      why: "the prompt; rendered by the chat template unless `raw`",
    },
  }),
  system: implemented(z.string().nullish(), {
    doc: DOCS && { proto: "Chat.messages", absent: "none", why: "a system message before the prompt" },
  }),
  raw: implemented(z.boolean().nullish(), {
    doc: DOCS && { proto: "GenerateRequest.prompt", absent: "false", why: "the prompt as it is, no template" },
  }),
  // Fill-in-the-middle: the reply goes between `prompt` and `suffix` (to-request.ts); empty is none.
  suffix: implemented(z.string().nullish(), {
    doc: DOCS && {
      proto: "GenerateRequest.infill (`prompt` its prefix)",
      absent: "a plain generation of `prompt`",
      limits: "a model with fill-in-the-middle tokens (`insert` in its capabilities; else 400 naming `suffix`)",
      why: "fill-in-the-middle, as Continue's Ollama provider asks for it; `system` and `raw` do not apply",
    },
  }),
  template: refused(DOCS && { why: "the model's own template is used", sample: "{{ .Prompt }}" }, emptyOr(TEMPLATE)),
  context: refused(
    DOCS && { why: "no context tokens are returned or taken: send the conversation to /api/chat", sample: [1, 2] },
    emptyOr("context tokens are not served: send the conversation to /api/chat"),
  ),
  images: implemented(images, {
    doc: DOCS && {
      proto: "ChatMessage.parts (media)",
      absent: "none",
      limits: "base64; not with `raw` or `suffix`",
      why: "images before the prompt, for a model with a projector ([images](contract.md#images))",
    },
  }),
  width: refused(DOCS && { why: "no image generation", sample: 512 }, emptyOr(NO_IMAGES_OUT)),
  height: refused(DOCS && { why: "no image generation", sample: 512 }, emptyOr(NO_IMAGES_OUT)),
  steps: refused(DOCS && { why: "no image generation", sample: 20 }, emptyOr(NO_IMAGES_OUT)),
  ...sharedRows,
};

function checkTools(body: { tools?: z.output<typeof tool>[] | null | undefined }, ctx: z.RefinementCtx): void {
  const names = (body.tools ?? []).map((t) => t.function.name);
  report(
    ctx,
    duplicateNames(names, (i) => ["tools", i, "function", "name"]),
  );
}

export const ollamaChatSchema = z.object(shapeOf(OLLAMA_CHAT_FIELDS)).superRefine(checkTools);
export type OllamaChatBody = z.output<typeof ollamaChatSchema>;

export const ollamaGenerateSchema = z.object(shapeOf(OLLAMA_GENERATE_FIELDS));
export type OllamaGenerateBody = z.output<typeof ollamaGenerateSchema>;
