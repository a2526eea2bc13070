// POST /v1/embeddings bodies (OpenAI's shape): `input` is a string, an array of strings, an array
// of token ids, or an array of such arrays; at most 2,048 inputs, none empty.
import * as z from "zod";
import { UINT32_MAX } from "../../fields/checks.js";
import { keepAliveField } from "../../fields/keep-alive.js";

/** Inputs one request may hold, as OpenAI's API allows. */
export const MAX_EMBEDDING_INPUTS = 2048;

const tokenId = z.number().int().min(0).max(UINT32_MAX);
const text = z.string().min(1, { error: "an input must not be empty" });
const tokens = z.array(tokenId).min(1, { error: "an input must not be empty" });

export const embeddingsRequestSchema = z.object({
  model: z.string().nullish(),
  input: z.union([
    text,
    z.array(text).min(1, { error: "input must not be empty" }).max(MAX_EMBEDDING_INPUTS),
    tokens,
    z.array(tokens).min(1, { error: "input must not be empty" }).max(MAX_EMBEDDING_INPUTS),
  ]),
  encoding_format: z.enum(["float", "base64"]).nullish(),
  dimensions: z.number().int().min(1).max(UINT32_MAX).nullish(),
  user: z.string().nullish(),
  keep_alive: keepAliveField(),
});
export type EmbeddingsRequestBody = z.output<typeof embeddingsRequestSchema>;
