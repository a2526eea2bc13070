// Batch helpers for the e2e tests (test/e2e/batches*.test.ts): an input file's text, and waiting
// for a batch to end by polling it through the official clients (no timed assertion: the test's
// own timeout bounds the wait).
import type Anthropic from "@anthropic-ai/sdk";
import type OpenAI from "openai";

/** JSONL text of `lines`. */
export const jsonl = (lines: readonly unknown[]): string => lines.map((line) => `${JSON.stringify(line)}\n`).join("");

/** A chat line for /v1/chat/completions. */
export const chatLine = (customId: string, content = "Hello!"): Record<string, unknown> => ({
  custom_id: customId,
  method: "POST",
  url: "/v1/chat/completions",
  body: { model: "m", messages: [{ role: "user", content }] },
});

const pause = () => new Promise((resolve) => setTimeout(resolve, 100));

/** The batch once its status is one of `statuses` (default: ended). */
export async function waitForBatch(
  client: OpenAI,
  id: string,
  statuses: readonly string[] = ["completed", "cancelled", "expired", "failed"],
): Promise<OpenAI.Batch> {
  for (;;) {
    const batch = await client.batches.retrieve(id);
    if (statuses.includes(batch.status)) return batch;
    await pause();
  }
}

/** The message batch once it has ended. */
export async function waitForMessageBatch(client: Anthropic, id: string): Promise<Anthropic.Messages.MessageBatch> {
  for (;;) {
    const batch = await client.messages.batches.retrieve(id);
    if (batch.processing_status === "ended") return batch;
    await pause();
  }
}

/** A JSONL file's lines, parsed. */
export async function fileLines(client: OpenAI, id: string | null): Promise<Record<string, unknown>[]> {
  if (id === null) return [];
  const text = await (await client.files.content(id)).text();
  return text
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}
