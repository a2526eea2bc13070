-- Conversations kept by the server for /c1 (docs/contract.md, "Conversations"). Applied by
-- `wrangler d1 migrations apply` under workerd and at start-up on Node (edge/hosts/node/store.ts).
CREATE TABLE conversations (
  id TEXT PRIMARY KEY,
  -- The key id that created it (`anonymous` without keys): no other key may see it.
  owner TEXT NOT NULL,
  -- Milliseconds since the Unix epoch.
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  message_count INTEGER NOT NULL
);

CREATE INDEX conversations_by_owner ON conversations (owner, created_at DESC, id DESC);

-- One chat message (its chat-completions JSON) per row, in order.
CREATE TABLE conversation_messages (
  conversation_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  message TEXT NOT NULL,
  PRIMARY KEY (conversation_id, seq)
);
