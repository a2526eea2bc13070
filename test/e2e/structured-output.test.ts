// Structured output through the edge with the official clients: a random-weight model under the
// sidecar's grammar always answers JSON that parses and validates against the request's schema.
import { Ajv } from "ajv";
import Anthropic from "@anthropic-ai/sdk";
import { jsonSchemaOutputFormat } from "@anthropic-ai/sdk/helpers/json-schema";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { modelPath } from "../../gguf/models.js";
import { startStack, type Stack } from "../support/edge.js";

// No maxLength here: the constraint test in test/sidecar covers lengths (and why they are
// counted per grammar character); the replies stay short through enums and maxItems.
const schema = {
  type: "object",
  properties: {
    days: { type: "integer" },
    temperature: { type: "number" },
    sunny: { type: "boolean" },
    kind: { enum: ["rain", "sun", "snow"] },
    hours: { type: "array", items: { type: "integer" }, maxItems: 3 },
  },
  required: ["days", "temperature", "sunny", "kind", "hours"],
  additionalProperties: false,
};
const validate = new Ajv().compile(schema);

let stack: Stack;
let client: OpenAI;
beforeAll(async () => {
  stack = await startStack({ model: modelPath("random-tiny"), sequences: 4, contextSize: 1024, maxQueue: 32 });
  client = new OpenAI({ baseURL: stack.baseURL, apiKey: "x", maxRetries: 0 });
});
afterAll(async () => {
  await stack?.stop();
});

describe("structured output", () => {
  it("chat completions: response_format json_schema, over many seeds, streaming and not", async () => {
    const replies = await Promise.all(
      Array.from({ length: 12 }, async (_, seed) => {
        const request = {
          model: "m",
          messages: [{ role: "user" as const, content: "Weather?" }],
          temperature: 1,
          seed,
          max_tokens: 300,
          response_format: { type: "json_schema" as const, json_schema: { name: "weather", schema, strict: true } },
        };
        if (seed % 2 === 0) return (await client.chat.completions.create(request)).choices[0]?.message.content ?? "";
        let text = "";
        for await (const chunk of await client.chat.completions.create({ ...request, stream: true }))
          text += chunk.choices[0]?.delta.content ?? "";
        return text;
      }),
    );
    for (const reply of replies)
      expect(validate(JSON.parse(reply)), `${reply} ${JSON.stringify(validate.errors)}`).toBe(true);
  });

  it(
    "Anthropic: output_config.format json_schema; messages.parse() gets parsed output, streaming and " + "not",
    async () => {
      // The SDK sends the schema without the keywords Anthropic's API does not take (maxItems
      // among them), so this one has none: the reply is bounded by its enum and scalars.
      const flat = {
        type: "object",
        properties: { days: { type: "integer" }, sunny: { type: "boolean" }, kind: { enum: ["rain", "sun", "snow"] } },
        required: ["days", "sunny", "kind"],
        additionalProperties: false,
      };
      const validateFlat = new Ajv().compile(flat);
      const anthropic = new Anthropic({ baseURL: stack.edge.url, apiKey: "x", maxRetries: 0 });
      for (let run = 0; run < 4; run++) {
        const params = {
          model: "m",
          max_tokens: 300,
          temperature: 1,
          messages: [{ role: "user" as const, content: "Weather?" }],
          output_config: { format: jsonSchemaOutputFormat(flat as never) },
        };
        const message = await anthropic.messages.parse(params);
        expect(validateFlat(message.parsed_output), JSON.stringify(validateFlat.errors)).toBe(true);
        const streamed = await anthropic.messages.stream(params).finalMessage();
        const text = streamed.content.map((block) => (block.type === "text" ? block.text : "")).join("");
        expect(validateFlat(JSON.parse(text)), text).toBe(true);
      }
    },
  );

  it("responses: text.format json_schema, and the Response echoes the format", async () => {
    // The Responses API has no seed: three random ones.
    for (let run = 0; run < 3; run++) {
      const response = await client.responses.create({
        model: "m",
        input: "Weather?",
        temperature: 1,
        max_output_tokens: 300,
        text: { format: { type: "json_schema", name: "weather", schema, strict: true } },
      });
      expect(validate(JSON.parse(response.output_text))).toBe(true);
      expect(response.text?.format).toMatchObject({ type: "json_schema", name: "weather" });
    }
  });

  it("completions: a GBNF grammar as an extra field", async () => {
    const completion = await client.completions.create({
      model: "m",
      prompt: "Is it sunny?",
      ...({ grammar: 'root ::= "yes" | "no"' } as object),
    });
    expect(["yes", "no"]).toContain(completion.choices[0]?.text);
    expect(completion.choices[0]?.finish_reason).toBe("stop");
  });

  it("refuses a grammar that does not parse with a 400 naming the problem", async () => {
    await expect(
      client.completions.create({ model: "m", prompt: "x", ...({ grammar: "root ::= (" } as object) }),
    ).rejects.toMatchObject({
      status: 400,
      error: { type: "invalid_request_error", message: expect.stringMatching(/grammar/) },
    });
  });
});

describe("forced tool calls on a random model, through the edge", () => {
  const tools: OpenAI.Chat.ChatCompletionTool[] = [
    { type: "function", function: { name: "report", parameters: schema } },
  ];

  it(
    'tool_choice "required": the openai client accumulates one call whose arguments validate, streaming and ' + "not",
    async () => {
      const replies = await Promise.all(
        Array.from({ length: 8 }, async (_, seed) => {
          const request = {
            model: "m",
            messages: [{ role: "user" as const, content: "Report." }],
            tools,
            tool_choice: "required" as const,
            parallel_tool_calls: false,
            temperature: 1,
            seed,
            max_tokens: 300,
          };
          const streamed = await client.chat.completions.stream(request).finalChatCompletion();
          const whole = await client.chat.completions.create(request);
          return [streamed, whole];
        }),
      );
      for (const completion of replies.flat()) {
        const choice = completion.choices[0];
        expect(choice?.finish_reason).toBe("tool_calls");
        expect(choice?.message.tool_calls).toHaveLength(1);
        const call = choice?.message.tool_calls?.[0];
        if (call?.type !== "function") throw new Error("no function call");
        expect(call.function.name).toBe("report");
        const args: unknown = JSON.parse(call.function.arguments);
        expect(validate(args), JSON.stringify(validate.errors)).toBe(true);
      }
    },
  );
});
