// The Batch API under workerd (`wrangler dev` with its local D1, R2 and Queue) in front of a real
// sidecar running the scripted model, through the official `openai` and `@anthropic-ai/sdk`
// clients: the files in R2, the lines driven by the Queue's consumer (docs/contract.md, "Batches").
import Anthropic from "@anthropic-ai/sdk";
import OpenAI, { toFile } from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningSidecar } from "../../sidecar/start-sidecar.js";
import { chatLine, fileLines, jsonl, waitForBatch, waitForMessageBatch } from "../support/batches.js";
import { CHAT_REPLY } from "../support/scripted.js";
import { startTestSidecar } from "../support/sidecar.js";
import { startWrangler, type Wrangler } from "../support/wrangler.js";

let sidecar: RunningSidecar;
let wrangler: Wrangler;
let client: OpenAI;
beforeAll(async () => {
  sidecar = await startTestSidecar({ sequences: 2, contextSize: 1024 });
  wrangler = await startWrangler({ SIDECAR_URL: sidecar.url });
  client = new OpenAI({ baseURL: `${wrangler.url}/v1`, apiKey: "not-needed", maxRetries: 0 });
}, 90_000);
afterAll(async () => {
  await wrangler?.stop();
  await sidecar?.stop();
});

describe("batches under wrangler dev", () => {
  it("an OpenAI batch: the input file in R2, each line run by the Queue's consumer, the output and error " +
    "files", async () => {
    const lines = [
      chatLine("a"),
      { custom_id: "bad", method: "POST", url: "/v1/chat/completions", body: { model: "m" } },
      chatLine("b"),
    ];
    const text = jsonl(lines);
    const file = await client.files.create({ file: await toFile(Buffer.from(text), "in.jsonl"), purpose: "batch" });
    expect(file).toMatchObject({
      object: "file",
      bytes: Buffer.byteLength(text),
      filename: "in.jsonl",
      purpose: "batch",
    });
    expect(await (await client.files.content(file.id)).text()).toBe(text);
    const created = await client.batches.create({
      input_file_id: file.id,
      endpoint: "/v1/chat/completions",
      completion_window: "24h",
    });
    const batch = await waitForBatch(client, created.id);
    expect(batch).toMatchObject({ status: "completed", request_counts: { total: 3, completed: 2, failed: 1 } });
    const output = await fileLines(client, batch.output_file_id ?? null);
    expect(
      output.map((line) => [line["custom_id"], (line["response"] as { status_code: number }).status_code]),
    ).toEqual([
      ["a", 200],
      ["b", 200],
    ]);
    for (const line of output)
      expect((line["response"] as { body: OpenAI.ChatCompletion }).body.choices[0]?.message.content).toBe(CHAT_REPLY);
    const errors = await fileLines(client, batch.error_file_id ?? null);
    expect(
      errors.map((line) => [line["custom_id"], (line["response"] as { status_code: number }).status_code]),
    ).toEqual([["bad", 400]]);
  }, 60_000);

  it("an Anthropic message batch: results once ended", async () => {
    const anthropic = new Anthropic({ baseURL: wrangler.url, apiKey: "not-needed", maxRetries: 0 });
    const params = { model: "m", max_tokens: 64, messages: [{ role: "user" as const, content: "Hello!" }] };
    const created = await anthropic.messages.batches.create({ requests: [{ custom_id: "one", params }] });
    const batch = await waitForMessageBatch(anthropic, created.id);
    expect(batch.request_counts).toEqual({ processing: 0, succeeded: 1, errored: 0, canceled: 0, expired: 0 });
    const results: Anthropic.Messages.MessageBatchIndividualResponse[] = [];
    for await (const result of await anthropic.messages.batches.results(batch.id)) results.push(result);
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({
      custom_id: "one",
      result: { type: "succeeded", message: { type: "message", content: [{ type: "text", text: CHAT_REPLY }] } },
    });
  }, 60_000);
});
