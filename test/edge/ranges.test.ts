// Numbers a proto field cannot hold are refused by the schema with a 400 naming the field, in
// the protocol's shape, and the sidecar is never called; if one ever slips past a schema, the
// encode failure is still a 400 that shows nothing internal, never a 500.
import { create } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toApiError } from "../../edge/base/errors.js";
import { createSidecarClient, type Sidecar } from "../../edge/upstream/connection.js";
import { ChatSchema } from "../../proto/gen/inference/v1/inference_pb.js";
import { post, testApp } from "../support/app.js";
import { FakeSidecar } from "../support/fake-sidecar.js";
import { serveGrpcWeb, type GrpcWebTestServer } from "../support/grpc-web-server.js";

const HUGE = 5_000_000_000;
const chat = { messages: [{ role: "user", content: "hi" }] };
const anthropic = { model: "m", max_tokens: 8, messages: [{ role: "user", content: "hi" }] };

describe.each([
  ["/v1/messages", { ...anthropic, thinking: { type: "enabled", budget_tokens: HUGE } }, "thinking.budget_tokens"],
  ["/v1/messages", { ...anthropic, top_k: HUGE }, "top_k"],
  ["/v1/messages", { ...anthropic, thinking: { type: "enabled", budget_tokens: -1 } }, "thinking.budget_tokens"],
  [
    "/v1/messages/count_tokens",
    { model: "m", messages: anthropic.messages, thinking: { type: "enabled", budget_tokens: HUGE } },
    "thinking.budget_tokens",
  ],
  ["/v1/responses", { input: "hi", max_output_tokens: -1 }, "max_output_tokens"],
  ["/v1/chat/completions", { ...chat, top_k: HUGE }, "top_k"],
  ["/v1/chat/completions", { ...chat, logit_bias: { "99999999999": 1 } }, "logit_bias"],
  ["/v1/chat/completions", { ...chat, top_logprobs: 21, logprobs: true }, "top_logprobs"],
  ["/v1/completions", { prompt: "x", top_k: -1 }, "top_k"],
  ["/v1/completions", { prompt: "x", logprobs: 6 }, "logprobs"],
])("%s with %j", (path, body, field) => {
  it(`is a 400 naming '${field}', and the sidecar is never called`, async () => {
    const { app, sidecar } = testApp();
    const response = await post(app, path, body);
    expect(response.status).toBe(400);
    const text = await response.text();
    expect(text).toContain(field.split(".")[0]);
    expect(text).not.toMatch(/serialize|inference\.v1|uint32/);
    expect(sidecar.calls).toHaveLength(0);
    expect(sidecar.tokenizeCalls).toHaveLength(0);
  });
});

describe("a value no schema caught", () => {
  let server: GrpcWebTestServer;
  beforeAll(async () => {
    server = await serveGrpcWeb(new FakeSidecar());
  });
  afterAll(async () => {
    await server.close();
  });

  it("is a 400 with a generic message when the sidecar client cannot encode it", async () => {
    const client = createSidecarClient(server.url);
    const request = {
      input: { case: "chat" as const, value: { messages: [{ role: 2, content: "hi" }], reasoningBudget: HUGE } },
    };
    const failure = await (async () => {
      for await (const _event of client.generate(request)) void _event;
    })().catch((e: unknown) => e);
    const error = toApiError(failure);
    expect(error.status).toBe(400);
    expect(error.message).toBe("The request holds a value out of the range this server accepts.");
    expect(error.code).toBe("value_out_of_range");
  });

  it("is that 400 in each protocol's own shape, streams included, and nothing is sent", async () => {
    const sent: string[] = [];
    const client = createSidecarClient("http://127.0.0.1:1", async (input) => {
      sent.push(String(input));
      throw new Error("nothing may be sent");
    });
    // A caller that forgot a range check: every request reaches the client out of range.
    const careless: Sidecar = {
      ...client,
      generate: (request, options) => client.generate({ ...request, maxTokens: 2 ** 33 }, options),
      tokenize: (_request, options) =>
        client.tokenize(
          { model: "m", input: { case: "chat", value: create(ChatSchema, { reasoningBudget: -1 }) } },
          options,
        ),
    };
    const { app } = testApp(undefined, { sidecar: careless });
    const message = "The request holds a value out of the range this server accepts.";
    const openai = { error: { message, type: "invalid_request_error", param: null, code: "value_out_of_range" } };
    const anthropicError = { type: "error", error: { type: "invalid_request_error", message } };
    const cases: [string, unknown, unknown][] = [
      ["/v1/chat/completions", { ...chat, stream: true }, openai],
      ["/v1/completions", { prompt: "x", stream: true }, openai],
      ["/v1/responses", { input: "hi", stream: true }, openai],
      ["/v1/messages", { ...anthropic, stream: true }, anthropicError],
      ["/v1/messages/count_tokens", { model: "m", messages: anthropic.messages }, anthropicError],
    ];
    for (const [path, body, expected] of cases) {
      const response = await post(app, path, body);
      expect([path, response.status]).toEqual([path, 400]);
      expect(await response.json()).toEqual(expected);
    }
    expect(sent).toEqual([]);
  });
});
