// A FileStore in memory: files kept until the process ends (the Node edge's default beside its
// `:memory:` store; tests).
import type { FileStore } from "./store.js";

export function memoryFileStore(): FileStore {
  const files = new Map<string, Uint8Array>();
  return {
    put(key, body) {
      files.set(key, typeof body === "string" ? new TextEncoder().encode(body) : body);
      return Promise.resolve();
    },
    get(key) {
      const bytes = files.get(key);
      return Promise.resolve(bytes === undefined ? undefined : (new Response(bytes as Uint8Array<ArrayBuffer>).body ?? undefined));
    },
    delete(key) {
      files.delete(key);
      return Promise.resolve();
    },
  };
}
