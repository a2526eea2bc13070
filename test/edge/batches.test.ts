// Batches' own parts (docs/contract.md, "Batches"): an input checked whole at creation (the exact
// 400s, and malformed lines kept as error lines), the store's once-only line results on both
// drivers (D1 and SQLite), and every sidecar call a batch line makes marked PRIORITY_BATCH while
// the same request sent alone is interactive.
import { afterAll, describe, expect, it } from "vitest";
import { Priority } from "../../proto/gen/inference/v1/inference_pb.js";
import { InvalidRequestError } from "../../edge/base/errors.js";
import { openSqliteStore } from "../../edge/hosts/node/store.js";
import { MAX_BATCH_LINES, parseAnthropicRequests, parseOpenAiInput } from "../../edge/state/batches/input.js";
import { memoryFileStore } from "../../edge/hosts/node/files.js";
import { InProcessQueue } from "../../edge/hosts/node/queue.js";
import { newBatch } from "../../edge/state/batches/handler.js";
import { BASE, post, testApp } from "../support/app.js";
import { chatLine, jsonl } from "../support/batches.js";
import { storeDrivers } from "../support/store-drivers.js";

const CHAT = "/v1/chat/completions";

/** What `parse` throws, as the API's error fields. */
function refusal(parse: () => unknown): { message: string; param: string | null; code: string | null } {
  try {
    parse();
  } catch (error) {
    if (error instanceof InvalidRequestError) return { message: error.message, param: error.param, code: error.code };
    throw error;
  }
  throw new Error("no refusal");
}

describe("an OpenAI input file", () => {
  it("lines that are JSON but not requests are error lines; blank lines are skipped", () => {
    const text = [
      JSON.stringify(chatLine("a")),
      "",
      "[1]",
      '{"method":"POST"}',
      `{"custom_id":"g","method":"GET","url":"${CHAT}","body":{}}`,
      '{"custom_id":"u","method":"POST","body":{}}',
      `{"custom_id":"b","method":"POST","url":"${CHAT}","body":"x"}`,
    ].join("\n");
    const lines = parseOpenAiInput(text, CHAT, 1000);
    expect(lines.map((l) => [l.index, l.customId, l.state, l.result])).toEqual([
      [0, "a", "pending", null],
      [1, null, "failed", { error: { code: "invalid_request", message: "Line 3 is not a JSON object." } }],
      [2, null, "failed", { error: { code: "invalid_request", message: "Line 4 has no 'custom_id' string." } }],
      [3, "g", "failed", { error: { code: "invalid_request", message: "Line 5's 'method' must be 'POST'." } }],
      [4, "u", "failed", { error: { code: "invalid_request", message: "Line 6 has no 'url' string." } }],
      [5, "b", "failed", { error: { code: "invalid_request", message: "Line 7's 'body' must be a JSON object." } }],
    ]);
    expect(lines[0]?.body).toEqual(chatLine("a")["body"]);
  });

  it("refuses the whole input with a 400 that names the line", () => {
    const param = "input_file_id";
    expect(refusal(() => parseOpenAiInput("{}\nnope\n", CHAT, 1000))).toEqual({
      message: "The input file is not JSONL: line 2 is not JSON.",
      param,
      code: "invalid_jsonl",
    });
    expect(refusal(() => parseOpenAiInput(jsonl([chatLine("a")]), "/v1/embeddings", 1000))).toEqual({
      message: "Line 1's url '/v1/chat/completions' is not the batch's endpoint '/v1/embeddings'.",
      param,
      code: "mismatched_url",
    });
    expect(refusal(() => parseOpenAiInput(jsonl([chatLine("a"), chatLine("a")]), CHAT, 1000))).toEqual({
      message: "Line 2 repeats custom_id 'a'.",
      param,
      code: "duplicate_custom_id",
    });
    expect(refusal(() => parseOpenAiInput(jsonl([chatLine("a", "x".repeat(100))]), CHAT, 100))).toEqual({
      message: "Line 1 is over 100 bytes, the largest request body.",
      param,
      code: "line_too_large",
    });
    expect(refusal(() => parseOpenAiInput("\n \n", CHAT, 1000))).toEqual({
      message: "The input file holds no requests.",
      param,
      code: "empty_file",
    });
  });

  it(`holds at most ${MAX_BATCH_LINES} lines`, () => {
    const line = JSON.stringify({ custom_id: null, method: "POST", url: CHAT, body: {} });
    expect(parseOpenAiInput(`${line}\n`.repeat(MAX_BATCH_LINES), CHAT, 1000)).toHaveLength(MAX_BATCH_LINES);
    expect(refusal(() => parseOpenAiInput(`${line}\n`.repeat(MAX_BATCH_LINES + 1), CHAT, 1000))).toEqual({
      message: `A batch holds at most ${MAX_BATCH_LINES} requests; this one has ${MAX_BATCH_LINES + 1}.`,
      param: "input_file_id",
      code: "too_many_requests",
    });
  });
});

describe("Anthropic's requests", () => {
  const params = { model: "m", max_tokens: 8, messages: [] };
  it("each request a pending line; the 400s name the request", () => {
    expect(parseAnthropicRequests({ requests: [{ custom_id: "a-1", params }] }, 1000)).toEqual([
      { index: 0, customId: "a-1", body: params, state: "pending", result: null, attempts: 0 },
    ]);
    expect(refusal(() => parseAnthropicRequests({ requests: [] }, 1000))).toEqual({
      message: "requests: must be a non-empty array.",
      param: "requests",
      code: null,
    });
    expect(refusal(() => parseAnthropicRequests({ requests: [{ custom_id: "a b", params }] }, 1000))).toEqual({
      message: "requests.0.custom_id: must be 1 to 64 letters, digits, '_' or '-'.",
      param: "requests.0.custom_id",
      code: null,
    });
    expect(refusal(() => parseAnthropicRequests({ requests: [{ custom_id: "a" }] }, 1000))).toEqual({
      message: "requests.0.params: must be an object.",
      param: "requests.0.params",
      code: null,
    });
    expect(refusal(() => parseAnthropicRequests({ requests: [{ custom_id: "a", params }] }, 20))).toEqual({
      message: "requests.0.params: over 20 bytes, the largest request body.",
      param: "requests.0.params",
      code: "line_too_large",
    });
  });
});

