-- Files and batches (docs/contract.md, "Batches"): OpenAI's Files and Batches and Anthropic's
-- Message Batches. A file's bytes are in the host's file store (R2 under workerd, a data folder on
-- Node); its row says whose it is. Applied as 0001 is.
CREATE TABLE files (
  id TEXT PRIMARY KEY,
  -- The key id that created it (`anonymous` without keys): no other key may see it.
  owner TEXT NOT NULL,
  -- Milliseconds since the Unix epoch.
  created_at INTEGER NOT NULL,
  filename TEXT NOT NULL,
  -- `batch` (uploaded), `batch_output` (a batch's output or error file).
  purpose TEXT NOT NULL,
  bytes INTEGER NOT NULL
);

CREATE INDEX files_by_owner ON files (owner, created_at);

CREATE TABLE batches (
  id TEXT PRIMARY KEY,
  owner TEXT NOT NULL,
  -- `openai` (/v1/batches) or `anthropic` (/v1/messages/batches).
  api TEXT NOT NULL,
  -- The route every line is answered by, e.g. `/v1/chat/completions`.
  endpoint TEXT NOT NULL,
  input_file_id TEXT,
  -- in_progress, finalizing, cancelling, completed, cancelled, expired.
  status TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  -- When each status was reached, by name (`in_progress_at`, …; JSON object, milliseconds).
  times TEXT NOT NULL,
  -- The caller's metadata (JSON object or null).
  metadata TEXT,
  output_file_id TEXT,
  error_file_id TEXT,
  total INTEGER NOT NULL,
  -- When a step of it last began (milliseconds): the queue's messages carry it, so a step sent
  -- by an older chain of messages finds it changed and stops; one untouched for a while is sent
  -- to the queue again when read (state/batches/runner.ts).
  touched_at INTEGER NOT NULL DEFAULT 0
);

CREATE INDEX batches_by_owner ON batches (owner, api, created_at);

-- One row per input line, keyed by its place in the input: a result is written in the same
-- statement that ends the line's `pending` state, so a line run twice is answered once.
CREATE TABLE batch_lines (
  batch_id TEXT NOT NULL,
  idx INTEGER NOT NULL,
  custom_id TEXT,
  -- The line's request body (JSON), or null for a malformed line (its result says why).
  body TEXT,
  -- pending, succeeded, failed, cancelled, expired.
  state TEXT NOT NULL,
  -- What the line was answered (JSON: status, request id, body; or a malformed line's error).
  result TEXT,
  -- How many times it was answered 500 and left pending (a sidecar that died mid-answer).
  attempts INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (batch_id, idx)
);

CREATE INDEX batch_lines_by_state ON batch_lines (batch_id, state, idx);
