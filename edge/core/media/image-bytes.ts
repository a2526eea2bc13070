// One image reference → its bytes: a data: URL or base64 text decoded and checked, an http(s) URL fetched
// (fetch-image.ts), a file_id read from the caller's uploaded files. Failures are MediaRefusals.
import { cleanBase64, decodeBase64, decodedSize } from "./base64.js";
import { fetchImage, MediaRefusal } from "./fetch-image.js";
import type { ImageSource } from "./parts.js";
import type { MediaSettings } from "./settings.js";

export interface ImageBytes {
  readonly bytes: Uint8Array;
  readonly mimeType: string;
}

/** Purposes a file read as an image may have (the Files API's). */
export const IMAGE_FILE_PURPOSES: readonly string[] = ["vision", "user_data", "assistants"];

const DATA_URL = /^data:([^;,]*)((?:;[^;,]*)*),/i;

function tooLarge(limit: number): MediaRefusal {
  return new MediaRefusal(`the image is over ${limit} bytes (MEDIA_MAX_BYTES)`, "image_too_large");
}

/** Base64 text → bytes within the limit. */
function fromBase64(text: string, mimeType: string, limit: number): ImageBytes {
  const clean = cleanBase64(text);
  if (clean === undefined || clean === "")
    throw new MediaRefusal("is not valid base64 image data", "invalid_image_data");
  if (decodedSize(clean.replace(/=+$/, "").length) > limit) throw tooLarge(limit);
  return { bytes: decodeBase64(clean), mimeType };
}

/** A data: URL's image: base64, of an image type (or none named). */
function fromDataUrl(url: string, limit: number): ImageBytes {
  const head = DATA_URL.exec(url.slice(0, 256));
  if (head === null) throw new MediaRefusal("is not a valid data: URL", "invalid_image_url");
  const mimeType = (head[1] ?? "").trim().toLowerCase();
  if (mimeType !== "" && !mimeType.startsWith("image/"))
    throw new MediaRefusal(`is a data: URL of '${mimeType}': only images are read`, "invalid_image_url");
  if (!(head[2] ?? "").toLowerCase().split(";").includes("base64"))
    throw new MediaRefusal("is a data: URL without ';base64': send the image base64-encoded", "invalid_image_url");
  return fromBase64(url.slice(head[0].length), mimeType, limit);
}

async function fromFile(fileId: string, settings: MediaSettings, owner: string): Promise<ImageBytes> {
  const file = settings.files === undefined ? undefined : await settings.files(owner, fileId);
  if (settings.files === undefined)
    throw new MediaRefusal(
      "files are not kept by this server (it has no file store): send the image inline",
      "file_not_found",
    );
  if (file === undefined) throw new MediaRefusal(`no such file: ${fileId}`, "file_not_found");
  if (!IMAGE_FILE_PURPOSES.includes(file.purpose))
    throw new MediaRefusal(
      `file ${fileId} has purpose '${file.purpose}': an image is uploaded with purpose 'vision' or 'user_data'`,
      "invalid_image_file",
    );
  if (file.bytes.byteLength > settings.maxBytes) throw tooLarge(settings.maxBytes);
  return { bytes: file.bytes, mimeType: "" };
}

/** The bytes of one image, or a MediaRefusal. */
export async function imageBytes(
  source: ImageSource,
  settings: MediaSettings,
  owner: string,
  signal?: AbortSignal,
): Promise<ImageBytes> {
  switch (source.kind) {
    case "base64":
      return fromBase64(source.data, source.mimeType, settings.maxBytes);
    case "file":
      return fromFile(source.fileId, settings, owner);
    case "url":
      if (/^data:/i.test(source.url)) return fromDataUrl(source.url, settings.maxBytes);
      return fetchImage(source.url, settings, signal);
  }
}
