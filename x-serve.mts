import { startCatalogue } from "./test/support/catalogue.ts";
import { startNodeEdge } from "./edge/node/server.ts";
const names = process.argv.slice(2);
const sidecar = await startCatalogue(names as never, { contextSize: 8192 });
const edge = await startNodeEdge({ port: 8799, sidecarUrl: sidecar.url });
console.log("READY", edge.url);
