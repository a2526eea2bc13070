// `npm start` on Node (EDGE_RUNTIME=node): the sidecar and the edge in one process. The edge calls the sidecar's
// service in memory (sidecar/transport/in-process.ts) instead of over gRPC-Web on the loopback: no socket, no HTTP,
// no protobuf encoding between them (docs/decisions.md, "One process for npm start on Node"). The sidecar still
// listens on its port for native gRPC and gRPC-Web callers.
import process from "node:process";
import { createClient } from "@connectrpc/connect";
import { InferenceService } from "../proto/gen/inference/v1/inference_pb.js";
import { EdgeConfigError } from "../edge/config/parse.js";
import { optionsFromEnv } from "../edge/hosts/node/env.js";
import { startNodeEdge } from "../edge/hosts/node/server.js";
import { usage } from "../sidecar/config.js";
import { drainOnSignals, launchSidecar } from "../sidecar/launch.js";

async function main(): Promise<void> {
  if (process.argv.includes("--help")) {
    console.log(usage());
    return;
  }
  // The edge's settings first: a bad one stops the start before a model loads.
  const options = optionsFromEnv(process.env);
  const { config, sidecar } = await launchSidecar(process.argv.slice(2), process.env);
  // Several sidecars (SIDECAR_URLS) are routed over the network as always; else the one in this process.
  const inProcess = options.sidecarUrls === undefined;
  const edge = await startNodeEdge({
    ...options,
    ...(inProcess ? { sidecar: createClient(InferenceService, sidecar.transport) } : {}),
  });
  const sidecars = inProcess ? "the sidecar in this process" : `sidecars ${options.sidecarUrls?.join(", ")}`;
  console.error(`edge listening on ${edge.url} (${sidecars}); ${edge.access}`);
  if (edge.renderUrl !== undefined) console.error(`edge: vLLM's render API on ${edge.renderUrl}, without keys`);
  drainOnSignals(config, sidecar, () => edge.close());
}

main().catch((error: unknown) => {
  const reason = error instanceof Error ? error.message : String(error);
  console.error(error instanceof EdgeConfigError ? `edge: ${reason}` : `start: ${reason}`);
  process.exit(1);
});
