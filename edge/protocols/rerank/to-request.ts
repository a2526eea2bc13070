// A rerank body → the sidecar's RankRequest (the documents' texts, in order).
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { RankRequestSchema } from "../../../proto/gen/inference/v1/inference_pb.js";
import { keepAliveInit } from "../../fields/keep-alive.js";
import type { RerankRequestBody } from "./schema.js";

type RankInit = MessageInitShape<typeof RankRequestSchema>;

/** Each document's text: a string as is, an object's `text`. */
export function documentTexts(body: RerankRequestBody): string[] {
  return body.documents.map((d) => (typeof d === "string" ? d : d.text));
}

export function toRankRequest(body: RerankRequestBody): RankInit {
  return { model: body.model ?? "", query: body.query, documents: documentTexts(body), ...keepAliveInit(body) };
}
