// Tool calls through real llama.cpp on a random-weight model, which never calls a tool by itself:
// a forced tool choice still yields a call whose arguments parse and validate against the tool's
// schema, for every seed. The model's template is ChatML, whose call syntax is node-llama-cpp's
// generic `||call: name(arguments)`: the sidecar reads whatever syntax the template defines.
import { Ajv } from "ajv";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FinishReason, Role, ToolChoice, type GenerateResponse } from "../../proto/gen/inference/v1/inference_pb.js";
import { modelPath } from "../../gguf/models.js";
import type { RunningSidecar } from "../../sidecar/start-sidecar.js";
import { clientsFor, collect, startTestSidecar } from "../support/sidecar.js";

const weather = {
  type: "object",
  properties: {
    city: { type: "string", maxLength: 8 },
    days: { type: "integer" },
    unit: { enum: ["celsius", "fahrenheit"] },
  },
  required: ["city", "days", "unit"],
} as const;
const time = { type: "object", properties: { zone: { type: "string", maxLength: 8 } }, required: ["zone"] } as const;
// Strings are kept short so that every reply fits `maxTokens`. `maxLength` counts grammar
// characters, and a random model can write an overlong UTF-8 form (one grammar character, several
// U+FFFD): the schemas are validated without it (test/sidecar/constraint.test.ts shows the rest).
const loose = (schema: object): object => JSON.parse(JSON.stringify(schema).replaceAll(',"maxLength":8', "")) as object;
const tools = [
  { name: "get_weather", description: "Weather for a city", parameters: JSON.stringify(weather) },
  { name: "get_time", description: "Time in a zone", parameters: JSON.stringify(time) },
];

let sidecar: RunningSidecar;
beforeAll(async () => {
  sidecar = await startTestSidecar({ model: modelPath("random-tiny"), sequences: 4, contextSize: 2048, maxQueue: 64 });
});
afterAll(async () => {
  await sidecar.stop();
});

type Events = GenerateResponse["event"][];
const generate = (seed: number, chat: object) =>
  collect(
    clientsFor(sidecar.url).grpc.generate({
      input: { case: "chat", value: { messages: [{ role: Role.USER, content: "Weather in Tokyo?" }], tools, ...chat } },
      sampling: { temperature: 1, seed },
      maxTokens: 300,
    }),
  );

/** The calls of a reply, assembled from the token events' fragments. */
function callsOf(events: Events): { id: string; name: string; arguments: string }[] {
  const calls: { id: string; name: string; arguments: string }[] = [];
  for (const event of events) {
    if (event.case !== "token") continue;
    for (const delta of event.value.toolCalls) {
      if (delta.id !== "") {
        expect(delta.arguments).toBe("");
        expect(delta.index).toBe(calls.length);
        calls.push({ id: delta.id, name: delta.name, arguments: "" });
      } else {
        const call = calls[delta.index];
        expect(call).toBeDefined();
        if (call !== undefined) call.arguments += delta.arguments;
      }
    }
  }
  return calls;
}

describe("forced tool calls on a random model", () => {
  it('"required": every seed calls one of the tools with arguments valid for its schema', async () => {
    const ajv = new Ajv();
    const validators = { get_weather: ajv.compile(loose(weather)), get_time: ajv.compile(loose(time)) };
    const runs = await Promise.all(
      Array.from({ length: 16 }, (_, seed) =>
        generate(seed, { toolChoice: ToolChoice.REQUIRED, parallelToolCalls: false }),
      ),
    );
    for (const events of runs) {
      const finish = events.at(-1);
      expect(finish?.case).toBe("finish");
      const calls = callsOf(events);
      expect(calls).toHaveLength(1);
      const [call] = calls;
      expect(call?.id).toMatch(/^call_[A-Za-z0-9_-]{24}$/);
      const validate = validators[call?.name as keyof typeof validators];
      expect(validate).toBeDefined();
      const args: unknown = JSON.parse(call?.arguments ?? "");
      expect(validate(args), JSON.stringify(validate.errors)).toBe(true);
      if (finish?.case === "finish") expect(finish.value.reason).toBe(FinishReason.TOOL_CALLS);
    }
  });

  it("a named function: every seed calls exactly that one", async () => {
    const runs = await Promise.all(
      Array.from({ length: 8 }, (_, seed) =>
        generate(100 + seed, { toolChoice: ToolChoice.FUNCTION, toolName: "get_time" }),
      ),
    );
    for (const events of runs) {
      const calls = callsOf(events);
      expect(calls.map((c) => c.name)).toEqual(["get_time"]);
      expect(new Ajv().compile(loose(time))(JSON.parse(calls[0]?.arguments ?? ""))).toBe(true);
    }
  });

  it(
    "optional properties stay optional: every call validates, some give the optional one and some leave it " + "out",
    async () => {
      const read = {
        type: "object",
        properties: {
          path: { type: "string", maxLength: 8 },
          offset: { type: "integer" },
          pages: { type: "string", maxLength: 8 },
        },
        required: ["path"],
      };
      const readTools = [{ name: "read", description: "Read a file", parameters: JSON.stringify(read) }];
      const runs = await Promise.all(
        Array.from({ length: 24 }, (_, seed) =>
          generate(300 + seed, { tools: readTools, toolChoice: ToolChoice.FUNCTION, toolName: "read" }),
        ),
      );
      const validate = new Ajv().compile({ ...(loose(read) as object), additionalProperties: false });
      const given = runs.map((events) => {
        const args = JSON.parse(callsOf(events)[0]?.arguments ?? "") as Record<string, unknown>;
        expect(validate(args), JSON.stringify(validate.errors)).toBe(true);
        return Object.keys(args).join(",");
      });
      // Before, the grammar made every property required: "path,offset,pages" every time.
      expect(new Set(given).size).toBeGreaterThan(1);
      expect(given.some((keys) => keys === "path" || keys === "path,offset" || keys === "path,pages")).toBe(true);
    },
  );

  it('"none": no call, plain text', async () => {
    const events = await generate(7, { toolChoice: ToolChoice.NONE });
    expect(callsOf(events)).toEqual([]);
    expect(events.at(-1)).toMatchObject({ case: "finish", value: { reason: expect.any(Number) } });
    const finish = events.at(-1);
    if (finish?.case === "finish") expect(finish.value.reason).not.toBe(FinishReason.TOOL_CALLS);
  });
});
