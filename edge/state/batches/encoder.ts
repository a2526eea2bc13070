// The wire shapes of batches (docs/contract.md, "Batches"): OpenAI's File and Batch objects and
// output/error lines, Anthropic's MessageBatch and result lines, built from the stored records.
import type { BatchLine, BatchRecord, FileRecord, LineCounts } from "./store.js";

const seconds = (ms: number | undefined): number | null => (ms === undefined ? null : Math.floor(ms / 1000));
const rfc3339 = (ms: number | undefined): string | null => (ms === undefined ? null : new Date(ms).toISOString());

/** The random part of an id (`batch_abc` → `abc`). */
export const suffixOf = (id: string): string => id.slice(id.indexOf("_") + 1);

/** OpenAI's File object. */
export function fileObject(file: FileRecord): Record<string, unknown> {
  return {
    id: file.id,
    object: "file",
    bytes: file.bytes,
    created_at: seconds(file.createdAt),
    expires_at: null,
    filename: file.filename,
    purpose: file.purpose,
    status: "processed",
    status_details: null,
  };
}

/** OpenAI's Batch object. */
export function batchObject(batch: BatchRecord, counts: LineCounts): Record<string, unknown> {
  const at = (status: string) => seconds(batch.times[`${status}_at`]);
  const failed = counts.failed + counts.cancelled + counts.expired;
  return {
    id: batch.id,
    object: "batch",
    endpoint: batch.endpoint,
    errors: null,
    input_file_id: batch.inputFileId,
    completion_window: "24h",
    status: batch.status,
    output_file_id: batch.outputFileId,
    error_file_id: batch.errorFileId,
    created_at: seconds(batch.createdAt),
    in_progress_at: at("in_progress"),
    expires_at: seconds(batch.expiresAt),
    finalizing_at: at("finalizing"),
    completed_at: at("completed"),
    failed_at: null,
    expired_at: at("expired"),
    cancelling_at: at("cancelling"),
    cancelled_at: at("cancelled"),
    request_counts: { total: batch.total, completed: counts.succeeded, failed },
    metadata: batch.metadata,
  };
}

/** Anthropic's MessageBatch object; `origin` makes `results_url` absolute. */
export function messageBatchObject(batch: BatchRecord, counts: LineCounts, origin: string): Record<string, unknown> {
  const ended = batch.times["completed_at"] ?? batch.times["cancelled_at"] ?? batch.times["expired_at"];
  const processing = batch.status === "cancelling" ? "canceling" : ended === undefined ? "in_progress" : "ended";
  return {
    id: batch.id,
    type: "message_batch",
    processing_status: processing,
    request_counts: {
      processing: counts.pending,
      succeeded: counts.succeeded,
      errored: counts.failed,
      canceled: counts.cancelled,
      expired: counts.expired,
    },
    ended_at: rfc3339(ended),
    created_at: rfc3339(batch.createdAt),
    expires_at: rfc3339(batch.expiresAt),
    archived_at: null,
    cancel_initiated_at: rfc3339(batch.times["cancelling_at"]),
    results_url: ended === undefined ? null : `${origin}/v1/messages/batches/${batch.id}/results`,
  };
}

/** Why an ended line without an answer has none, in OpenAI's error-line shape. */
const CLOSED = {
  cancelled: { code: "batch_cancelled", message: "The batch was cancelled before this request was sent." },
  expired: {
    code: "batch_expired",
    message: "This request could not be executed before the completion window expired.",
  },
} as const;

/** An ended line as OpenAI writes it, and which file it goes to (2xx answers: the output file). */
export function openAiLine(
  batchId: string,
  line: BatchLine,
): { readonly file: "output" | "error"; readonly text: string } {
  const base = { id: `batch_req_${suffixOf(batchId)}_${line.index}`, custom_id: line.customId };
  const result = line.result;
  if (result !== null && "status" in result) {
    const response = { status_code: result.status, request_id: result.requestId, body: result.body };
    const file = result.status >= 200 && result.status < 300 ? "output" : "error";
    return { file, text: JSON.stringify({ ...base, response, error: null }) };
  }
  const error = result !== null ? result.error : line.state === "expired" ? CLOSED.expired : CLOSED.cancelled;
  return { file: "error", text: JSON.stringify({ ...base, response: null, error }) };
}

/** An ended line as Anthropic writes it in a batch's results. */
export function anthropicLine(line: BatchLine): string {
  const result = line.result;
  const answered = result !== null && "status" in result ? result : undefined;
  const outcome =
    line.state === "succeeded" && answered !== undefined
      ? { type: "succeeded", message: answered.body }
      : line.state === "cancelled"
        ? { type: "canceled" }
        : line.state === "expired"
          ? { type: "expired" }
          : {
              type: "errored",
              error: answered?.body ?? {
                type: "error",
                error: {
                  type: "invalid_request_error",
                  message: result !== null && "error" in result ? result.error.message : "",
                },
              },
            };
  return JSON.stringify({ custom_id: line.customId, result: outcome });
}
