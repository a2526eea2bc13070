// An image fetched by URL for a request: http(s) only, every address (the first and each redirect's) checked
// by host-guard.ts unless MEDIA_ALLOW_HOSTS names it, redirects followed by hand (at most MAX_MEDIA_REDIRECTS),
// the size checked from content-length and again while reading, the whole within MEDIA_FETCH_TIMEOUT_MS.
// Failures are MediaRefusals (the caller names the part).
import { readCapped } from "../body.js";
import { bareHost, blockedHost } from "./host-guard.js";
import { MAX_MEDIA_REDIRECTS, type MediaSettings } from "./settings.js";

/** Why an image could not be had; the caller turns it into a 400 naming the part. */
export class MediaRefusal extends Error {
  override readonly name: string = "MediaRefusal";
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
}

export interface FetchedImage {
  readonly bytes: Uint8Array;
  /** The answer's content-type when it names an image, else "". */
  readonly mimeType: string;
}

/** The URL, checked: http(s) and a host the edge may reach. */
function checkedUrl(text: string, settings: MediaSettings): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new MediaRefusal("is not a URL", "invalid_image_url");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new MediaRefusal(
      `'${url.protocol}' URLs are not fetched: send a data: URL or an http(s) URL`,
      "invalid_image_url",
    );
  if (settings.allowHosts.includes(bareHost(url.hostname))) return url;
  const blocked = blockedHost(url.hostname);
  if (blocked !== undefined)
    throw new MediaRefusal(
      `the image's host is ${blocked}, which this server does not fetch from (MEDIA_ALLOW_HOSTS lists hosts it may)`,
      "image_host_refused",
    );
  return url;
}

async function readLimited(response: Response, limit: number): Promise<Uint8Array> {
  const declared = Number(response.headers.get("content-length") ?? Number.NaN);
  const tooLarge = () => new MediaRefusal(`the image is over ${limit} bytes (MEDIA_MAX_BYTES)`, "image_too_large");
  if (declared > limit) {
    await response.body?.cancel();
    throw tooLarge();
  }
  if (response.body === null) return new Uint8Array(0);
  return readCapped(response.body, limit, async (reader) => {
    await reader.cancel();
    throw tooLarge();
  });
}

/** The answer at `url` after redirects (each checked), or a MediaRefusal. */
async function follow(first: string, settings: MediaSettings, signal: AbortSignal): Promise<Response> {
  let url = checkedUrl(first, settings);
  for (let hop = 0; ; hop++) {
    const response = await fetch(url, { redirect: "manual", signal, headers: { accept: "image/*" } });
    const location = response.headers.get("location");
    if (response.status < 300 || response.status >= 400 || location === null) return response;
    await response.body?.cancel();
    if (hop === MAX_MEDIA_REDIRECTS)
      throw new MediaRefusal(`more than ${MAX_MEDIA_REDIRECTS} redirects`, "image_fetch_failed");
    url = checkedUrl(new URL(location, url).href, settings);
  }
}

/** The image at an http(s) URL, or a MediaRefusal saying why not. */
export async function fetchImage(text: string, settings: MediaSettings, signal?: AbortSignal): Promise<FetchedImage> {
  if (!settings.fetch)
    throw new MediaRefusal(
      "image URLs are not fetched by this server (MEDIA_FETCH is off): send a data: URL",
      "image_fetch_off",
    );
  const timeout = AbortSignal.timeout(settings.fetchTimeoutMs);
  const both = signal === undefined ? timeout : AbortSignal.any([timeout, signal]);
  try {
    const response = await follow(text, settings, both);
    if (!response.ok) {
      await response.body?.cancel();
      throw new MediaRefusal(`fetching the image answered HTTP ${response.status}`, "image_fetch_failed");
    }
    const type = (response.headers.get("content-type") ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
    const bytes = await readLimited(response, settings.maxBytes);
    return { bytes, mimeType: type.startsWith("image/") ? type : "" };
  } catch (error) {
    if (error instanceof MediaRefusal) throw error;
    if (timeout.aborted)
      throw new MediaRefusal(
        `fetching the image took over ${settings.fetchTimeoutMs} ms (MEDIA_FETCH_TIMEOUT_MS)`,
        "image_fetch_timeout",
      );
    if (signal?.aborted === true) throw error;
    throw new MediaRefusal("the image could not be fetched", "image_fetch_failed");
  }
}
