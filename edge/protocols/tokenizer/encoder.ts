// The answers of /tokenize and /detokenize: llama.cpp's server shape for a `content` body
// (`{tokens}`, or `{tokens: [{id, piece}]}` with `with_pieces`: the piece as text when its bytes
// are whole UTF-8, else as the list of bytes), vLLM's for a `prompt` / `messages` body
// (`{count, max_model_len, tokens}`). /detokenize answers both at once: `{content, prompt}`.
import type { TokenizeResponse } from "../../../proto/gen/inference/v1/inference_pb.js";
import type { TokenizeRequestBody } from "./schema.js";

const strict = new TextDecoder("utf-8", { fatal: true });

function piece(bytes: Uint8Array): string | number[] {
  try {
    return strict.decode(bytes);
  } catch {
    return [...bytes];
  }
}

export function tokenizeAnswer(body: TokenizeRequestBody, response: TokenizeResponse, contextSize: number): unknown {
  if (body.content != null) {
    if (body.with_pieces !== true) return { tokens: response.tokens };
    return { tokens: response.tokens.map((id, i) => ({ id, piece: piece(response.pieces[i] ?? new Uint8Array()) })) };
  }
  return { count: response.tokens.length, max_model_len: contextSize, tokens: response.tokens };
}

export function detokenizeAnswer(text: string): unknown {
  return { content: text, prompt: text };
}