describe("the store", () => {
  const drivers = storeDrivers();
  afterAll(() => drivers.close());

  it.each(["d1", "sqlite"] as const)(
    "%s: a line's result is written once, whoever writes it second",
    async (driver) => {
      const store = (await drivers.open[driver]()).batches;
      const batch = newBatch(
        { id: "batch_x", owner: "o", api: "openai", endpoint: CHAT, inputFileId: "file-1", metadata: null },
        45,
        1000,
      );
      await store.createBatch(
        batch,
        parseOpenAiInput(jsonl(Array.from({ length: 45 }, (_, i) => chatLine(`l${i}`))), CHAT, 1000),
      );
      const first = { status: 200, requestId: "req_1", body: { n: 1 } };
      expect(await store.finishLine("batch_x", 7, "succeeded", first)).toBe(true);
      expect(await store.finishLine("batch_x", 7, "failed", { status: 400, requestId: "req_2", body: {} })).toBe(false);
      expect((await store.lines("batch_x", 7, 8))[0]).toMatchObject({ state: "succeeded", result: first });
      await store.closePending("batch_x", "cancelled");
      expect(await store.counts("batch_x")).toEqual({ pending: 0, succeeded: 1, failed: 0, cancelled: 44, expired: 0 });
      expect(await store.moveBatch("batch_x", ["in_progress"], "cancelling", 2000)).toBe(true);
      expect(await store.moveBatch("batch_x", ["in_progress"], "finalizing", 3000)).toBe(false);
      expect((await store.getBatch("o", "batch_x"))?.times).toEqual({ in_progress_at: 1000, cancelling_at: 2000 });
      expect(await store.getBatch("other", "batch_x")).toBeUndefined();
      // A step goes on only with the token of the last one; a stale batch is claimed once.
      expect(await store.touchBatch("batch_x", 5000, { touchedAt: 999 })).toBe(false);
      expect(await store.touchBatch("batch_x", 5000, { touchedAt: 1000 })).toBe(true);
      expect(await store.touchBatch("batch_x", 6000, { before: 5000 })).toBe(false);
      expect(await store.touchBatch("batch_x", 6000, { before: 5001 })).toBe(true);
      expect((await store.batchById("batch_x"))?.touchedAt).toBe(6000);
    },
  );

  it.each(["d1", "sqlite"] as const)(
    "%s: lines of more than one INSERT's worth are stored whole, in order",
    async (driver) => {
      const store = (await drivers.open[driver]()).batches;
      const lines = parseOpenAiInput(
        jsonl(Array.from({ length: 5 }, (_, i) => chatLine(`big-${i}`, `${i}`.repeat(400_000)))),
        CHAT,
        1 << 20,
      );
      await store.createBatch(
        newBatch(
          { id: "batch_big", owner: "o", api: "openai", endpoint: CHAT, inputFileId: null, metadata: null },
          5,
          1000,
        ),
        lines,
      );
      expect(await store.lines("batch_big", 0, 5)).toEqual(lines);
    },
  );
});

/** A multipart upload of `text` as a batch file. */
function upload(text: string): Request {
  const form = new FormData();
  form.set("purpose", "batch");
  form.set("file", new File([text], "in.jsonl"));
  return new Request(`${BASE}/v1/files`, { method: "POST", body: form });
}

describe("uploads", () => {
  it("a multipart body over the largest file is a 413", async () => {
    const opened = openSqliteStore(":memory:");
    const { app } = testApp(undefined, {
      store: opened.store,
      batches: { files: memoryFileStore(), queue: new InProcessQueue(), maxFileBytes: 300 },
    });
    const response = await app.fetch(upload("x".repeat(300)));
    expect([response.status, await response.json()]).toEqual([
      413,
      {
        error: {
          message: "The request body is larger than the limit of 300 bytes.",
          type: "invalid_request_error",
          param: null,
          code: "request_too_large",
        },
      },
    ]);
    opened.close();
  });
});

describe("priority", () => {
  it("a batch line's sidecar call is PRIORITY_BATCH; the same request alone is interactive", async () => {
    const opened = openSqliteStore(":memory:");
    const { app, sidecar } = testApp(undefined, {
      store: opened.store,
      batches: { files: memoryFileStore(), queue: new InProcessQueue(), maxFileBytes: 1 << 20 },
      newId: () => crypto.randomUUID().replaceAll("-", ""),
    });
    await post(app, CHAT, { model: "m", messages: [{ role: "user", content: "Hi" }] });
    expect(sidecar.lastCall?.request.priority).toBe(Priority.INTERACTIVE);
    const file = (await (await app.fetch(upload(jsonl([chatLine("a")])))).json()) as { id: string };
    const created = (await (
      await post(app, "/v1/batches", { input_file_id: file.id, endpoint: CHAT, completion_window: "24h" })
    ).json()) as { id: string };
    for (;;) {
      const batch = (await (await app.fetch(new Request(`${BASE}/v1/batches/${created.id}`))).json()) as {
        status: string;
      };
      if (batch.status === "completed") break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(sidecar.calls.map((call) => call.request.priority)).toEqual([Priority.INTERACTIVE, Priority.BATCH]);
    app.batches?.stop();
    opened.close();
  });
});
