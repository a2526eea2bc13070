// The Worker's FileStore: batch files in an R2 bucket (`FILES` in wrangler.toml), one object per
// key. Typed by the parts used, as store.ts types D1.
import type { FileStore } from "../../state/batches/store.js";

/** The part of an R2 bucket binding the file store uses. */
export interface R2BucketLike {
  put(key: string, value: string | Uint8Array): Promise<unknown>;
  get(key: string): Promise<{ readonly body: ReadableStream<Uint8Array> } | null>;
  delete(key: string): Promise<void>;
}

export function r2FileStore(bucket: R2BucketLike): FileStore {
  return {
    async put(key, body) {
      await bucket.put(key, body);
    },
    async get(key) {
      return (await bucket.get(key))?.body ?? undefined;
    },
    delete: (key) => bucket.delete(key),
  };
}
