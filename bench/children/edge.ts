// Party (c) and the sweep: the edge on Node (`startNodeEdge`) in its own process.
import { startNodeEdge } from "../../edge/hosts/node/main.js";
import { failToParent, serveParent } from "../ipc.js";
import { argsOf, exitOnSigterm } from "./args.js";

export interface EdgeReady {
  readonly url: string;
}

try {
  const { sidecarUrl } = argsOf<{ sidecarUrl: string }>();
  const edge = await startNodeEdge({ sidecarUrl, port: 0 });
  exitOnSigterm(() => edge.close());
  serveParent({}, { url: edge.url } satisfies EdgeReady);
} catch (error) {
  failToParent(error);
}
