// A chat message's `parts` (proto ContentPart): text and media in order. A message of text parts alone reads as
// one text; media needs the model's projector (`--mmproj`), so on a model without one it is refused naming the part.
import { create } from "@bufbuild/protobuf";
import { type Chat, ChatSchema } from "../../../proto/gen/inference/v1/inference_pb.js";
import { invalidArgument } from "../engine-errors.js";

/** The most media parts one request may hold (proto: ChatMessage.parts). */
export const MAX_MEDIA_PARTS = 16;

/** Where a media part sits, for messages that name it. */
export function partName(message: number, part: number): string {
  return `messages[${message}].parts[${part}]`;
}

/**
 * `chat` with every message's text parts as its content; INVALID_ARGUMENT for a message with both, or for media on
 * a model that reads text only (`model`).
 */
export function textOnlyChat(chat: Chat, model: string): Chat {
  if (chat.messages.every((m) => m.parts.length === 0)) return chat;
  const messages = chat.messages.map((message, i) => {
    if (message.parts.length === 0) return message;
    if (message.content !== "") throw invalidArgument(`messages[${i}] has both content and parts: send one of them`);
    const media = message.parts.findIndex((p) => p.part.case === "media");
    if (media >= 0)
      throw invalidArgument(
        `model "${model}" reads text only: ${partName(i, media)} is media (serve a multimodal model with its ` +
          "projector, --mmproj)",
      );
    const content = message.parts.map((p) => (p.part.case === "text" ? p.part.value : "")).join("");
    return { ...message, content, parts: [] };
  });
  return create(ChatSchema, { ...chat, messages });
}
