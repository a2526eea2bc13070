// A protocol's message content → the proto's ChatMessage content or parts. Each image becomes a media part
// whose bytes are empty until resolve.ts fills them; the reference it was made from and the protocol's own
// path of the part are kept beside it (a WeakMap on the Media message), for the resolving and for naming the
// part in a refusal. A message without images keeps its text in `content`, text parts joined with a newline.
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import {
  type ChatMessageSchema,
  type ContentPartSchema,
  type Media,
  MediaSchema,
} from "../../../proto/gen/inference/v1/inference_pb.js";

/** Where an image's bytes come from, as a protocol referred to them. */
export type ImageSource =
  /** A data: URL or an http(s) URL. */
  | { readonly kind: "url"; readonly url: string }
  /** Base64 text (Anthropic's base64 source, Ollama's images); `mimeType` as the client said, or "". */
  | { readonly kind: "base64"; readonly data: string; readonly mimeType: string }
  /** A file uploaded through the Files API. */
  | { readonly kind: "file"; readonly fileId: string };

/** An image in a message's content: its source, the protocol's path of the part and of the field holding it. */
export interface ImageRef {
  readonly source: ImageSource;
  /** e.g. `messages[0].content[1]`: what a refusal from the sidecar names. */
  readonly part: string;
  /** e.g. `messages[0].content[1].image_url.url`: what a refusal of the reference names. */
  readonly field: string;
}

const PENDING = new WeakMap<Media, ImageRef>();

/** The reference a media part was made from (undefined for one made elsewhere). */
export function imageRefOf(media: Media): ImageRef | undefined {
  return PENDING.get(media);
}

type PartInit = MessageInitShape<typeof ContentPartSchema>;
type ContentInit = Pick<MessageInitShape<typeof ChatMessageSchema>, "content" | "parts">;

/** A media part to be resolved (resolve.ts). */
export function imagePart(ref: ImageRef): PartInit {
  const media = create(MediaSchema, {});
  PENDING.set(media, ref);
  return { part: { case: "media", value: media } };
}

/**
 * Content in order, text and images, as a message's `content` (no image: texts joined with a newline) or its
 * `parts` (adjacent texts joined with a newline; the images where they stand).
 */
export function contentOf(items: readonly (string | ImageRef)[]): ContentInit {
  if (items.every((item) => typeof item === "string")) return { content: items.join("\n"), parts: [] };
  const parts: PartInit[] = [];
  let text: string[] = [];
  const flush = () => {
    if (text.length > 0) parts.push({ part: { case: "text", value: text.join("\n") } });
    text = [];
  };
  for (const item of items) {
    if (typeof item === "string") text.push(item);
    else {
      flush();
      parts.push(imagePart(item));
    }
  }
  flush();
  return { content: "", parts };
}
