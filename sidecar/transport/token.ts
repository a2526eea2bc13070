// The edge–sidecar link's shared secret (`SIDECAR_TOKEN`). Every call must carry
// `authorization: Bearer <token>` (gRPC metadata or an HTTP header); the comparison hashes both
// sides and compares the digests in constant time. grpc.health.v1 and GET /healthz stay open:
// probes carry no secrets and they reveal nothing but "serving".
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import * as grpc from "@grpc/grpc-js";
import { createHash, timingSafeEqual } from "node:crypto";

const digest = (text: string): Buffer => createHash("sha256").update(text).digest();

/** Native gRPC methods that need no token. */
const OPEN_METHODS = ["/grpc.health.v1.Health/Check", "/grpc.health.v1.Health/Watch"];

const REFUSAL = "this sidecar needs its token: send the metadata 'authorization: Bearer <SIDECAR_TOKEN>'";

/** A checker for `authorization` values; undefined token: every call passes. */
export function tokenCheck(token: string | undefined): (authorization: string | null | undefined) => boolean {
  if (token === undefined || token === "") return () => true;
  const expected = digest(`Bearer ${token}`);
  return (authorization) => timingSafeEqual(digest(authorization ?? ""), expected);
}

/** grpc-js server interceptor: UNAUTHENTICATED for a call without the token. */
export function grpcTokenInterceptor(check: (authorization: string | undefined) => boolean): grpc.ServerInterceptor {
  return (method, call) =>
    new grpc.ServerInterceptingCall(call, {
      start: (next) =>
        next({
          onReceiveMetadata: (metadata, pass) => {
            const [value] = metadata.get("authorization");
            if (OPEN_METHODS.includes(method.path) || check(typeof value === "string" ? value : undefined))
              pass(metadata);
            else call.sendStatus({ code: grpc.status.UNAUTHENTICATED, details: REFUSAL });
          },
        }),
    });
}

/** connect interceptor for gRPC-Web: the same refusal (grpc.health.v1 open there too). */
export function connectTokenInterceptor(check: (authorization: string | null) => boolean): Interceptor {
  return (next) => async (request) => {
    const open = request.service.typeName === "grpc.health.v1.Health";
    if (!open && !check(request.header.get("authorization"))) throw new ConnectError(REFUSAL, Code.Unauthenticated);
    return next(request);
  };
}
