// Schemas over a size limit are refused before any event, naming the limit (output constraints
// and tool parameters alike, and through the edge in each protocol's shape); the same schema
// sent again is built once (the grammar cache).
import { Code, ConnectError } from "@connectrpc/connect";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Role } from "../../proto/gen/inference/v1/inference_pb.js";
import { grammarCache } from "../../sidecar/engine/grammar/constraint.js";
import { MAX_TOOLS, SCHEMA_LIMITS } from "../../sidecar/engine/grammar/schema-limits.js";
import { startStack, type Stack } from "../support/edge.js";
import { clientsFor, collect } from "../support/sidecar.js";

const enumOf = (n: number) => ({
  type: "object",
  properties: { k: { enum: Array.from({ length: n }, (_, i) => `v${i}`) } },
  required: ["k"],
});
const wide = (n: number) => ({
  type: "object",
  properties: Object.fromEntries(Array.from({ length: n }, (_, i) => [`p${i}`, { type: "integer" }])),
});
const deep = (n: number): object =>
  n === 0 ? { type: "integer" } : { type: "object", properties: { a: deep(n - 1) } };
const big = { type: "object", description: "x".repeat(SCHEMA_LIMITS.bytes), properties: {} };

describe("schema limits", () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ sequences: 2, contextSize: 512 });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const refusal = async (request: object): Promise<ConnectError> => {
    const error = await collect(clientsFor(stack.sidecar.url).grpc.generate(request)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectError);
    expect((error as ConnectError).code).toBe(Code.InvalidArgument);
    return error as ConnectError;
  };
  const constrained = (schema: object) => ({
    input: { case: "prompt", value: "x" },
    maxTokens: 4,
    constraint: { kind: { case: "jsonSchema", value: JSON.stringify(schema) } },
  });

  it.each([
    ["enum values", enumOf(SCHEMA_LIMITS.enumValues + 1), /has 257 enum values: at most 256/],
    ["properties", wide(SCHEMA_LIMITS.properties + 1), /has 257 properties: at most 256/],
    ["depth", deep(SCHEMA_LIMITS.depth + 2), /levels deep: at most 16/],
    ["bytes", big, /bytes: at most 32768 bytes/],
  ])("refuses an output schema over the %s limit before any event", async (_name, schema, message) => {
    expect((await refusal(constrained(schema))).rawMessage).toMatch(message);
  });

  it("refuses tool parameters over a limit, and too many tools", async () => {
    const chat = (tools: object[]) => ({
      input: { case: "chat", value: { messages: [{ role: Role.USER, content: "x" }], tools } },
      maxTokens: 4,
    });
    expect((await refusal(chat([{ name: "f", parameters: JSON.stringify(enumOf(300)) }]))).rawMessage).toMatch(
      /tool "f" has 300 enum values/,
    );
    const many = Array.from({ length: MAX_TOOLS + 1 }, (_, i) => ({ name: `t${i}`, parameters: "" }));
    expect((await refusal(chat(many))).rawMessage).toMatch(/129 tools: at most 128/);
  });

  it("a schema within the limits works, and the same schema is built once", async () => {
    const schema = JSON.stringify(enumOf(SCHEMA_LIMITS.enumValues));
    const before = { ...grammarCache };
    for (let i = 0; i < 3; i++) {
      const events = await collect(
        clientsFor(stack.sidecar.url).grpc.generate({
          input: { case: "prompt", value: "x" },
          maxTokens: 12,
          constraint: { kind: { case: "jsonSchema", value: schema } },
        }),
      );
      expect(events.at(-1)?.case).toBe("finish");
    }
    expect(grammarCache.builds - before.builds).toBe(1);
    expect(grammarCache.hits - before.hits).toBe(2);
  });

  it("is a 400 naming the limit through the edge, in OpenAI's and Anthropic's shapes", async () => {
    const openai = new OpenAI({ baseURL: stack.baseURL, apiKey: "x", maxRetries: 0 });
    const refused = (await openai.chat.completions
      .create({
        model: "m",
        messages: [{ role: "user", content: "x" }],
        response_format: { type: "json_schema", json_schema: { name: "s", schema: enumOf(50_000) } },
      })
      .catch((e: unknown) => e)) as InstanceType<typeof OpenAI.BadRequestError>;
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect(refused.message).toMatch(/the JSON schema is \d+ bytes: at most 32768 bytes/);
    const anthropic = new Anthropic({ baseURL: stack.edge.url, apiKey: "x", maxRetries: 0 });
    const tooBig = (await anthropic.messages
      .create({
        model: "m",
        max_tokens: 8,
        messages: [{ role: "user", content: "x" }],
        tools: [{ name: "f", input_schema: enumOf(50_000) as never }],
      })
      .catch((e: unknown) => e)) as InstanceType<typeof Anthropic.BadRequestError>;
    expect(tooBig).toBeInstanceOf(Anthropic.BadRequestError);
    expect(tooBig.error).toMatchObject({
      error: { type: "invalid_request_error", message: expect.stringMatching(/tool "f" is \d+ bytes: at most 32768/) },
    });
  });
});
