// grpc.health.v1.Health over gRPC-Web, next to the native one (grpc-health-check): Check answers
// SERVING until the sidecar starts to stop, then NOT_SERVING, for the whole server ("") and for
// inference.v1.InferenceService; any other name is NOT_FOUND, as the standard says. Watch and List
// are left to native gRPC (UNIMPLEMENTED here). Open without the token, as on native gRPC.
import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import { Health, HealthCheckResponse_ServingStatus } from "../../proto/gen/grpc/health/v1/health_pb.js";
import { InferenceService } from "../../proto/gen/inference/v1/inference_pb.js";

export function healthOverGrpcWeb(serving: () => boolean): Partial<ServiceImpl<typeof Health>> {
  return {
    check(request) {
      if (request.service !== "" && request.service !== InferenceService.typeName) {
        throw new ConnectError(`unknown service "${request.service}"`, Code.NotFound);
      }
      return {
        status: serving() ? HealthCheckResponse_ServingStatus.SERVING : HealthCheckResponse_ServingStatus.NOT_SERVING,
      };
    },
  };
}

export { Health };
