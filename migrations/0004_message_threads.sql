-- Anthropic message threads kept by the server for /v1/messages (docs/contract.md, "Anthropic
-- message threads"). Applied as 0001 is: `wrangler d1 migrations apply` under workerd, at
-- start-up on Node.
--
-- One row per stored turn, named by its reply's message id: the turn's own messages and the reply,
-- and the turn it continued. A thread is read back by walking `parent` up to the turn that created
-- it, so every row stays the size of one turn.
CREATE TABLE thread_turns (
  -- The reply's id (`msg_…`): what `previous_message_id` names.
  id TEXT PRIMARY KEY,
  -- The key id that created it (`anonymous` without keys): no other key may see it.
  owner TEXT NOT NULL,
  -- The turn this one continued; NULL for the turn that created the thread.
  parent TEXT,
  -- Milliseconds since the Unix epoch.
  created_at INTEGER NOT NULL,
  -- The creating turn's `system` and `tools` (JSON object), which every later turn keeps; NULL on
  -- the turns that continue.
  fixed TEXT,
  -- The turn's messages as validated, then the reply as an assistant message (JSON array).
  messages TEXT NOT NULL
);
