// A stopped sidecar closes the HTTP/1.1 (gRPC-Web) connections it still holds: a client that kept
// one alive gets "unreachable" and, once a sidecar is started again on the same port, reaches
// the new one (before, the old connection went on answering "the sidecar is shutting down").
import { Code, ConnectError } from "@connectrpc/connect";
import { expect, it } from "vitest";
import { createSidecarClient } from "../../edge/upstream/connection.js";
import { startTestSidecar } from "../support/sidecar.js";

it("closes its kept-alive gRPC-Web connections when stopped, so a restart on the same port is reached", async () => {
  const first = await startTestSidecar({ modelId: "scripted" });
  const client = createSidecarClient(first.url);
  expect((await client.listModels({})).models.map((m) => m.id)).toEqual(["scripted"]);
  await first.stop();
  const refused = await client.listModels({}).catch((e: unknown) => e);
  expect(refused).toBeInstanceOf(ConnectError);
  expect([(refused as ConnectError).code, (refused as ConnectError).rawMessage]).toEqual([
    Code.Unavailable,
    "The inference sidecar is unreachable.",
  ]);
  const second = await startTestSidecar({ modelId: "again", port: first.port });
  try {
    expect((await client.listModels({})).models.map((m) => m.id)).toEqual(["again"]);
  } finally {
    await second.stop();
  }
});
