// Node entry (`npm run edge`): the same fetch handler as the Worker, hosted by edge/node/
// (docs/decisions.md, "Web-only edge"). Only this file and edge/node/ may import Node modules.
//   SIDECAR_URL     gRPC-Web base URL of the sidecar (default http://127.0.0.1:50051)
//   SIDECAR_URLS    several sidecars, comma-separated (instead of SIDECAR_URL): requests are routed
//                   by model, conversation affinity and load, with failover (edge/sidecars/)
//   EDGE_PORT       port to listen on (default 8080; 0 picks a free one)
//   EDGE_HOST       address to bind (default 127.0.0.1)
//   MAX_BODY_BYTES  request body limit (default 4 MiB)
//   KEEP_ALIVE_MS   `: ping` after this much stream silence (default 10000; 0 disables)
//   API_KEYS        client keys, comma-separated, each a key or `sha256:<hex>`; unset: loopback only
//   ALLOW_OPEN      `true` serves any host without keys
//   CORS_ORIGINS    allowed web origins, comma-separated, or `*`
//   RATE_LIMIT      requests per minute per key (in memory, per edge process)
//   SIDECAR_TOKEN   the sidecar's shared secret, sent on every call
//   SIDECAR_HEADERS more headers for sidecar calls, a JSON object
//   SIDECAR_CA      a PEM file of the CA that signed the sidecar's TLS certificate (https:// URLs)
//   SIDECAR_STALL_MS a sidecar silent this long (not even its heartbeat) is stalled (default 30000)
//   STORE_PATH      the SQLite file /c1 keeps conversations in (default .data/llm-edge.sqlite;
//                   `:memory:` keeps them until the edge stops); migrations/ applied at start-up
//   LOG_REQUESTS    `false` turns the one-line-per-request JSON log (stdout, pino) off
//   LOG_BODIES      `true` adds prompt and reply text to it (off by default)
// GET /metrics (admitted like the API) counts the generations sent to each sidecar (node/metrics.ts).
//   HEADERS_TIMEOUT_MS     a request's headers must arrive within this (default 10000; then 408)
//   REQUEST_TIMEOUT_MS     the whole request must arrive within this (default 60000; answers may take
//                          longer; raised to HEADERS_TIMEOUT_MS if below it); 0 turns either off
//   KEEP_ALIVE_TIMEOUT_MS  idle keep-alive connections close after this (default 5000)
//   MAX_CONNECTIONS        connections beyond this many are refused (default 1024)
import process from "node:process";
import { pathToFileURL } from "node:url";
import { optionsFromEnv } from "./node/env.js";
import { startNodeEdge } from "./node/server.js";

export { accessFromEnv, memoryRateLimiter } from "./node/env.js";
export { DEFAULT_LIMITS, startNodeEdge, type ConnectionLimits, type NodeEdgeOptions, type RunningEdge } from "./node/server.js";

async function main(): Promise<void> {
  const options = optionsFromEnv(process.env);
  const edge = await startNodeEdge(options);
  const sidecars = options.sidecarUrls === undefined ? `sidecar ${options.sidecarUrl}` : `sidecars ${options.sidecarUrls.join(", ")}`;
  console.error(`edge listening on ${edge.url} (${sidecars}); ${edge.access}`);
  const stop = () => {
    edge.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}

const entry = process.argv[1];
if (entry !== undefined && import.meta.url === pathToFileURL(entry).href) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
