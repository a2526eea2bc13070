// The MEDIA_* settings (settings.ts) as the app's media options (edge/core/media/), for both hosts.

export interface MediaConfig {
  readonly mediaMaxBytes: number;
  readonly mediaFetch: boolean;
  readonly mediaFetchTimeoutMs: number;
  readonly mediaAllowHosts?: string | undefined;
}

export interface MediaOptions {
  readonly maxBytes: number;
  readonly fetch: boolean;
  readonly fetchTimeoutMs: number;
  /** Lower case, IPv6 addresses without brackets. */
  readonly allowHosts: readonly string[];
}

/** The media options of parsed settings. */
export function mediaOptionsOf(config: MediaConfig): MediaOptions {
  const allowHosts = (config.mediaAllowHosts ?? "")
    .split(",")
    .map((host) =>
      host
        .trim()
        .replace(/^\[|\]$/g, "")
        .toLowerCase(),
    )
    .filter((host) => host !== "");
  return {
    maxBytes: config.mediaMaxBytes,
    fetch: config.mediaFetch,
    fetchTimeoutMs: config.mediaFetchTimeoutMs,
    allowHosts,
  };
}
