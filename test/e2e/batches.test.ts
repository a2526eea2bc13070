// The Batch API on the Node edge (docs/contract.md, "Batches") through the official `openai` and
// `@anthropic-ai/sdk` clients, against a real sidecar running the scripted model: files.create,
// batches.create / retrieve / list / cancel, files.content, messages.batches.*; each line's body
// exactly what its endpoint answers alone.
import Anthropic from "@anthropic-ai/sdk";
import OpenAI, { toFile, type APIError } from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chatLine, fileLines, jsonl, waitForBatch, waitForMessageBatch } from "../support/batches.js";
import { startStack, type Stack } from "../support/edge.js";
import { CHAT_REPLY, CHAT_REPLY_TOKENS, STORY, chatPromptTokens } from "../support/scripted.js";

let stack: Stack;
let client: OpenAI;
let anthropic: Anthropic;
beforeAll(async () => {
  stack = await startStack();
  client = new OpenAI({ baseURL: stack.baseURL, apiKey: "not-needed", maxRetries: 0 });
  anthropic = new Anthropic({ baseURL: stack.edge.url, apiKey: "not-needed", maxRetries: 0 });
});
afterAll(async () => {
  await stack?.stop();
});

const upload = async (text: string, name = "input.jsonl") =>
  client.files.create({ file: await toFile(Buffer.from(text), name), purpose: "batch" });

describe("files", () => {
  it("files.create keeps a batch input file: retrieve, list, content and delete", async () => {
    const text = jsonl([chatLine("a")]);
    const file = await upload(text);
    expect(file).toEqual({
      id: expect.stringMatching(/^file-/),
      object: "file",
      bytes: Buffer.byteLength(text),
      created_at: expect.any(Number),
      expires_at: null,
      filename: "input.jsonl",
      purpose: "batch",
      status: "processed",
      status_details: null,
    });
    expect(await client.files.retrieve(file.id)).toEqual(file);
    expect((await client.files.list()).data.map((f) => f.id)).toContain(file.id);
    expect(await (await client.files.content(file.id)).text()).toBe(text);
    expect(await client.files.delete(file.id)).toEqual({ id: file.id, object: "file", deleted: true });
    const error = (await client.files.retrieve(file.id).catch((e: unknown) => e)) as APIError;
    expect([error.status, error.error]).toEqual([
      404,
      {
        message: `No such File object: ${file.id}`,
        type: "invalid_request_error",
        param: "id",
        code: "file_not_found",
      },
    ]);
  });

  it("a purpose other than batch or an image's is a 400", async () => {
    const error = (await client.files
      .create({ file: await toFile(Buffer.from("{}\n"), "x.jsonl"), purpose: "fine-tune" })
      .catch((e: unknown) => e)) as APIError;
    expect([error.status, error.error]).toEqual([
      400,
      {
        message:
          "'purpose' must be one of 'batch', 'vision', 'user_data', 'assistants': 'batch' for a batch's input, the " +
          "others for images a request names by file_id.",
        type: "invalid_request_error",
        param: "purpose",
        code: null,
      },
    ]);
  });
});

