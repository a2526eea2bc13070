-- Conversations of OpenAI's Conversations API (/v1/conversations and the Responses `conversation`
-- parameter; docs/contract.md, "OpenAI conversations"). They hold Responses items, where /c1's
-- conversations (0001) hold chat messages: same ids (`conv_`), same owners, their own tables.
-- Applied as 0001 is: `wrangler d1 migrations apply` under workerd, at start-up on Node.
CREATE TABLE item_conversations (
  id TEXT PRIMARY KEY,
  -- The key id that created it (`anonymous` without keys): no other key may see it.
  owner TEXT NOT NULL,
  -- Milliseconds since the Unix epoch.
  created_at INTEGER NOT NULL,
  -- The metadata object (JSON): at most 16 string values.
  metadata TEXT NOT NULL,
  -- The position the next item gets; it only grows (a deleted item leaves a gap).
  next_seq INTEGER NOT NULL
);

-- One Responses item (its JSON, with its `id`) per row, in order.
CREATE TABLE conversation_items (
  conversation_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  id TEXT NOT NULL,
  item TEXT NOT NULL,
  PRIMARY KEY (conversation_id, seq)
);

-- By id: an item of a conversation, and `item_reference` items of the owner's conversations.
CREATE INDEX conversation_items_by_id ON conversation_items (id, conversation_id);
