// POST /v1/responses request body (OpenAI Responses API), stateless. Fields this
// server does not use (user, reasoning, text, truncation, include, …) are ignored;
// `null` is accepted for optional fields; `store` is accepted but nothing is stored.
// Refused with a 400 naming the field: `previous_response_id` and `conversation`
// (stored, stateful responses come in a later version), a non-empty `tools`, input
// items other than messages (function_call, function_call_output and reasoning items
// come with tool support), content parts other than input_text / output_text.
import { z } from "zod";
import { textFormatField } from "../openai-common/response-format.js";
import { positiveInteger } from "../../fields.js";

export const RESPONSES_ROLES = ["system", "developer", "user", "assistant"] as const;
export type ResponsesRole = (typeof RESPONSES_ROLES)[number];

/** Item types that arrive with tools and reasoning (issue 4), named in the refusal. */
const LATER_ITEMS = new Set(["function_call", "function_call_output", "reasoning", "custom_tool_call", "custom_tool_call_output"]);
const TEXT_PARTS = new Set(["input_text", "output_text"]);

const contentPart = z
  .object({ type: z.string(), text: z.unknown().optional() })
  .superRefine((part, ctx) => {
    if (!TEXT_PARTS.has(part.type)) {
      ctx.addIssue({
        code: "custom",
        path: ["type"],
        message: `content parts of type '${part.type}' are not supported; only 'input_text' and 'output_text' parts are`,
      });
    } else if (typeof part.text !== "string") {
      ctx.addIssue({ code: "custom", path: ["text"], message: "expected a string" });
    }
  })
  .transform((part) => String(part.text));

const messageItem = z
  .object({
    type: z.string().nullish(),
    role: z.enum(RESPONSES_ROLES, {
      error: `expected one of ${RESPONSES_ROLES.map((r) => `'${r}'`).join(", ")}`,
    }),
    content: z.union([z.string(), z.array(contentPart)]),
  })
  .superRefine((item, ctx) => {
    if (item.type == null || item.type === "message") return;
    const later = LATER_ITEMS.has(item.type) ? " (tool and reasoning items come with tool support)" : "";
    const stored = item.type === "item_reference" ? " (stored items are not supported: this server stores nothing)" : "";
    ctx.addIssue({
      code: "custom",
      path: ["type"],
      message: `input items of type '${item.type}' are not supported; only messages are${later}${stored}`,
    });
  });

export type ResponsesMessageItem = z.output<typeof messageItem>;

const NOT_STORED =
  "not supported yet: this server stores no responses (the stored, stateful side of the Responses API comes in a later version); send the whole conversation in 'input'";

export const responsesRequestSchema = z.object({
  model: z.string().nullish(),
  input: z.union([z.string(), z.array(messageItem).min(1, { error: "at least one input item is required" })]),
  instructions: z.string().nullish(),
  max_output_tokens: positiveInteger().nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().gt(0).max(1).nullish(),
  stream: z.boolean().nullish(),
  metadata: z.record(z.string(), z.string()).nullish(),
  // Accepted; nothing is stored either way (responses say `"store": false`).
  store: z.boolean().nullish(),
  previous_response_id: z
    .string()
    .nullish()
    .refine((id) => id == null, { error: NOT_STORED }),
  conversation: z
    .unknown()
    .optional()
    .refine((value) => value == null, { error: NOT_STORED }),
  text: z.object({ format: textFormatField }).nullish(),
  tools: z
    .array(z.unknown())
    .nullish()
    .refine((tools) => tools == null || tools.length === 0, {
      error: "not supported yet (tools come with the next version); send no tools or an empty list",
    }),
});

export type ResponsesRequest = z.output<typeof responsesRequestSchema>;
