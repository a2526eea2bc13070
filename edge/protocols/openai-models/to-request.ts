// Load and unload bodies → the sidecar's LoadModelRequest / UnloadModelRequest.
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { LoadModelRequestSchema, UnloadModelRequestSchema } from "../../../proto/gen/inference/v1/inference_pb.js";
import { keepAliveInit } from "../../fields/keep-alive.js";
import type { LoadModelBody, UnloadModelBody } from "./schema.js";

export function toLoadModelRequest(body: LoadModelBody): MessageInitShape<typeof LoadModelRequestSchema> {
  return { model: body.model, ...keepAliveInit(body) };
}

export function toUnloadModelRequest(body: UnloadModelBody): MessageInitShape<typeof UnloadModelRequestSchema> {
  return { model: body.model };
}