describe("batches on /v1/chat/completions", () => {
  it(
    "runs every line: the output file holds each answer as the endpoint gives it alone, the error file the " + "rest",
    async () => {
      const lines = [
        chatLine("first"),
        { custom_id: "no-messages", method: "POST", url: "/v1/chat/completions", body: { model: "m" } },
        { custom_id: "get", method: "GET", url: "/v1/chat/completions", body: {} },
        chatLine("second"),
      ];
      const file = await upload(jsonl(lines));
      const created = await client.batches.create({
        input_file_id: file.id,
        endpoint: "/v1/chat/completions",
        completion_window: "24h",
        metadata: { run: "one" },
      });
      expect(created).toMatchObject({
        object: "batch",
        endpoint: "/v1/chat/completions",
        errors: null,
        input_file_id: file.id,
        completion_window: "24h",
        status: "in_progress",
        metadata: { run: "one" },
        request_counts: { total: 4 },
      });
      expect(created.id).toMatch(/^batch_/);
      const batch = await waitForBatch(client, created.id);
      expect(batch).toMatchObject({ status: "completed", request_counts: { total: 4, completed: 2, failed: 2 } });
      for (const at of ["created_at", "in_progress_at", "finalizing_at", "completed_at", "expires_at"] as const)
        expect(batch[at]).toEqual(expect.any(Number));
      expect(batch.expires_at).toBe((batch.created_at ?? 0) + 24 * 3600);
      const direct = await client.chat.completions.create({
        model: "m",
        messages: [{ role: "user", content: "Hello!" }],
      });
      const output = await fileLines(client, batch.output_file_id ?? null);
      expect(output.map((line) => line["custom_id"])).toEqual(["first", "second"]);
      const input = await chatPromptTokens(stack.sidecar.url, "Hello!");
      for (const line of output) {
        expect(line).toEqual({
          id: expect.stringMatching(/^batch_req_/),
          custom_id: line["custom_id"],
          response: {
            status_code: 200,
            request_id: expect.stringMatching(/^req_/),
            body: {
              ...direct,
              id: expect.stringMatching(/^chatcmpl-/),
              created: expect.any(Number),
              // How much of the prompt the sidecar found cached differs from run to run.
              usage: { ...direct.usage, prompt_tokens_details: { cached_tokens: expect.any(Number) } },
            },
          },
          error: null,
        });
        expect((line["response"] as { body: OpenAI.ChatCompletion }).body.choices[0]?.message.content).toBe(CHAT_REPLY);
        expect((line["response"] as { body: OpenAI.ChatCompletion }).body.usage).toMatchObject({
          prompt_tokens: input,
          completion_tokens: CHAT_REPLY_TOKENS,
        });
      }
      const errors = await fileLines(client, batch.error_file_id ?? null);
      expect(errors).toEqual([
        {
          id: expect.stringMatching(/^batch_req_/),
          custom_id: "no-messages",
          response: {
            status_code: 400,
            request_id: expect.stringMatching(/^req_/),
            body: {
              error: {
                message: expect.stringContaining("messages"),
                type: "invalid_request_error",
                param: "messages",
                code: null,
              },
            },
          },
          error: null,
        },
        {
          id: expect.stringMatching(/^batch_req_/),
          custom_id: "get",
          response: null,
          error: { code: "invalid_request", message: "Line 3's 'method' must be 'POST'." },
        },
      ]);
      expect((await client.files.retrieve(batch.output_file_id ?? "")).purpose).toBe("batch_output");
      expect((await client.batches.list()).data.map((b) => b.id)).toContain(batch.id);
    },
  );

  it("cancel: the lines not answered yet are cancelled; every line is in one file, once", async () => {
    const lines = Array.from({ length: 12 }, (_, i) => chatLine(`line-${i}`));
    const file = await upload(jsonl(lines));
    const created = await client.batches.create({
      input_file_id: file.id,
      endpoint: "/v1/chat/completions",
      completion_window: "24h",
    });
    const cancelling = await client.batches.cancel(created.id);
    expect(["cancelling", "cancelled"]).toContain(cancelling.status);
    const batch = await waitForBatch(client, created.id);
    expect(batch.status).toBe("cancelled");
    expect(batch.cancelling_at).toEqual(expect.any(Number));
    expect(batch.cancelled_at).toEqual(expect.any(Number));
    const output = await fileLines(client, batch.output_file_id ?? null);
    const errors = await fileLines(client, batch.error_file_id ?? null);
    expect([...output, ...errors].map((l) => l["custom_id"]).sort()).toEqual(lines.map((l) => l["custom_id"]).sort());
    expect(batch.request_counts).toEqual({ total: 12, completed: output.length, failed: errors.length });
    for (const line of errors)
      expect(line["error"]).toEqual({
        code: "batch_cancelled",
        message: "The batch was cancelled before this request was sent.",
      });
  });
});

