// Native gRPC (grpc-js): the inference service, grpc.health.v1 and server reflection.
import { create, fromBinary, toBinary, type DescMessage, type DescMethod, type DescService } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { ConnectError, createHandlerContext, type ServiceImpl } from "@connectrpc/connect";
import { setTrailerStatus } from "@connectrpc/connect/protocol-grpc";
import * as grpc from "@grpc/grpc-js";
import { loadSync } from "@grpc/proto-loader";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { ReflectionService } from "@grpc/reflection";
import { HealthImplementation } from "grpc-health-check";
import { InferenceService } from "../../proto/gen/inference/v1/inference_pb.js";
import { cancelled, deadlineExceeded } from "../engine/engine-errors.js";

const require = createRequire(import.meta.url);
/** The reflection service's own definition, as @grpc/reflection ships it. */
const REFLECTION_PROTO = join(
  dirname(require.resolve("@grpc/reflection")),
  "..",
  "proto",
  "grpc",
  "reflection",
  "v1",
  "reflection.proto",
);

type Impl = ServiceImpl<typeof InferenceService>;
type AnyHandler = (request: unknown, context: ReturnType<typeof createHandlerContext>) => unknown;

/**
 * Native gRPC for direct callers: a grpc-js service definition derived from the generated
 * descriptors, handlers that call the same implementation as gRPC-Web, grpc.health.v1 and
 * server reflection.
 */
export function addInferenceService(server: grpc.Server, impl: Impl, shutdown: AbortSignal): HealthImplementation {
  const definition: Record<string, grpc.MethodDefinition<unknown, unknown>> = {};
  const handlers: grpc.UntypedServiceImplementation = {};
  for (const method of InferenceService.methods) {
    definition[method.localName] = methodDefinition(InferenceService, method);
    const call = (impl as unknown as Record<string, AnyHandler>)[method.localName];
    if (call === undefined) continue;
    handlers[method.localName] =
      method.methodKind === "server_streaming"
        ? streamingHandler(method, call.bind(impl), shutdown)
        : unaryHandler(method, call.bind(impl), shutdown);
  }
  server.addService(definition, handlers);

  const health = new HealthImplementation({ "": "SERVING", [InferenceService.typeName]: "SERVING" });
  health.addToServer(server);

  // The service's file and the files it imports (google/protobuf/struct.proto), so a reflecting client resolves all.
  const files = [InferenceService.file, ...InferenceService.file.dependencies].map((file) =>
    Buffer.from(toBinary(FileDescriptorProtoSchema, file.proto)),
  );
  // Reflection lists every service the port serves: inference, health and reflection itself.
  const reflection = new ReflectionService({
    ...loadSync([require.resolve("grpc-health-check/proto/health/v1/health.proto"), REFLECTION_PROTO]),
    [InferenceService.typeName]: { fileDescriptorProtos: files },
  } as never);
  reflection.addToServer(server);
  return health;
}

function methodDefinition(service: DescService, method: DescMethod): grpc.MethodDefinition<unknown, unknown> {
  const input: DescMessage = method.input;
  const output: DescMessage = method.output;
  return {
    path: `/${service.typeName}/${method.name}`,
    requestStream: false,
    responseStream: method.methodKind === "server_streaming",
    requestSerialize: (value: unknown) => Buffer.from(toBinary(input, value as never)),
    requestDeserialize: (bytes: Buffer) => fromBinary(input, bytes),
    responseSerialize: (value: unknown) => Buffer.from(toBinary(output, create(output, value as never))),
    responseDeserialize: (bytes: Buffer) => fromBinary(output, bytes),
  };
}

function contextFor(
  method: DescMethod,
  call: grpc.ServerUnaryCall<unknown, unknown> | grpc.ServerWritableStream<unknown, unknown>,
  shutdown: AbortSignal,
): ReturnType<typeof createHandlerContext> {
  const context = createHandlerContext({
    service: InferenceService,
    method,
    protocolName: "grpc",
    requestMethod: "POST",
    url: `/${InferenceService.typeName}/${method.name}`,
    shutdownSignal: shutdown,
    requestHeader: traceHeaders(call.metadata),
  });
  call.on("cancelled", () => context.abort(cancelled("cancelled by the caller")));
  const deadline = call.getDeadline();
  if (deadline instanceof Date || typeof deadline === "number") {
    const ms = Number(deadline) - Date.now();
    if (Number.isFinite(ms))
      setTimeout(() => context.abort(deadlineExceeded("deadline exceeded")), Math.max(0, ms)).unref();
  }
  return context;
}

/** The caller's trace context from its metadata (W3C `traceparent`, `tracestate`: docs/decisions.md, "Traces"). */
function traceHeaders(metadata: grpc.Metadata): Headers {
  const headers = new Headers();
  for (const name of ["traceparent", "tracestate"]) {
    const value = metadata.get(name)[0];
    if (typeof value === "string") headers.set(name, value);
  }
  return headers;
}

/**
 * The call's status; its error details (PromptTooLong, ModelLoadFailed) in `grpc-status-details-bin`, as gRPC-Web
 * carries them.
 */
function toStatus(error: unknown): Partial<grpc.StatusObject> {
  const e = ConnectError.from(error);
  const status = { code: e.code as number as grpc.status, details: e.rawMessage };
  const details = e.details.length === 0 ? null : setTrailerStatus(new Headers(), e).get("grpc-status-details-bin");
  if (details === null) return status;
  const metadata = new grpc.Metadata();
  metadata.set("grpc-status-details-bin", Buffer.from(details, "base64"));
  return { ...status, metadata };
}

function unaryHandler(
  method: DescMethod,
  call: AnyHandler,
  shutdown: AbortSignal,
): grpc.handleUnaryCall<unknown, unknown> {
  return (unary, callback) => {
    const context = contextFor(method, unary, shutdown);
    Promise.resolve()
      .then(() => call(unary.request, context))
      .then(
        (response) => callback(null, response),
        (error: unknown) => callback(toStatus(error)),
      );
  };
}

function streamingHandler(
  method: DescMethod,
  call: AnyHandler,
  shutdown: AbortSignal,
): grpc.handleServerStreamingCall<unknown, unknown> {
  return (stream) => {
    const context = contextFor(method, stream, shutdown);
    const run = async (): Promise<void> => {
      const events = call(stream.request, context) as AsyncIterable<unknown>;
      for await (const event of events) {
        // A caller gone or out of time gets nothing more. A drain's end (shutdown) does not stop the
        // writing: a generation reads ahead of its writer (read-ahead.ts), so it may have ended,
        // and the drain with it, while its last events still wait here to be written.
        if (context.signal.aborted && !shutdown.aborted) break;
        if (!stream.write(event)) await new Promise((resolve) => stream.once("drain", resolve));
      }
    };
    run().then(
      () => stream.end(),
      (error: unknown) => {
        if (!stream.cancelled) stream.emit("error", toStatus(error));
      },
    );
  };
}
