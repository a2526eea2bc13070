// gRPC-Web (HTTP/1.1) for the edge, with the plain endpoints as its fallback.
import type { Interceptor, ServiceImpl } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { InferenceService } from "../../proto/gen/inference/v1/inference_pb.js";
import { Health, healthOverGrpcWeb } from "./health-web.js";

export type PlainHandler = NonNullable<Parameters<typeof connectNodeAdapter>[0]["fallback"]>;

/**
 * gRPC-Web (HTTP/1.1, binary) for the edge, which cannot speak HTTP/2 from a Worker. The same
 * implementation serves it; a closed connection aborts the handler's signal. Other paths go to
 * `fallback` (plain HTTP: /metrics, /healthz). grpc.health.v1's Check is served too (`serving`).
 */
export function grpcWebHandler(
  impl: ServiceImpl<typeof InferenceService>,
  shutdown: AbortSignal,
  fallback: PlainHandler,
  interceptors: Interceptor[] = [],
  serving: () => boolean = () => !shutdown.aborted,
) {
  return connectNodeAdapter({
    interceptors,
    routes: (router) => router.service(InferenceService, impl).service(Health, healthOverGrpcWeb(serving)),
    grpcWeb: true,
    grpc: false,
    connect: false,
    shutdownSignal: shutdown,
    fallback,
  });
}
