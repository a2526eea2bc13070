// The native gRPC transport at a drain's end (sidecar/transport/grpc-native.ts): a generation reads
// ahead of its writer, so the drain can end (and the shutdown signal fire) while a stream's last
// events still wait to be written; they are written, and the call ends as the service ends it.
import * as grpc from "@grpc/grpc-js";
import { afterEach, expect, it } from "vitest";
import type { GenerateResponse } from "../../proto/gen/inference/v1/inference_pb.js";
import { FinishReason } from "../../proto/gen/inference/v1/inference_pb.js";
import { addInferenceService } from "../../sidecar/transport/grpc-native.js";
import { clientsFor } from "../support/sidecar.js";

let server: grpc.Server | undefined;
afterEach(() => server?.forceShutdown());

it("writes the events a stream still holds when the shutdown signal fires", async () => {
  const shutdown = new AbortController();
  const impl = {
    async *generate(): AsyncGenerator<Partial<GenerateResponse>> {
      yield { event: { case: "start", value: { model: "m", promptTokens: 3 } } } as never;
      // The generation has ended; its finish waits for the writer while the drain ends.
      await new Promise<void>((resolve) => shutdown.signal.addEventListener("abort", () => resolve()));
      yield { event: { case: "finish", value: { reason: FinishReason.STOP, completionTokens: 1 } } } as never;
    },
  };
  server = new grpc.Server();
  addInferenceService(server, impl as never, shutdown.signal);
  const port = await new Promise<number>((resolve, reject) =>
    server?.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (error, bound) =>
      error === null ? resolve(bound) : reject(error),
    ),
  );
  const stream = clientsFor(`http://127.0.0.1:${port}`).grpc.generate({ model: "m" })[Symbol.asyncIterator]();
  expect((await stream.next()).value?.event.case).toBe("start");
  shutdown.abort();
  const rest: string[] = [];
  for (let next = await stream.next(); next.done !== true; next = await stream.next())
    rest.push(next.value.event.case ?? "");
  expect(rest).toEqual(["finish"]);
});
