// The schema node-llama-cpp's grammar generator is given: optional properties as alternatives of
// the object (it would make them all required), anyOf as oneOf, at every depth.
import { describe, expect, it } from "vitest";
import { grammarSchema, MAX_COMBINED_OPTIONAL } from "../../sidecar/engine/grammar/grammar-schema.js";

const str = { type: "string" };
const keysOf = (schema: unknown): string[] =>
  (
    (schema as { oneOf: { properties: Record<string, unknown> }[] }).oneOf ?? [
      schema as { properties: Record<string, unknown> },
    ]
  ).map((alt) => Object.keys(alt.properties).join(","));

describe("grammarSchema", () => {
  it("leaves an object whose properties are all required as it is", () => {
    const schema = {
      type: "object",
      properties: { a: str, b: str },
      required: ["a", "b"],
      additionalProperties: false,
    };
    expect(grammarSchema(schema)).toEqual(schema);
  });

  it("turns optional properties into alternatives, every combination, in the properties' order", () => {
    const out = grammarSchema({
      type: "object",
      properties: { path: str, offset: { type: "integer" }, pages: str },
      required: ["path"],
    });
    expect(keysOf(out)).toEqual(["path", "path,offset", "path,pages", "path,offset,pages"]);
    expect((out as { oneOf: object[] }).oneOf[0]).toEqual({ type: "object", properties: { path: str } });
  });

  it("takes no `required` as all optional, and keeps within minProperties and maxProperties", () => {
    expect(keysOf(grammarSchema({ type: "object", properties: { a: str, b: str } }))).toEqual(["", "a", "b", "a,b"]);
    expect(
      keysOf(grammarSchema({ type: "object", properties: { a: str, b: str }, minProperties: 1, maxProperties: 1 })),
    ).toEqual(["a", "b"]);
  });

  it(`past ${MAX_COMBINED_OPTIONAL} optional properties: none, each alone, or all`, () => {
    const properties = Object.fromEntries(["a", "b", "c", "d", "e"].map((n) => [n, str]));
    expect(keysOf(grammarSchema({ type: "object", properties, required: [] }))).toEqual([
      "",
      "a",
      "b",
      "c",
      "d",
      "e",
      "a,b,c,d,e",
    ]);
  });

  it("works at every depth, and anyOf becomes oneOf", () => {
    const inner = { type: "object", properties: { x: str }, required: [] };
    const out = grammarSchema({
      type: "object",
      properties: { list: { type: "array", items: inner }, either: { anyOf: [str, inner] } },
      required: ["list", "either"],
    }) as {
      properties: { list: { items: unknown }; either: { oneOf: unknown[] } };
    };
    expect(keysOf(out.properties.list.items)).toEqual(["", "x"]);
    expect(out.properties.either.oneOf[0]).toEqual(str);
    expect(keysOf(out.properties.either.oneOf[1])).toEqual(["", "x"]);
  });
});
