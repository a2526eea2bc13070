-- Responses kept by the server for /v1/responses (docs/contract.md, "Stored responses"). Applied
-- as 0001 is: `wrangler d1 migrations apply` under workerd, at start-up on Node.
CREATE TABLE responses (
  id TEXT PRIMARY KEY,
  -- The key id that created it (`anonymous` without keys): no other key may see it.
  owner TEXT NOT NULL,
  -- Milliseconds since the Unix epoch.
  created_at INTEGER NOT NULL,
  -- The finished Response object, as it was answered (JSON).
  response TEXT NOT NULL,
  -- This request's own input items, with ids (JSON array); `instructions` are not among them.
  input_items TEXT NOT NULL,
  -- Every input item the model saw: the previous responses' input and output, then this
  -- request's own input (JSON array), so a chain is read in one row.
  context TEXT NOT NULL
);

-- Every stored input and output item, by id, for `item_reference` input items.
CREATE TABLE response_items (
  response_id TEXT NOT NULL,
  id TEXT NOT NULL,
  owner TEXT NOT NULL,
  item TEXT NOT NULL,
  PRIMARY KEY (response_id, id)
);

CREATE INDEX response_items_by_owner ON response_items (owner, id);
