// POST /tokenize and /detokenize bodies, in the two shapes clients already send: llama.cpp's server
// (`content`, `add_special` — default false —, `parse_special` — default true —, `with_pieces`) and vLLM's (`prompt`
// or chat
// `messages`, `add_special_tokens` — default true —, `model`). Which one a body is decides the
// answer's shape (encoder.ts).
import * as z from "zod";
import { UINT32_MAX } from "../../fields/checks.js";

const chatMessage = z.object({ role: z.enum(["system", "developer", "user", "assistant"]), content: z.string() });

export const tokenizeRequestSchema = z
  .object({
    model: z.string().nullish(),
    content: z.string().nullish(),
    add_special: z.boolean().nullish(),
    parse_special: z.boolean().nullish(),
    with_pieces: z.boolean().nullish(),
    prompt: z.string().nullish(),
    messages: z.array(chatMessage).min(1).nullish(),
    add_special_tokens: z.boolean().nullish(),
  })
  .refine((body) => [body.content, body.prompt, body.messages].filter((v) => v != null).length === 1, {
    error: "send one of 'content' (llama.cpp's form), 'prompt' or 'messages' (vLLM's form)",
  });
export type TokenizeRequestBody = z.output<typeof tokenizeRequestSchema>;

export const detokenizeRequestSchema = z.object({
  model: z.string().nullish(),
  tokens: z.array(z.number().int().min(0).max(UINT32_MAX)),
});
export type DetokenizeRequestBody = z.output<typeof detokenizeRequestSchema>;
