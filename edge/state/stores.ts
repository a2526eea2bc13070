// The state's features over one SQL driver, as the app holds them (AppOptions.store): /c1's
// conversations, stored responses, OpenAI conversations, Anthropic message threads, and files and
// batches (whose bytes and queue the host gives apart, AppOptions.batches). A host picks
// the driver: D1 under workerd (edge/hosts/worker/store.ts), SQLite on Node (edge/hosts/node/store.ts).
import { SqlBatchStore } from "./batches/sql.js";
import type { BatchStore } from "./batches/store.js";
import { SqlC1Store } from "./c1/sql.js";
import type { C1Store } from "./c1/store.js";
import { SqlConversationStore } from "./openai-conversations/sql.js";
import type { ConversationStore } from "./openai-conversations/store.js";
import { SqlResponseStore } from "./responses/sql.js";
import type { ResponseStore } from "./responses/store.js";
import type { SqlDriver } from "./store/driver.js";
import { SqlThreadStore } from "./threads/sql.js";
import type { ThreadStore } from "./threads/store.js";

/** What the edge keeps between requests, one store per feature. */
export interface Stores {
  readonly c1: C1Store;
  readonly responses: ResponseStore;
  readonly conversations: ConversationStore;
  readonly threads: ThreadStore;
  readonly batches: BatchStore;
}

/** Every feature's store in SQL over `driver`. */
export function sqlStores(driver: SqlDriver): Stores {
  return {
    c1: new SqlC1Store(driver),
    responses: new SqlResponseStore(driver),
    conversations: new SqlConversationStore(driver),
    threads: new SqlThreadStore(driver),
    batches: new SqlBatchStore(driver),
  };
}
