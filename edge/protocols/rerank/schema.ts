// POST /v1/rerank and POST /rerank bodies, in the shape llama-server and Jina share: `query`,
// `documents` (strings, or objects with a `text` field as Jina also takes), `top_n`,
// `return_documents`, `model` (docs/contract.md, "Rerank").
import * as z from "zod";
import { keepAliveField } from "../../fields/keep-alive.js";

/** Documents one request may hold: as many as an embeddings request's inputs. */
export const MAX_RERANK_DOCUMENTS = 2048;

const text = z.string().min(1, { error: "a document must not be empty" });
const document = z.union([text, z.object({ text })]);

export const rerankRequestSchema = z.object({
  model: z.string().nullish(),
  query: z.string().min(1, { error: "query must not be empty" }),
  documents: z.array(document).min(1, { error: "documents must not be empty" }).max(MAX_RERANK_DOCUMENTS),
  /** The best this many, at most every document; default every document. */
  top_n: z.number().int().min(1).nullish(),
  /** Each result's `document: {text}`; default true, as Jina's API answers. */
  return_documents: z.boolean().nullish(),
  keep_alive: keepAliveField(),
});
export type RerankRequestBody = z.output<typeof rerankRequestSchema>;