describe("batches on /v1/completions and /v1/responses", () => {
  it("each body is the one the endpoint answers alone", async () => {
    const completion = { model: "m", prompt: "Once upon a time", max_tokens: 32 };
    const file = await upload(jsonl([{ custom_id: "c", method: "POST", url: "/v1/completions", body: completion }]));
    const created = await client.batches.create({
      input_file_id: file.id,
      endpoint: "/v1/completions",
      completion_window: "24h",
    });
    const [line] = (await fileLines(client, (await waitForBatch(client, created.id)).output_file_id ?? null)).map(
      (l) => l["response"] as { body: OpenAI.Completion },
    );
    expect(line?.body.choices[0]?.text).toBe(STORY);
    const direct = await client.completions.create(completion);
    expect(line?.body).toEqual({
      ...direct,
      id: expect.stringMatching(/^cmpl-/),
      created: expect.any(Number),
      usage: expect.any(Object),
    });

    const responseBody = { model: "m", input: "Hello!", store: false };
    const input = await upload(jsonl([{ custom_id: "r", method: "POST", url: "/v1/responses", body: responseBody }]));
    const batch = await client.batches.create({
      input_file_id: input.id,
      endpoint: "/v1/responses",
      completion_window: "24h",
    });
    const [answer] = (await fileLines(client, (await waitForBatch(client, batch.id)).output_file_id ?? null)).map(
      (l) => l["response"] as { body: OpenAI.Responses.Response },
    );
    expect(answer?.body).toMatchObject({
      object: "response",
      status: "completed",
      store: false,
      output: [{ type: "message", content: [{ type: "output_text", text: CHAT_REPLY }] }],
    });
  });
});

describe("batches on /v1/embeddings", () => {
  it("each vector is the one /v1/embeddings answers", async () => {
    const body = { model: "m", input: "Hello!", encoding_format: "float" as const };
    const file = await upload(jsonl([{ custom_id: "e", method: "POST", url: "/v1/embeddings", body }]));
    const created = await client.batches.create({
      input_file_id: file.id,
      endpoint: "/v1/embeddings",
      completion_window: "24h",
    });
    const batch = await waitForBatch(client, created.id);
    const lines = await fileLines(client, batch.output_file_id ?? null);
    expect(lines.map((line) => (line["response"] as { body: unknown }).body)[0]).toEqual(
      await client.embeddings.create(body),
    );
  });
});

describe("creation checks (400)", () => {
  const refusal = async (text: string, endpoint = "/v1/chat/completions") => {
    const file = await upload(text);
    const error = (await client.batches
      .create({ input_file_id: file.id, endpoint: endpoint as "/v1/chat/completions", completion_window: "24h" })
      .catch((e: unknown) => e)) as APIError;
    return [error.status, error.error];
  };

  it("an input that is not JSONL", async () => {
    expect(await refusal(`${JSON.stringify(chatLine("a"))}\nnot json\n`)).toEqual([
      400,
      {
        message: "The input file is not JSONL: line 2 is not JSON.",
        type: "invalid_request_error",
        param: "input_file_id",
        code: "invalid_jsonl",
      },
    ]);
  });

  it("a line whose url is not the batch's endpoint", async () => {
    expect(await refusal(jsonl([chatLine("a")]), "/v1/embeddings")).toEqual([
      400,
      {
        message: "Line 1's url '/v1/chat/completions' is not the batch's endpoint '/v1/embeddings'.",
        type: "invalid_request_error",
        param: "input_file_id",
        code: "mismatched_url",
      },
    ]);
  });

  it("an endpoint batches do not serve", async () => {
    expect(await refusal(jsonl([chatLine("a")]), "/v1/moderations")).toEqual([
      400,
      {
        message:
          "'endpoint' must be one of '/v1/chat/completions', '/v1/completions', '/v1/responses', '/v1/embeddings'.",
        type: "invalid_request_error",
        param: "endpoint",
        code: "invalid_endpoint",
      },
    ]);
  });
});

