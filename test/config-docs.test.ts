// docs/configuration.md is written from the settings tables (sidecar/config.ts,
// edge/config/settings.ts) by `npm run docs:config`: it must say what they say.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { CONFIGURATION_MD, configurationDocs } from "../scripts/config-docs.js";
import { NODE_SETTINGS, SHARED_SETTINGS, WORKER_BINDINGS, WORKER_SETTINGS } from "../edge/config/settings.js";
import { SIDECAR_OPTIONS } from "../sidecar/config.js";

describe("docs/configuration.md", () => {
  it("is what `npm run docs:config` writes", () => {
    expect(readFileSync(CONFIGURATION_MD, "utf8"), "run `npm run docs:config`").toBe(configurationDocs());
  });

  it("has a row for every variable of both tables", () => {
    const docs = configurationDocs();
    const edge = [SHARED_SETTINGS, NODE_SETTINGS, WORKER_SETTINGS].flatMap((table) =>
      Object.values(table).map((s) => s.env),
    );
    for (const name of [
      ...edge,
      ...WORKER_BINDINGS.map((b) => b.env),
      ...Object.values(SIDECAR_OPTIONS).map((o) => o.env),
    ]) {
      expect(docs).toMatch(new RegExp(`^\\| (\`--[a-z-]+\` \\| )?\`${name}\` \\|`, "m"));
    }
  });
});
