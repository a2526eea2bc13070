// The edge on either runtime, for suites run on both: on Node (SQLite in a temporary folder) or
// under workerd (`wrangler dev`, D1 with migrations/ applied, as `npm start` does), each with its
// own empty store, in front of sidecars the test file already runs.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe } from "vitest";
import { accessFromEnv, startNodeEdge } from "../../edge/hosts/node/main.js";
import { startWrangler } from "./wrangler.js";

export const RUNTIMES = ["node", "workerd"] as const;
export type Runtime = (typeof RUNTIMES)[number];

export interface RuntimeEdge {
  readonly runtime: Runtime;
  /** e.g. http://127.0.0.1:PORT */
  readonly url: string;
  stop(): Promise<void>;
}

/** Keys for an edge: `apiKeys` as API_KEYS, `adminKeys` as ADMIN_KEYS. */
export interface EdgeKeys {
  readonly apiKeys?: string;
  readonly adminKeys?: string;
}

/** The edge on `runtime` in front of one sidecar, or of several (SIDECAR_URLS); with keys, API_KEYS / ADMIN_KEYS. */
export async function startEdgeOn(
  runtime: Runtime,
  sidecarUrls: readonly string[],
  options: EdgeKeys = {},
): Promise<RuntimeEdge> {
  const [first = "", ...more] = sidecarUrls;
  const keys = {
    ...(options.apiKeys === undefined ? {} : { API_KEYS: options.apiKeys }),
    ...(options.adminKeys === undefined ? {} : { ADMIN_KEYS: options.adminKeys }),
  };
  if (runtime === "workerd") {
    const wrangler = await startWrangler({
      ...(more.length === 0 ? { SIDECAR_URL: first } : { SIDECAR_URLS: sidecarUrls.join(",") }),
      ...keys,
    });
    return { runtime, url: wrangler.url, stop: () => wrangler.stop() };
  }
  const dir = mkdtempSync(join(tmpdir(), "llm-edge-runtime-"));
  const urls = more.length === 0 ? {} : { sidecarUrls };
  const access = Object.keys(keys).length === 0 ? {} : { access: accessFromEnv(keys) };
  const edge = await startNodeEdge({
    sidecarUrl: first,
    ...urls,
    ...access,
    port: 0,
    storePath: join(dir, "store.sqlite"),
  });
  return {
    runtime,
    url: edge.url,
    async stop() {
      await edge.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * One suite run once per runtime (describe.each): each gets a fresh edge in front of
 * `sidecarUrls()` (read when the suite starts; with keys, keys on), and `body` reads it through `edge()`.
 */
export function describeOnRuntimes(
  title: string,
  sidecarUrls: () => readonly string[],
  body: (edge: () => RuntimeEdge) => void,
  options: EdgeKeys = {},
): void {
  describe.each(RUNTIMES)(`${title} (%s)`, (runtime) => {
    let edge: RuntimeEdge | undefined;
    beforeAll(async () => {
      edge = await startEdgeOn(runtime, sidecarUrls(), options);
    }, 120_000);
    afterAll(async () => {
      await edge?.stop();
    });
    body(() => {
      if (edge === undefined) throw new Error(`the edge on ${runtime} did not start`);
      return edge;
    });
  });
}
