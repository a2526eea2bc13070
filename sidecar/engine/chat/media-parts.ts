// A chat message's `parts` (proto ContentPart): text and media in order. A message's parts read as one text, each
// medium a marker that media-prompt.ts replaces with the medium's tokens; media needs the model's projector
// (`--mmproj`), so on a model without one it is refused naming the part.
import { create } from "@bufbuild/protobuf";
import { type Chat, ChatSchema } from "../../../proto/gen/inference/v1/inference_pb.js";
import { invalidArgument } from "../engine-errors.js";
import { TEXT_ONLY } from "../llama/projector.js";

/** The most media parts one request may hold (proto: ChatMessage.parts). */
export const MAX_MEDIA_PARTS = 16;

/** Where a media part sits, for messages that name it. */
export function partName(message: number, part: number): string {
  return `messages[${message}].parts[${part}]`;
}

/**
 * `chat` with every message's parts as its content: text as it is, each medium as `marker` (none given: media is
 * refused on this model, `refusal` saying why); INVALID_ARGUMENT for a message with both content and parts.
 */
export function chatOfParts(chat: Chat, model: string, media?: { readonly marker: string }, refusal = TEXT_ONLY): Chat {
  if (chat.messages.every((m) => m.parts.length === 0)) return chat;
  const messages = chat.messages.map((message, i) => {
    if (message.parts.length === 0) return message;
    if (message.content !== "") throw invalidArgument(`messages[${i}] has both content and parts: send one of them`);
    const found = message.parts.findIndex((p) => p.part.case === "media");
    if (found >= 0 && media === undefined)
      throw invalidArgument(`model "${model}" ${refusal}: ${partName(i, found)} is media`);
    const content = message.parts.map((p) => (p.part.case === "text" ? p.part.value : (media?.marker ?? ""))).join("");
    return { ...message, content, parts: [] };
  });
  return create(ChatSchema, { ...chat, messages });
}
