// Node entry (`npm run edge`): the same fetch handler as the Worker, hosted by edge/node/
// (docs/decisions.md, "Web-only edge"). Only this file and edge/node/ may import Node modules.
// Its settings are listed in docs/configuration.md (edge/config/settings.ts); a bad one stops the
// start with a line naming it. GET /metrics (admitted like the API) counts the generations sent to
// each sidecar (node/metrics.ts).
import process from "node:process";
import { pathToFileURL } from "node:url";
import { EdgeConfigError } from "../../config/parse.js";
import { optionsFromEnv } from "./env.js";
import { startNodeEdge } from "./server.js";

export { accessFromEnv, memoryRateLimiter } from "./env.js";
export {
  DEFAULT_LIMITS,
  startNodeEdge,
  type ConnectionLimits,
  type NodeEdgeOptions,
  type RunningEdge,
} from "./server.js";

async function main(): Promise<void> {
  const options = optionsFromEnv(process.env);
  const edge = await startNodeEdge(options);
  const sidecars =
    options.sidecarUrls === undefined ? `sidecar ${options.sidecarUrl}` : `sidecars ${options.sidecarUrls.join(", ")}`;
  console.error(`edge listening on ${edge.url} (${sidecars}); ${edge.access}`);
  if (edge.renderUrl !== undefined) console.error(`edge: vLLM's render API on ${edge.renderUrl}, without keys`);
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
    console.error(error instanceof EdgeConfigError ? `edge: ${error.message}` : error);
    process.exit(1);
  });
}
