// grpc.health.v1 over gRPC-Web (what an edge in a Worker can call): SERVING without the token while
// the sidecar serves, NOT_FOUND for a service it does not have, NOT_SERVING once it starts to stop
// (while a stream in progress drains).
import { Code, type ConnectError } from "@connectrpc/connect";
import { expect, it } from "vitest";
import { createSidecarHealthClient } from "../../edge/upstream/connection.js";
import { HealthCheckResponse_ServingStatus as Status } from "../../proto/gen/grpc/health/v1/health_pb.js";
import { clientsFor, startTestSidecar } from "../support/sidecar.js";

it(
  "answers Check over gRPC-Web: SERVING without the token, NOT_FOUND for another service, NOT_SERVING while " +
    "stopping",
  async () => {
    const sidecar = await startTestSidecar({ token: "s3cret", sequences: 1, contextSize: 1024 });
    const health = createSidecarHealthClient(sidecar.url);
    expect((await health.check({ service: "inference.v1.InferenceService" })).status).toBe(Status.SERVING);
    expect((await health.check({})).status).toBe(Status.SERVING);
    const unknown = await health.check({ service: "nope.v1.Nope" }).catch((e: unknown) => e);
    expect([(unknown as ConnectError).code, (unknown as ConnectError).rawMessage]).toEqual([
      Code.NotFound,
      'unknown service "nope.v1.Nope"',
    ]);
    // The inference service itself still needs the token.
    const refused = await clientsFor(sidecar.url)
      ["grpc-web"].listModels({})
      .catch((e: unknown) => e);
    expect((refused as ConnectError).code).toBe(Code.Unauthenticated);

    // A stream in progress keeps the sidecar draining; meanwhile Check says NOT_SERVING.
    const stream = clientsFor(sidecar.url)["grpc-web"].generate(
      { input: { case: "prompt", value: "Let us sing. Sing" }, maxTokens: 400 },
      { headers: { authorization: "Bearer s3cret" } },
    );
    const iterator = stream[Symbol.asyncIterator]();
    await iterator.next();
    const stopping = sidecar.stop();
    expect((await health.check({ service: "inference.v1.InferenceService" })).status).toBe(Status.NOT_SERVING);
    while (!(await iterator.next()).done);
    await stopping;
  },
);
