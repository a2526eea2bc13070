// What batches keep (docs/contract.md, "Batches"): file records, batches and their lines in the SQL
// store (sql.ts over either driver), a file's bytes in the host's FileStore (R2 under workerd, a
// data folder on Node), and how lines are driven (a BatchQueue: a Cloudflare Queue, or the
// in-process runner). Every owner-facing call names the owner: another owner's object is not found.

/** Where files' bytes live: the host's (`files.ts` of edge/hosts/node/ and edge/hosts/worker/). */
export interface FileStore {
  put(key: string, body: string | Uint8Array): Promise<void>;
  /** The bytes; undefined when there is no such key. */
  get(key: string): Promise<ReadableStream<Uint8Array> | undefined>;
  delete(key: string): Promise<void>;
}

/**
 * What drives a batch's lines: each `send` asks for one step of that batch (runner.ts), after
 * `delaySeconds`; `token` is the batch's `touchedAt` when it was sent (a queue that keeps messages
 * hands it back to the step, which goes on only if no other step began since).
 */
/**
 * What a step leaves: more lines to run, only lines to try later, or nothing (ended, unknown, or
 * another step began since its token); and the token for the next step.
 */
export type StepOutcome = "more" | "wait" | "done";

export interface Step {
  readonly outcome: StepOutcome;
  readonly token: number;
}

export interface BatchQueue {
  send(batchId: string, options?: { readonly delaySeconds?: number; readonly token?: number }): Promise<void>;
  /**
   * A queue that runs in the app's own process (the Node host's) is handed the runner's step here,
   * with where to report a step that failed; a queue outside it (a Cloudflare Queue) has no `serve`
   * and its consumer calls the runner itself.
   */
  serve?(step: (batchId: string) => Promise<Step>, report: (error: unknown) => void): void;
  /** Aborted when such a queue stops: the lines running take it. */
  readonly signal?: AbortSignal;
  /** Ends such a queue's loops; their lines stay pending for the next start. */
  stop?(): void;
}

/** What a file is for: a batch's input or output, or an image a request names by file_id (core/media/). */
export type FilePurpose = "batch" | "batch_output" | "vision" | "user_data" | "assistants";

/** The purposes POST /v1/files takes. */
export const UPLOAD_PURPOSES: readonly FilePurpose[] = ["batch", "vision", "user_data", "assistants"];

export interface FileRecord {
  readonly id: string;
  readonly owner: string;
  /** Milliseconds since the Unix epoch. */
  readonly createdAt: number;
  readonly filename: string;
  readonly purpose: FilePurpose;
  readonly bytes: number;
}

export type BatchApi = "openai" | "anthropic";

export type BatchStatus = "in_progress" | "finalizing" | "cancelling" | "completed" | "cancelled" | "expired";

/** A status that never changes again. */
export const isTerminal = (status: BatchStatus): boolean =>
  status === "completed" || status === "cancelled" || status === "expired";

export interface BatchRecord {
  readonly id: string;
  readonly owner: string;
  readonly api: BatchApi;
  readonly endpoint: string;
  readonly inputFileId: string | null;
  readonly status: BatchStatus;
  readonly createdAt: number;
  readonly expiresAt: number;
  /** When each status was reached (`in_progress_at`, `cancelling_at`, …), in milliseconds. */
  readonly times: Readonly<Record<string, number>>;
  readonly metadata: Readonly<Record<string, string>> | null;
  readonly outputFileId: string | null;
  readonly errorFileId: string | null;
  readonly total: number;
  /** When a step of it last began (ms). */
  readonly touchedAt: number;
}

export type LineState = "pending" | "succeeded" | "failed" | "cancelled" | "expired";

/** What a line was answered: the endpoint's HTTP answer, or why the line could not be sent. */
export type LineResult =
  | { readonly status: number; readonly requestId: string; readonly body: unknown }
  | { readonly error: { readonly code: string; readonly message: string } };

/** One input line as stored: a request body, or a malformed line's result already. */
export interface BatchLine {
  readonly index: number;
  readonly customId: string | null;
  readonly body: Readonly<Record<string, unknown>> | null;
  readonly state: LineState;
  readonly result: LineResult | null;
  /** How many times it was answered 500 and left pending (runner.ts). */
  readonly attempts: number;
}

export type LineCounts = Readonly<Record<LineState, number>>;

export interface Page<T> {
  readonly data: readonly T[];
  readonly hasMore: boolean;
}

export interface BatchStore {
  putFile(file: FileRecord): Promise<void>;
  getFile(owner: string, id: string): Promise<FileRecord | undefined>;
  /** Newest first (or oldest with `asc`), after the file `after`, at most `limit`. */
  listFiles(
    owner: string,
    options: { after?: string | undefined; limit: number; order: "asc" | "desc"; purpose?: string | undefined },
  ): Promise<Page<FileRecord>>;
  deleteFile(owner: string, id: string): Promise<boolean>;
  /** The batch and all its lines, whole or not at all. */
  createBatch(batch: BatchRecord, lines: readonly BatchLine[]): Promise<void>;
  getBatch(owner: string, id: string): Promise<BatchRecord | undefined>;
  /** A batch whoever owns it (the runner's). */
  batchById(id: string): Promise<BatchRecord | undefined>;
  /** Newest first, after the batch `after`, at most `limit`. */
  listBatches(
    owner: string,
    api: BatchApi,
    options: { after?: string | undefined; limit: number },
  ): Promise<Page<BatchRecord>>;
  /** Batches not ended yet, for a runner starting up. */
  unfinishedBatches(): Promise<string[]>;
  deleteBatch(owner: string, id: string): Promise<boolean>;
  counts(id: string): Promise<LineCounts>;
  /** Up to `limit` pending lines, in input order. */
  pendingLines(id: string, limit: number): Promise<BatchLine[]>;
  /** Lines `from` ≤ index < `to`, in input order. */
  lines(id: string, from: number, to: number): Promise<BatchLine[]>;
  /** Ends a pending line with its result; false when it had ended already (it is answered once). */
  finishLine(id: string, index: number, state: LineState, result: LineResult): Promise<boolean>;
  /**
   * Notes that a step begins at `now`: always without `when`, else only if the batch's
   * `touchedAt` is `when.touchedAt` (the step's token) or before `when.before` (a stale batch).
   */
  touchBatch(
    id: string,
    now: number,
    when?: { readonly touchedAt: number } | { readonly before: number },
  ): Promise<boolean>;
  /** Counts one more 500 for a pending line. */
  noteAttempt(id: string, index: number): Promise<void>;
  /** Ends every pending line with `state` (cancelled, expired). */
  closePending(id: string, state: "cancelled" | "expired"): Promise<void>;
  /**
   * Moves the batch to `status` if it is in one of `from`, noting `at` under `<status>_at` and
   * setting the given file ids; false when it was not.
   */
  moveBatch(
    id: string,
    from: readonly BatchStatus[],
    status: BatchStatus,
    at: number,
    files?: { output: string | null; error: string | null },
  ): Promise<boolean>;
}
