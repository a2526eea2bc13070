// SIDECAR_URLS: parsed the same way for the Node edge and the Worker; SIDECAR_URL stays for one.
import { describe, expect, it } from "vitest";
import { optionsFromEnv } from "../../edge/node/env.js";
import { DEFAULT_SIDECAR_URL, parseSidecarUrls } from "../../edge/sidecars/connection.js";

describe("SIDECAR_URLS", () => {
  it("lists the sidecars, comma-separated, blanks trimmed; SIDECAR_URL or the default names one", () => {
    expect(parseSidecarUrls(" http://10.0.0.1:50051, https://gpu2.example:443 ,", "http://ignored:1")).toEqual(["http://10.0.0.1:50051", "https://gpu2.example:443"]);
    expect(parseSidecarUrls(undefined, "http://one:50051")).toEqual(["http://one:50051"]);
    expect(parseSidecarUrls("  ", undefined)).toEqual([DEFAULT_SIDECAR_URL]);
  });

  it("refuses an entry that is not an http(s) URL, or the same sidecar twice, without echoing the entry", () => {
    expect(() => parseSidecarUrls("http://a:1,gpu2:50051", undefined)).toThrow("SIDECAR_URLS: entry 2 is not an http(s) URL");
    expect(() => parseSidecarUrls("http://a:1,not a url", undefined)).toThrow("SIDECAR_URLS: entry 2 is not an http(s) URL");
    expect(() => parseSidecarUrls("http://a:1,http://a:1", undefined)).toThrow("SIDECAR_URLS names the same sidecar twice");
  });

  it("gives the Node edge several sidecars only when SIDECAR_URLS names more than one", () => {
    const several = optionsFromEnv({ SIDECAR_URLS: "http://a:1,http://b:2", LOG_REQUESTS: "false" });
    expect([several.sidecarUrl, several.sidecarUrls]).toEqual(["http://a:1", ["http://a:1", "http://b:2"]]);
    const one = optionsFromEnv({ SIDECAR_URL: "http://c:3", LOG_REQUESTS: "false" });
    expect([one.sidecarUrl, one.sidecarUrls]).toEqual(["http://c:3", undefined]);
  });
});
