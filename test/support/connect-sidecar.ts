// Test-only: serves any `Sidecar` implementation (e.g. FakeSidecar) as gRPC-Web through
// connect-node's adapter, the one the real sidecar serves gRPC-Web with (sidecar/transport/grpc-web.ts),
// so what only the real transport carries crosses the wire as in production: error details
// (ModelLoadFailed, PromptTooLong) and every RPC the fake implements, LoadModel and UnloadModel too.
import type { ServiceImpl } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { InferenceService } from "../../proto/gen/inference/v1/inference_pb.js";
import type { Sidecar } from "../../edge/upstream/connection.js";

export interface ConnectSidecarServer {
  readonly url: string;
  close(): Promise<void>;
}

/** The fake's methods as the service's handlers (the handler's signal is the call's). */
function serviceOf(sidecar: Sidecar): Partial<ServiceImpl<typeof InferenceService>> {
  return {
    generate: (request, context) => sidecar.generate(request, { signal: context.signal }),
    listModels: (request, context) => sidecar.listModels(request, { signal: context.signal }),
    loadModel: (request, context) => sidecar.loadModel(request, { signal: context.signal }),
    unloadModel: (request, context) => sidecar.unloadModel(request, { signal: context.signal }),
    embed: (request, context) => sidecar.embed(request, { signal: context.signal }),
    tokenize: (request, context) => sidecar.tokenize(request, { signal: context.signal }),
  };
}

export async function serveOverConnect(sidecar: Sidecar): Promise<ConnectSidecarServer> {
  const handler = connectNodeAdapter({
    routes: (router) => router.service(InferenceService, serviceOf(sidecar)),
    grpcWeb: true,
    grpc: false,
    connect: false,
  });
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
