// The media of a request's chat resolved for its caller (their files, their request's cancellation), and a
// sidecar refusal named in the request's own terms: what every route that sends a chat calls.
import type { Chat, GenerateRequest } from "../../../proto/gen/inference/v1/inference_pb.js";
import { callerOf } from "../../access/caller.js";
import type { ApiError } from "../../base/errors.js";
import type { AppContext } from "../context.js";
import { namingParts, resolveMedia } from "./resolve.js";

/** The chat a GenerateRequest holds, if it holds one. */
export function chatOf(request: GenerateRequest): Chat | undefined {
  return request.input.case === "chat" ? request.input.value : undefined;
}

/** Resolves the chat's images for the caller of `request` (resolve.ts). */
export async function resolveChatMedia(chat: Chat | undefined, context: AppContext, request: Request): Promise<void> {
  if (chat === undefined || chat.messages.every((m) => m.parts.length === 0)) return;
  await resolveMedia(chat, context.media, { owner: callerOf(request).keyId, signal: request.signal });
}

/** A sidecar refusal of `chat` naming its parts as the protocol does (resolve.ts, `namingParts`). */
export function refusalOf(error: ApiError, chat: Chat | undefined): ApiError {
  return namingParts(error, chat);
}
