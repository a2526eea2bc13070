// The embeddings answer (OpenAI's list shape). `encoding_format: "base64"` is each vector's
// float32 values, little-endian, in base64 — what the official SDKs ask for by default and decode.
import type { EmbedResponse } from "../../../proto/gen/inference/v1/inference_pb.js";

export interface EmbeddingsAnswer {
  readonly object: "list";
  readonly data: { readonly object: "embedding"; readonly index: number; readonly embedding: number[] | string }[];
  readonly model: string;
  readonly usage: { readonly prompt_tokens: number; readonly total_tokens: number };
}

/** float32 little-endian bytes of the values, in base64. */
export function float32Base64(values: readonly number[]): string {
  const bytes = new Uint8Array(values.length * 4);
  const view = new DataView(bytes.buffer);
  values.forEach((v, i) => {
    view.setFloat32(i * 4, v, true);
  });
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

export function embeddingsAnswer(response: EmbedResponse, model: string, format: "float" | "base64"): EmbeddingsAnswer {
  return {
    object: "list",
    data: response.embeddings.map((e, index) => ({
      object: "embedding",
      index,
      embedding: format === "base64" ? float32Base64(e.values) : e.values,
    })),
    model,
    usage: { prompt_tokens: response.promptTokens, total_tokens: response.promptTokens },
  };
}
