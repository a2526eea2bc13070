// Nothing lost, nothing twice (docs/decisions.md, "Batches"): the sidecar and the Node edge are
// killed (SIGKILL) mid-batch and started again on the same store and files folder; the batch goes
// on, and every line is in the output file exactly once, in input order, the counts adding up.
import Database from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI, { toFile } from "openai";
import { afterAll, describe, expect, it } from "vitest";
import { modelPath } from "../../gguf/models.js";
import { chatLine, fileLines, jsonl, waitForBatch } from "../support/batches.js";
import { startProcess, startSidecarProcess, type Started } from "../support/processes.js";
import { CHAT_REPLY } from "../support/scripted.js";

const LINES = 60;
const folder = mkdtempSync(join(tmpdir(), "batches-restart-"));
const started: Started[] = [];

async function startEdge(sidecarUrl: string): Promise<Started> {
  const env = {
    SIDECAR_URL: sidecarUrl,
    EDGE_PORT: "0",
    STORE_PATH: join(folder, "store.sqlite"),
    FILES_PATH: join(folder, "files"),
    LOG_REQUESTS: "false",
  };
  const edge = await startProcess(
    "node_modules/.bin/tsx",
    ["edge/hosts/node/main.ts"],
    env,
    /edge listening on (\S+)/,
    30_000,
  );
  started.push(edge);
  return edge;
}

async function startSidecar(): Promise<Started> {
  const sidecar = await startSidecarProcess(modelPath("scripted"), [
    "--sequences",
    "1",
    "--context-size",
    "512",
    "--threads",
    "1",
  ]);
  started.push(sidecar);
  return sidecar;
}

/** Polls until the batch has at least `count` lines answered. */
async function answered(client: OpenAI, id: string, count: number): Promise<void> {
  for (;;) {
    const batch = await client.batches.retrieve(id);
    if ((batch.request_counts?.completed ?? 0) >= count) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** SIGKILL to the process group, and its exit. */
async function kill(process: Started): Promise<void> {
  if (process.child.exitCode !== null || process.child.signalCode !== null || process.child.pid === undefined) return;
  const exited = new Promise((resolve) => process.child.once("exit", resolve));
  globalThis.process.kill(-process.child.pid, "SIGKILL");
  await exited;
}

afterAll(async () => {
  for (const process of started) await kill(process);
  rmSync(folder, { recursive: true, force: true });
});

/** A client of the edge at `url`. */
function clientOf(url: string): OpenAI {
  return new OpenAI({ baseURL: `${url}/v1`, apiKey: "not-needed", maxRetries: 0 });
}

/** A batch of LINES chat lines whose custom ids start with `prefix`, created and running. */
async function createBatch(client: OpenAI, prefix: string): Promise<{ id: string; lines: Record<string, unknown>[] }> {
  const lines = Array.from({ length: LINES }, (_, i) => chatLine(`${prefix}-${i}`));
  const file = await client.files.create({
    file: await toFile(Buffer.from(jsonl(lines)), "in.jsonl"),
    purpose: "batch",
  });
  const created = await client.batches.create({
    input_file_id: file.id,
    endpoint: "/v1/chat/completions",
    completion_window: "24h",
  });
  return { id: created.id, lines };
}

/** The batch ends completed, every line once, in input order; its output lines. */
async function expectEveryLineOnce(
  client: OpenAI,
  id: string,
  lines: Record<string, unknown>[],
): Promise<Record<string, unknown>[]> {
  const batch = await waitForBatch(client, id);
  expect(batch).toMatchObject({
    status: "completed",
    error_file_id: null,
    request_counts: { total: LINES, completed: LINES, failed: 0 },
  });
  const output = await fileLines(client, batch.output_file_id ?? null);
  expect(output.map((line) => line["custom_id"])).toEqual(lines.map((line) => line["custom_id"]));
  expect(new Set(output.map((line) => line["id"])).size).toBe(LINES);
  return output;
}

describe("a batch across a restart of the edge and the sidecar", () => {
  it("resumes: every line answered exactly once, in input order", async () => {
    let sidecar = await startSidecar();
    let edge = await startEdge(sidecar.url);
    let client = clientOf(edge.url);
    const { id, lines } = await createBatch(client, "line");
    // Mid-batch: some lines answered; then the sidecar dies (the lines left wait for it), then the edge.
    await answered(client, id, 3);
    await kill(sidecar);
    const during = await client.batches.retrieve(id);
    expect(during.status).toBe("in_progress");
    expect(during.request_counts?.failed).toBe(0);
    expect(during.request_counts?.completed ?? LINES).toBeLessThan(LINES);
    await kill(edge);

    sidecar = await startSidecar();
    edge = await startEdge(sidecar.url);
    client = clientOf(edge.url);
    const output = await expectEveryLineOnce(client, id, lines);
    for (const line of output)
      expect((line["response"] as { body: OpenAI.ChatCompletion }).body.choices[0]?.message.content).toBe(CHAT_REPLY);
  }, 120_000);

  it("the edge killed while lines run: those lines are run again and answered once", async () => {
    const sidecar = await startSidecar();
    let edge = await startEdge(sidecar.url);
    let client = clientOf(edge.url);
    const { id, lines } = await createBatch(client, "again");
    await answered(client, id, 3);
    await kill(edge);
    // Killed mid-batch: lines were left pending in the store.
    const db = new Database(join(folder, "store.sqlite"), { readonly: true });
    const pending = db
      .prepare("SELECT COUNT(*) AS n FROM batch_lines WHERE batch_id = ? AND state = 'pending'")
      .get(id) as { n: number };
    db.close();
    expect(pending.n).toBeGreaterThan(0);
    edge = await startEdge(sidecar.url);
    client = clientOf(edge.url);
    await expectEveryLineOnce(client, id, lines);
  }, 120_000);
});
