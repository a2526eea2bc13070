// docs/contract.md's request-field tables are written from the protocols' field tables by
// `npm run docs:fields`: each must say what the code says.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { CONTRACT_MD, withFieldTables } from "../scripts/field-docs.js";

describe("the request-field tables of docs/contract.md", () => {
  it("are what `npm run docs:fields` writes", () => {
    const text = readFileSync(CONTRACT_MD, "utf8");
    expect(text, "run `npm run docs:fields`").toBe(withFieldTables(text));
  });
});
