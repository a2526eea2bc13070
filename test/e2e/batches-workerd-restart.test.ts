// A batch across a restart of `wrangler dev` (docs/decisions.md, "Batches"): the Worker is stopped
// mid-batch and started again on the same local state (D1, R2, Queue); the batch goes on, and
// every line is in the output file exactly once, in input order.
import { rmSync } from "node:fs";
import { join } from "node:path";
import OpenAI, { toFile } from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningSidecar } from "../../sidecar/start-sidecar.js";
import { ROOT } from "../../scripts/wrangler-dev.js";
import { chatLine, fileLines, jsonl, waitForBatch } from "../support/batches.js";
import { startTestSidecar } from "../support/sidecar.js";
import { startWrangler, type Wrangler } from "../support/wrangler.js";

const LINES = 40;
const stateName = `test-batches-${process.pid}`;
let sidecar: RunningSidecar;
let wrangler: Wrangler | undefined;
beforeAll(async () => {
  sidecar = await startTestSidecar({ sequences: 1, contextSize: 512 });
}, 90_000);
afterAll(async () => {
  await wrangler?.stop();
  await sidecar?.stop();
  rmSync(join(ROOT, ".wrangler", "state", stateName), { recursive: true, force: true });
});

describe("a batch across a restart of wrangler dev", () => {
  it("resumes on the same state: every line answered once", async () => {
    wrangler = await startWrangler({ SIDECAR_URL: sidecar.url }, { stateName });
    let client = new OpenAI({ baseURL: `${wrangler.url}/v1`, apiKey: "not-needed", maxRetries: 0 });
    const lines = Array.from({ length: LINES }, (_, i) => chatLine(`w-${i}`));
    const file = await client.files.create({
      file: await toFile(Buffer.from(jsonl(lines)), "in.jsonl"),
      purpose: "batch",
    });
    const created = await client.batches.create({
      input_file_id: file.id,
      endpoint: "/v1/chat/completions",
      completion_window: "24h",
    });
    for (;;) {
      const batch = await client.batches.retrieve(created.id);
      if ((batch.request_counts?.completed ?? 0) >= 3) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await wrangler.stop();
    wrangler = await startWrangler({ SIDECAR_URL: sidecar.url }, { stateName });
    client = new OpenAI({ baseURL: `${wrangler.url}/v1`, apiKey: "not-needed", maxRetries: 0 });
    const batch = await waitForBatch(client, created.id);
    expect(batch).toMatchObject({
      status: "completed",
      error_file_id: null,
      request_counts: { total: LINES, completed: LINES, failed: 0 },
    });
    const output = await fileLines(client, batch.output_file_id ?? null);
    expect(output.map((line) => line["custom_id"])).toEqual(lines.map((line) => line["custom_id"]));
  }, 180_000);
});
