// POST /v1/chat/completions request body. Fields this server does not use (user,
// metadata, store, tools, …) are ignored, so stock OpenAI clients work unchanged.
import { z } from "zod";
import { integer, positiveInteger } from "../../fields.js";
import { commonFields } from "../openai-common/fields.js";
import { responseFormatField } from "../openai-common/response-format.js";

export const CHAT_ROLES = ["system", "developer", "user", "assistant"] as const;
export type ChatRole = (typeof CHAT_ROLES)[number];

const textPart = z.object({
  type: z.literal("text", { error: 'only text content parts ({"type":"text","text":…}) are supported' }),
  text: z.string(),
});

const message = z
  .object({
    role: z.enum(CHAT_ROLES, {
      error: `expected one of ${CHAT_ROLES.map((r) => `'${r}'`).join(", ")}`,
    }),
    // null is how clients send an assistant turn that only called tools.
    content: z.union([z.string(), z.array(textPart)]).nullish(),
  })
  .superRefine((m, ctx) => {
    if (m.role !== "assistant" && m.content == null) {
      ctx.addIssue({ code: "custom", path: ["content"], message: `a ${m.role} message needs content` });
    }
  });

export const chatRequestSchema = z
  .object({
    ...commonFields,
    messages: z.array(message).min(1, { error: "at least one message is required" }),
    max_completion_tokens: positiveInteger().nullish(),
    logprobs: z.boolean().nullish(),
    top_logprobs: integer().min(0).max(20).nullish(),
    response_format: responseFormatField,
  })
  .superRefine((body, ctx) => {
    if (body.top_logprobs != null && body.top_logprobs > 0 && body.logprobs !== true) {
      ctx.addIssue({ code: "custom", path: ["top_logprobs"], message: "requires logprobs to be true" });
    }
  });

export type ChatRequest = z.output<typeof chatRequestSchema>;
