// A fetch for https:// sidecars signed by a private CA (`SIDECAR_CA`), as deployments use.
import { readFileSync } from "node:fs";
import { Agent, fetch as undiciFetch } from "undici";
import type { FetchImpl } from "../sidecars/connection.js";

export function fetchTrusting(caFile: string): FetchImpl {
  const dispatcher = new Agent({ connect: { ca: readFileSync(caFile) } });
  return (input, init) => undiciFetch(input as never, { ...(init as object), dispatcher } as never) as unknown as Promise<Response>;
}
