// A batch's 24 h completion window and its owner (docs/contract.md, "Batches"), on the Node edge
// with the official clients: lines the sidecar could not take stay pending (never error lines), and
// once the window has passed (the edge's clock moved on) they are expired; another key sees
// neither the files nor the batches of a key.
import Anthropic from "@anthropic-ai/sdk";
import OpenAI, { toFile, type APIError } from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chatLine, fileLines, jsonl, waitForBatch, waitForMessageBatch } from "../support/batches.js";
import { startStack, type Stack } from "../support/edge.js";

const DAY_MS = 24 * 60 * 60 * 1000;
let shiftMs = 0;
let stack: Stack;
const clientOf = (apiKey: string) => new OpenAI({ baseURL: stack.baseURL, apiKey, maxRetries: 0 });
beforeAll(async () => {
  stack = await startStack({}, { now: () => Date.now() + shiftMs, access: { apiKeys: "key-a,key-b" } });
});
afterAll(async () => {
  await stack?.stop();
});

describe("owners", () => {
  it("another key's files and batches are not found", async () => {
    const [a, b] = [clientOf("key-a"), clientOf("key-b")];
    const file = await a.files.create({
      file: await toFile(Buffer.from(jsonl([chatLine("x")])), "in.jsonl"),
      purpose: "batch",
    });
    const batch = await a.batches.create({
      input_file_id: file.id,
      endpoint: "/v1/chat/completions",
      completion_window: "24h",
    });
    expect(((await b.files.retrieve(file.id).catch((e: unknown) => e)) as APIError).status).toBe(404);
    expect(((await b.files.content(file.id).catch((e: unknown) => e)) as APIError).status).toBe(404);
    expect(((await b.batches.retrieve(batch.id).catch((e: unknown) => e)) as APIError).status).toBe(404);
    expect(
      (
        (await b.batches
          .create({ input_file_id: file.id, endpoint: "/v1/chat/completions", completion_window: "24h" })
          .catch((e: unknown) => e)) as APIError
      ).status,
    ).toBe(404);
    expect((await b.files.list()).data.map((f) => f.id)).not.toContain(file.id);
    expect((await b.batches.list()).data.map((f) => f.id)).not.toContain(batch.id);
    expect((await waitForBatch(a, batch.id)).status).toBe("completed");
  });
});

describe("expiry", () => {
  it("lines the sidecar cannot take stay pending; after 24 h they are expired, in the error file and the " +
    "results", async () => {
    const client = clientOf("key-a");
    const anthropic = new Anthropic({ baseURL: stack.edge.url, apiKey: "key-a", maxRetries: 0 });
    const file = await client.files.create({
      file: await toFile(Buffer.from(jsonl([chatLine("p"), chatLine("q")])), "in.jsonl"),
      purpose: "batch",
    });
    await stack.sidecar.stop();
    const created = await client.batches.create({
      input_file_id: file.id,
      endpoint: "/v1/chat/completions",
      completion_window: "24h",
    });
    const params = { model: "m", max_tokens: 8, messages: [{ role: "user" as const, content: "Hi" }] };
    const message = await anthropic.messages.batches.create({ requests: [{ custom_id: "r", params }] });
    expect(await client.batches.retrieve(created.id)).toMatchObject({
      status: "in_progress",
      request_counts: { total: 2, completed: 0, failed: 0 },
    });
    shiftMs = DAY_MS + 1000;
    const batch = await waitForBatch(client, created.id);
    expect(batch).toMatchObject({
      status: "expired",
      output_file_id: null,
      request_counts: { total: 2, completed: 0, failed: 2 },
    });
    expect(batch.expired_at).toEqual(expect.any(Number));
    const expired = {
      code: "batch_expired",
      message: "This request could not be executed before the completion window expired.",
    };
    expect(
      (await fileLines(client, batch.error_file_id ?? null)).map((l) => [l["custom_id"], l["response"], l["error"]]),
    ).toEqual([
      ["p", null, expired],
      ["q", null, expired],
    ]);
    const ended = await waitForMessageBatch(anthropic, message.id);
    expect(ended.request_counts).toEqual({ processing: 0, succeeded: 0, errored: 0, canceled: 0, expired: 1 });
    const results: Anthropic.Messages.MessageBatchIndividualResponse[] = [];
    for await (const result of await anthropic.messages.batches.results(ended.id)) results.push(result);
    expect(results).toEqual([{ custom_id: "r", result: { type: "expired" } }]);
  }, 60_000);
});
