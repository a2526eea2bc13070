import { startNodeEdge, type NodeEdgeOptions, type RunningEdge } from "../../edge/node.js";
import type { RunningSidecar, StartOptions } from "../../sidecar/server.js";
import { startTestSidecar } from "./sidecar.js";

export interface Stack {
  readonly sidecar: RunningSidecar;
  readonly edge: RunningEdge;
  /** The OpenAI-style base URL, e.g. http://127.0.0.1:PORT/v1 */
  readonly baseURL: string;
  stop(): Promise<void>;
}

/** A real sidecar and the edge on Node, both on free ports of 127.0.0.1. */
export async function startStack(sidecarOptions: Partial<StartOptions> = {}, edgeOptions: NodeEdgeOptions = {}): Promise<Stack> {
  const sidecar = await startTestSidecar(sidecarOptions);
  const edge = await startNodeEdge({ sidecarUrl: sidecar.url, port: 0, ...edgeOptions });
  return {
    sidecar,
    edge,
    baseURL: `${edge.url}/v1`,
    async stop() {
      await edge.close();
      await sidecar.stop();
    },
  };
}

