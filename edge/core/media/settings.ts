// What the media layer may do (MEDIA_* settings, docs/configuration.md) and where it finds uploaded files.

/** The largest image accepted, decoded, by default: 20 MiB. */
export const DEFAULT_MEDIA_MAX_BYTES = 20 * 1024 * 1024;
/** How long fetching one image by URL may take by default, redirects and body included. */
export const DEFAULT_MEDIA_FETCH_TIMEOUT_MS = 10_000;
/** The most media parts one request may hold (as the sidecar's ChatMessage.parts allows). */
export const MAX_MEDIA_PARTS = 16;
/** Redirects followed when fetching an image, each checked as the first address is. */
export const MAX_MEDIA_REDIRECTS = 5;

/** An uploaded file's bytes and purpose (the Files API's), for a `file_id`. */
export interface MediaFile {
  readonly purpose: string;
  readonly bytes: Uint8Array;
}

/** The caller's file `id`, or undefined when the caller has none of that id. */
export type MediaFiles = (owner: string, id: string) => Promise<MediaFile | undefined>;

export interface MediaSettings {
  /** `MEDIA_MAX_BYTES`: the largest image, decoded. */
  readonly maxBytes: number;
  /** `MEDIA_FETCH`: whether http(s) image URLs are fetched. */
  readonly fetch: boolean;
  /** `MEDIA_FETCH_TIMEOUT_MS`: one image's fetch, redirects and body included. */
  readonly fetchTimeoutMs: number;
  /** `MEDIA_ALLOW_HOSTS`: hosts fetched even where their address is private or loopback (lower case). */
  readonly allowHosts: readonly string[];
  /** The Files API's files, where the app has them (a store and a host file store). */
  files?: MediaFiles | undefined;
}

/** The settings of an app that names none. */
export function defaultMediaSettings(): MediaSettings {
  return {
    maxBytes: DEFAULT_MEDIA_MAX_BYTES,
    fetch: true,
    fetchTimeoutMs: DEFAULT_MEDIA_FETCH_TIMEOUT_MS,
    allowHosts: [],
  };
}
