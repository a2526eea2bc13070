import { startNodeEdge, type NodeEdgeOptions, type RunningEdge } from "../../edge/hosts/node/main.js";
import type { RunningSidecar, StartOptions } from "../../sidecar/start-sidecar.js";
import { ensureModels } from "../../gguf/models.js";
import { startTestSidecar } from "./sidecar.js";

export interface Stack {
  readonly sidecar: RunningSidecar;
  readonly edge: RunningEdge;
  /** The OpenAI-style base URL, e.g. http://127.0.0.1:PORT/v1 */
  readonly baseURL: string;
  stop(): Promise<void>;
}

/** A real sidecar and the edge on Node, both on free ports of 127.0.0.1. */
export async function startStack(
  sidecarOptions: Partial<StartOptions> = {},
  edgeOptions: NodeEdgeOptions = {},
): Promise<Stack> {
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

/** A stack on the 60M random-weight model: replies that run on to their token limit (for leaving mid-reply). */
export async function startRandomStack(sidecarOptions: Partial<StartOptions> = {}): Promise<Stack> {
  const { "random-60m": model } = await ensureModels("models", ["random-60m"]);
  return startStack({ model, sequences: 1, contextSize: 4096, ...sidecarOptions });
}
