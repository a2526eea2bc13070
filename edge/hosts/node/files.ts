// The Node edge's FileStores: batch files in a data folder (FILES_PATH), one file per key (a file's
// id, `results/<batch id>`), each written to a temporary name and renamed into place, so a crash
// never leaves half a file under its key; or in memory until the process ends (beside the
// `:memory:` store; tests).
import { createReadStream } from "node:fs";
import { mkdir, rename, rm, stat, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { Readable } from "node:stream";
import type { FileStore } from "../../state/batches/store.js";

/** Where `npm run edge` keeps batch files unless FILES_PATH says otherwise. */
export const DEFAULT_FILES_PATH = ".data/files";

/** Keys are ids the edge made (letters, digits, `-`, `_`, one `/`): never a path out of the folder. */
function pathOf(folder: string, key: string): string {
  if (!/^[A-Za-z0-9_-]+(\/[A-Za-z0-9_-]+)?$/.test(key)) throw new Error(`not a file key: ${key}`);
  return join(folder, key);
}

export function folderFileStore(folder: string): FileStore {
  return {
    async put(key, body) {
      const path = pathOf(folder, key);
      await mkdir(dirname(path), { recursive: true });
      const temporary = `${path}.${process.pid}.tmp`;
      await writeFile(temporary, body);
      await rename(temporary, path);
    },
    async get(key) {
      const path = pathOf(folder, key);
      try {
        await stat(path);
      } catch {
        return undefined;
      }
      return Readable.toWeb(createReadStream(path)) as ReadableStream<Uint8Array>;
    },
    async delete(key) {
      await rm(pathOf(folder, key), { force: true });
    },
  };
}

export function memoryFileStore(): FileStore {
  const files = new Map<string, Uint8Array>();
  return {
    put(key, body) {
      files.set(key, typeof body === "string" ? new TextEncoder().encode(body) : body);
      return Promise.resolve();
    },
    get(key) {
      const bytes = files.get(key);
      return Promise.resolve(
        bytes === undefined ? undefined : (new Response(bytes as Uint8Array<ArrayBuffer>).body ?? undefined),
      );
    },
    delete(key) {
      files.delete(key);
      return Promise.resolve();
    },
  };
}
