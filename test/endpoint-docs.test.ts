// The endpoint lists of the docs are written from the route table (edge/http/routes.ts) by
// `npm run docs:endpoints`: each must say what the table says.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  CONTRACT_MD,
  ENDPOINT_DOCS,
  listedEndpoints,
  routeKey,
  tables,
  withEndpoints,
} from "../scripts/endpoint-docs.js";

/** A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces as hyphens. */
const anchorOf = (heading: string): string =>
  heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, "")
    .replace(/ /g, "-");

describe("the endpoint lists", () => {
  for (const file of ENDPOINT_DOCS) {
    it(
      `${file.slice(file.lastIndexOf("/", file.lastIndexOf("/") - 1) + 1)} is what \`npm run docs:endpoints\` ` +
        `writes`,
      () => {
        const text = readFileSync(file, "utf8");
        expect(text, "run `npm run docs:endpoints`").toBe(withEndpoints(file, text));
      },
    );
  }

  it("link to sections docs/contract.md has", () => {
    const anchors = new Set(
      readFileSync(CONTRACT_MD, "utf8")
        .split("\n")
        .filter((line) => /^#{2,3} /.test(line))
        .map((line) => anchorOf(line.replace(/^#+ /, ""))),
    );
    for (const endpoint of listedEndpoints()) {
      expect(endpoint.contract, endpoint.endpoint).toBeDefined();
      expect(anchors.has(endpoint.contract ?? ""), `${endpoint.endpoint}: #${endpoint.contract}`).toBe(true);
    }
  });

  it("describe a route alike whether or not a store or batches are given", () => {
    const { bare, stored, all } = tables();
    const full = new Map(all.map((route) => [routeKey(route), route]));
    for (const route of [...bare, ...stored]) {
      const same = full.get(routeKey(route));
      expect(same, routeKey(route)).toBeDefined();
      expect({ about: route.about, contract: route.contract, forms: route.forms }, routeKey(route)).toEqual({
        about: same?.about,
        contract: same?.contract,
        forms: same?.forms,
      });
    }
  });

  it("hold every route and form once, with the cancel of a background Response and the WebSocket mode", () => {
    const listed = listedEndpoints().map((e) => e.endpoint);
    const { all } = tables();
    expect(listed.length).toBe(all.length + all.reduce((n, route) => n + (route.forms?.length ?? 0), 0));
    expect(new Set(listed).size).toBe(listed.length);
    expect(listed).toContain("POST /v1/responses/{id}/cancel");
    expect(listed).toContain("GET /v1/responses/{id}?stream=true");
    expect(listed).toContain("GET /v1/responses (WebSocket upgrade)");
  });
});
