// SIDECAR_URLS: parsed the same way for the Node edge and the Worker (edge/config/); SIDECAR_URL stays for one.
import { describe, expect, it } from "vitest";
import { parseEdgeConfig, sidecarUrlsOf } from "../../edge/config/parse.js";
import { optionsFromEnv } from "../../edge/hosts/node/env.js";
import { DEFAULT_SIDECAR_URL } from "../../edge/upstream/connection.js";

const urlsOf = (env: Record<string, string>): string[] => sidecarUrlsOf(parseEdgeConfig(env, "worker"));

describe("SIDECAR_URLS", () => {
  it("lists the sidecars, comma-separated, blanks trimmed; SIDECAR_URL or the default names one", () => {
    expect(
      urlsOf({ SIDECAR_URLS: " http://10.0.0.1:50051, https://gpu2.example:443 ,", SIDECAR_URL: "http://ignored:1" }),
    ).toEqual(["http://10.0.0.1:50051", "https://gpu2.example:443"]);
    expect(urlsOf({ SIDECAR_URL: "http://one:50051" })).toEqual(["http://one:50051"]);
    expect(urlsOf({ SIDECAR_URLS: "  " })).toEqual([DEFAULT_SIDECAR_URL]);
  });

  it("refuses an entry that is not an http(s) URL, or the same sidecar twice, without echoing the entry", () => {
    expect(() => urlsOf({ SIDECAR_URLS: "http://a:1,gpu2:50051" })).toThrow(
      "SIDECAR_URLS: entry 2 is not an http(s) URL",
    );
    expect(() => urlsOf({ SIDECAR_URLS: "http://a:1,not a url" })).toThrow(
      "SIDECAR_URLS: entry 2 is not an http(s) URL",
    );
    expect(() => urlsOf({ SIDECAR_URLS: "http://a:1,http://a:1" })).toThrow(
      "SIDECAR_URLS: names the same sidecar twice",
    );
    expect(() => urlsOf({ SIDECAR_URLS: "http://a:1,gpu2:50051" })).not.toThrow("gpu2");
  });

  it("gives the Node edge several sidecars only when SIDECAR_URLS names more than one", () => {
    const several = optionsFromEnv({ SIDECAR_URLS: "http://a:1,http://b:2", LOG_REQUESTS: "false" });
    expect([several.sidecarUrl, several.sidecarUrls]).toEqual(["http://a:1", ["http://a:1", "http://b:2"]]);
    const one = optionsFromEnv({ SIDECAR_URL: "http://c:3", LOG_REQUESTS: "false" });
    expect([one.sidecarUrl, one.sidecarUrls]).toEqual(["http://c:3", undefined]);
  });
});
