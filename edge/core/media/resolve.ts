// A chat's media parts made whole before the sidecar is called: each part's bytes from its reference
// (image-bytes.ts), all of a request's at once; at most MAX_MEDIA_PARTS. A reference that cannot be read is a
// 400 naming its field in the protocol's own terms; a sidecar refusal naming `messages[i].parts[j]` is named
// again by the protocol's path of that part (`namingParts`).
import type { ChatMessage } from "../../../proto/gen/inference/v1/inference_pb.js";
import { type ApiError, GenerationRejectedError, InvalidRequestError } from "../../base/errors.js";
import { MediaRefusal } from "./fetch-image.js";
import { imageBytes } from "./image-bytes.js";
import { imageRefOf } from "./parts.js";
import { MAX_MEDIA_PARTS, type MediaSettings } from "./settings.js";

interface HasMessages {
  readonly messages: readonly ChatMessage[];
}

/** Who asks (the Files API's owner, whose files a file_id may name) and until when. */
export interface MediaCaller {
  readonly owner: string;
  readonly signal?: AbortSignal | undefined;
}

/** Fills every media part of `chat` made by parts.ts with its image's bytes; a 400 naming the part otherwise. */
export async function resolveMedia(chat: HasMessages, settings: MediaSettings, caller: MediaCaller): Promise<void> {
  const media = chat.messages.flatMap((m) => m.parts.flatMap((p) => (p.part.case === "media" ? [p.part.value] : [])));
  const over = media[MAX_MEDIA_PARTS];
  if (over !== undefined) {
    const part = imageRefOf(over)?.part ?? "messages";
    throw new InvalidRequestError(`Invalid '${part}': a request holds at most ${MAX_MEDIA_PARTS} images.`, {
      param: part,
      code: "too_many_images",
    });
  }
  await Promise.all(
    media.map(async (item) => {
      const ref = imageRefOf(item);
      if (ref === undefined || item.data.byteLength > 0) return;
      try {
        const { bytes, mimeType } = await imageBytes(ref.source, settings, caller.owner, caller.signal);
        item.data = bytes;
        item.mimeType = mimeType;
      } catch (error) {
        if (!(error instanceof MediaRefusal)) throw error;
        throw new InvalidRequestError(`Invalid '${ref.field}': ${error.message}.`, {
          param: ref.field,
          code: error.code,
        });
      }
    }),
  );
}

const PART_NAME = /messages\[(\d+)\]\.parts\[(\d+)\]/g;

/** The sidecar's refusal with each `messages[i].parts[j]` it names written as the protocol's path of that part. */
export function namingParts(error: ApiError, chat: HasMessages | undefined): ApiError {
  if (
    chat === undefined ||
    !(error instanceof GenerationRejectedError) ||
    !/messages\[\d+\]\.parts\[\d+\]/.test(error.message)
  )
    return error;
  let param: string | null = null;
  const message = error.message.replace(PART_NAME, (name, i: string, j: string) => {
    const part = chat.messages[Number(i)]?.parts[Number(j)]?.part;
    const ref = part?.case === "media" ? imageRefOf(part.value) : undefined;
    param ??= ref?.part ?? null;
    return ref?.part ?? name;
  });
  return new GenerationRejectedError(message, { param, code: error.code, cause: error });
}