describe("messages.batches (Anthropic)", () => {
  it("create, retrieve, list and results: each message as /v1/messages answers it alone", async () => {
    const params = { model: "m", max_tokens: 64, messages: [{ role: "user" as const, content: "Hello!" }] };
    const created = await anthropic.messages.batches.create({
      requests: [
        { custom_id: "ok", params },
        { custom_id: "bad", params: { ...params, max_tokens: -1 } },
      ],
    });
    expect(created).toMatchObject({
      type: "message_batch",
      processing_status: "in_progress",
      request_counts: { processing: 2, succeeded: 0, errored: 0, canceled: 0, expired: 0 },
      ended_at: null,
      archived_at: null,
      cancel_initiated_at: null,
      results_url: null,
    });
    expect(created.id).toMatch(/^msgbatch_/);
    const batch = await waitForMessageBatch(anthropic, created.id);
    expect(batch.request_counts).toEqual({ processing: 0, succeeded: 1, errored: 1, canceled: 0, expired: 0 });
    expect(batch.results_url).toBe(`${stack.edge.url}/v1/messages/batches/${batch.id}/results`);
    const direct = await anthropic.messages.create(params);
    const results: Anthropic.Messages.MessageBatchIndividualResponse[] = [];
    for await (const result of await anthropic.messages.batches.results(batch.id)) results.push(result);
    expect(results.map((r) => r.custom_id)).toEqual(["ok", "bad"]);
    // The same message but for its id and how much of the prompt the sidecar found cached.
    const cacheFree = (usage: Anthropic.Messages.Usage) => ({
      ...usage,
      input_tokens: usage.input_tokens + (usage.cache_read_input_tokens ?? 0),
      cache_read_input_tokens: 0,
    });
    const succeeded = results[0]?.result as Anthropic.Messages.MessageBatchSucceededResult;
    expect(succeeded.type).toBe("succeeded");
    expect({ ...succeeded.message, usage: cacheFree(succeeded.message.usage) }).toEqual({
      ...direct,
      id: expect.stringMatching(/^msg_/),
      usage: cacheFree(direct.usage),
    });
    expect(results[1]?.result).toEqual({
      type: "errored",
      error: {
        type: "error",
        error: { type: "invalid_request_error", message: expect.stringContaining("max_tokens") },
      },
    });
    expect((await anthropic.messages.batches.list()).data.map((b) => b.id)).toContain(batch.id);
    expect(await anthropic.messages.batches.delete(batch.id)).toEqual({ id: batch.id, type: "message_batch_deleted" });
  });

  it("cancel: the requests not answered yet are canceled; every request has one result", async () => {
    const params = { model: "m", max_tokens: 64, messages: [{ role: "user" as const, content: "Hello!" }] };
    const requests = Array.from({ length: 12 }, (_, i) => ({ custom_id: `c${i}`, params }));
    const created = await anthropic.messages.batches.create({ requests });
    const canceling = await anthropic.messages.batches.cancel(created.id);
    expect(["canceling", "ended"]).toContain(canceling.processing_status);
    expect(canceling.cancel_initiated_at).toEqual(expect.any(String));
    const batch = await waitForMessageBatch(anthropic, created.id);
    const results: Anthropic.Messages.MessageBatchIndividualResponse[] = [];
    for await (const result of await anthropic.messages.batches.results(batch.id)) results.push(result);
    expect(results.map((r) => r.custom_id)).toEqual(requests.map((r) => r.custom_id));
    const canceled = results.filter((r) => r.result.type === "canceled").length;
    const succeeded = results.filter((r) => r.result.type === "succeeded").length;
    expect(batch.request_counts).toEqual({ processing: 0, succeeded, errored: 0, canceled, expired: 0 });
    expect(succeeded + canceled).toBe(12);
  });

  it("a repeated custom_id is a 400 in Anthropic's shape", async () => {
    const params = { model: "m", max_tokens: 8, messages: [{ role: "user" as const, content: "Hi" }] };
    const error = (await anthropic.messages.batches
      .create({
        requests: [
          { custom_id: "a", params },
          { custom_id: "a", params },
        ],
      })
      .catch((e: unknown) => e)) as InstanceType<typeof Anthropic.APIError>;
    expect(error.status).toBe(400);
    expect(error.error).toEqual({
      type: "error",
      error: { type: "invalid_request_error", message: "requests.1.custom_id: 'a' is repeated." },
    });
  });
});
