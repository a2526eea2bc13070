// A (query, document) pair as a reranker's input tokens, built as llama.cpp's server builds it, so a
// model scores here as it does under llama-server: with the model's rerank template
// (`tokenizer.chat_template.rerank`) the whole prompt with `{query}` and `{document}` filled in,
// tokenized at once with its special tokens and nothing added; without one, the query and the
// document between the BOS, EOS and SEP tokens the vocabulary asks for (docs/decisions.md,
// "Rerank input as llama-server builds it").
import type { LlamaModel, Token } from "node-llama-cpp";

/** The model's rerank template, if its file has one. */
export function rerankTemplate(model: LlamaModel): string | undefined {
  const template = (model.fileInfo.metadata.tokenizer as Record<string, unknown> | undefined)?.["chat_template.rerank"];
  return typeof template === "string" && template !== "" ? template : undefined;
}

/** Whether the vocabulary asks for a SEP token between the two texts (`tokenizer.ggml.add_sep_token`). */
function addsSep(model: LlamaModel): boolean {
  const ggml = (model.fileInfo.metadata.tokenizer as { ggml?: Record<string, unknown> } | undefined)?.ggml;
  return ggml?.["add_sep_token"] === true;
}

export function rankInput(model: LlamaModel, query: string, document: string): Token[] {
  const template = rerankTemplate(model);
  if (template !== undefined) {
    return model.tokenize(template.replaceAll("{query}", query).replaceAll("{document}", document), true);
  }
  const { bos, eos, sep } = model.tokens;
  const end = eos ?? sep;
  const addBos = model.tokens.shouldPrependBosToken && bos !== null;
  const addEos = model.tokens.shouldAppendEosToken && end !== null;
  return [
    ...(addBos ? [bos] : []),
    ...model.tokenize(query, false),
    ...(addEos ? [end] : []),
    ...(addsSep(model) && sep !== null ? [sep] : []),
    ...model.tokenize(document, false),
    ...(addEos ? [end] : []),
  ];
}
