// Structured output through real llama.cpp: a random-weight model (which would never write JSON
// by itself) under a grammar always produces replies that parse and validate.
import { Code, ConnectError } from "@connectrpc/connect";
import { Ajv } from "ajv";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FinishReason } from "../../proto/gen/inference/v1/inference_pb.js";
import { modelPath } from "../../gguf/models.js";
import type { RunningSidecar } from "../../sidecar/start-sidecar.js";
import { clientsFor, collect, replyText, startTestSidecar } from "../support/sidecar.js";

const schema = {
  type: "object",
  properties: {
    city: { type: "string", maxLength: 12 },
    days: { type: "integer" },
    temperature: { type: "number" },
    sunny: { type: "boolean" },
    kind: { enum: ["rain", "sun", "snow"] },
    tags: { type: "array", items: { type: "string", maxLength: 6 }, maxItems: 3 },
  },
  required: ["city", "days", "temperature", "sunny", "kind", "tags"],
} as const;

function withoutMaxLength(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutMaxLength);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([k]) => k !== "maxLength")
      .map(([k, v]) => [k, withoutMaxLength(v)]),
  );
}

let sidecar: RunningSidecar;
beforeAll(async () => {
  sidecar = await startTestSidecar({ model: modelPath("random-tiny"), sequences: 4, contextSize: 1024, maxQueue: 64 });
});
afterAll(async () => {
  await sidecar.stop();
});

interface Extra {
  sampling?: { temperature?: number; seed?: number };
  maxTokens?: number;
  constraint?: {
    kind:
      | { case: "jsonSchema"; value: string }
      | { case: "jsonObject"; value: boolean }
      | { case: "grammar"; value: string };
  };
}
const generate = (request: Extra) =>
  collect(
    clientsFor(sidecar.url).grpc.generate({
      input: { case: "prompt", value: "Weather report:" },
      maxTokens: 400,
      ...request,
    }),
  );

describe("output constraints", () => {
  // `maxLength` counts grammar characters. A random-weight model can write a byte sequence that
  // the grammar takes as one character but that is no valid UTF-8 (an overlong form), decoded
  // as several U+FFFD: lengths are checked on strings without U+FFFD, the rest of the schema on all.
  it("a JSON schema: every reply parses and validates, over many seeds", async () => {
    const validate = new Ajv().compile(withoutMaxLength(schema) as object);
    const lengthOk = (value: unknown): boolean =>
      typeof value === "string" ? value.includes("\uFFFD") || [...value].length <= 12 : true;
    const runs = await Promise.all(
      Array.from({ length: 30 }, (_, seed) =>
        generate({
          sampling: { temperature: 1, seed },
          constraint: { kind: { case: "jsonSchema", value: JSON.stringify(schema) } },
        }),
      ),
    );
    for (const events of runs) {
      expect(events.at(-1)?.value).toMatchObject({ reason: FinishReason.STOP });
      const value: unknown = JSON.parse(replyText(events));
      expect(validate(value), JSON.stringify(validate.errors)).toBe(true);
      const { city, tags } = value as { city: string; tags: string[] };
      expect(lengthOk(city)).toBe(true);
      for (const tag of tags) expect(tag.includes("\uFFFD") || [...tag].length <= 6).toBe(true);
    }
  });

  it("any JSON object", async () => {
    for (const seed of [1, 2, 3]) {
      const events = await generate({
        sampling: { temperature: 1, seed },
        maxTokens: 1000,
        constraint: { kind: { case: "jsonObject", value: true } },
      });
      if ((events.at(-1)!.value as { reason: FinishReason }).reason !== FinishReason.STOP) continue;
      const value: unknown = JSON.parse(replyText(events));
      expect(typeof value === "object" && value !== null && !Array.isArray(value)).toBe(true);
    }
  });

  it("a raw GBNF grammar, for direct gRPC callers", async () => {
    for (const seed of [1, 2, 3, 4]) {
      const events = await generate({
        sampling: { seed },
        constraint: { kind: { case: "grammar", value: 'root ::= "yes" | "no"' } },
      });
      expect(["yes", "no"]).toContain(replyText(events));
      expect(events.at(-1)?.value).toMatchObject({ reason: FinishReason.STOP });
    }
  });

  it.each([
    ["a schema that is not JSON", { case: "jsonSchema" as const, value: "{type: object" }, /not valid JSON/],
    [
      "a grammar that does not parse",
      { case: "grammar" as const, value: "root ::= (" },
      /^the grammar does not parse: unexpected end of the grammar \(line 1, column 11\)$/,
    ],
  ])("refuses %s with INVALID_ARGUMENT before any event", async (_name, kind, message) => {
    const error = await generate({ constraint: { kind } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectError);
    expect((error as ConnectError).code).toBe(Code.InvalidArgument);
    expect((error as ConnectError).rawMessage).toMatch(message);
  });
});
