// An embeddings body → the sidecar's EmbedRequest (proto: one EmbedInput per text or token list).
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { EmbedRequestSchema } from "../../../proto/gen/inference/v1/inference_pb.js";
import { keepAliveInit } from "../../fields/keep-alive.js";
import type { EmbeddingsRequestBody } from "./schema.js";

type EmbedInit = MessageInitShape<typeof EmbedRequestSchema>;

/** The body's inputs in order: a single string or token list is one input. */
function inputsOf(input: EmbeddingsRequestBody["input"]): (string | number[])[] {
  if (typeof input === "string") return [input];
  const [first] = input;
  return typeof first === "number" ? [input as number[]] : (input as (string | number[])[]);
}

export function toEmbedRequest(body: EmbeddingsRequestBody): EmbedInit {
  return {
    model: body.model ?? "",
    dimensions: body.dimensions ?? 0,
    ...keepAliveInit(body),
    inputs: inputsOf(body.input).map((input) =>
      typeof input === "string"
        ? { input: { case: "text", value: input } }
        : { input: { case: "tokens", value: { ids: input } } },
    ),
  };
}
