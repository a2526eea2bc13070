// Every chat template of llama.cpp's models/templates/ (read from the source bundle node-llama-cpp
// ships): the reply syntax learned from it, and every kind of turn it renders read back whole, a
// character at a time and in uneven pieces (sidecar/engine/syntax/round-trip.ts). docs/models.md,
// written from the same reports, is the list of what each template gets, refusals included: a
// template whose family or refusal changes makes it stale, and this test fails.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { CANNOT_RENDER, MODELS_MD, modelsDocs, templateReports } from "../../scripts/models-docs.js";

/** Templates the Jinja engine cannot render, each with why: they are served as text, tools refused. */
const UNRENDERABLE: Readonly<Record<string, string>> = {
  // `{0: 0, 512: 128, …}`: a mapping with integer keys, which the engine refuses.
  "ByteDance-Seed-OSS.jinja": "Object keys must be strings",
};

describe("llama.cpp's chat templates, read back", () => {
  const reports = templateReports();

  it("has all of them", () => {
    expect(reports.size).toBeGreaterThanOrEqual(68);
  });

  for (const [name, report] of reports) {
    it(`${name}: every turn comes back, or its calls are refused with the reason`, () => {
      const problems = report.results.filter((r) => r.problem !== undefined).map((r) => `${r.case.name}: ${r.problem}`);
      const cannot = UNRENDERABLE[name];
      if (cannot === undefined) expect(problems).toEqual([]);
      else for (const problem of problems) expect(problem).toMatch(new RegExp(`${CANNOT_RENDER}.*${cannot}`));
      if (report.syntax.calls === undefined) expect(report.syntax.refused).toMatch(/template/);
    });
  }

  it("docs/models.md is what `npm run docs:models` writes", () => {
    expect(readFileSync(MODELS_MD, "utf8"), "run `npm run docs:models`").toBe(modelsDocs(reports));
  });
});
