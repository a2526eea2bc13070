// A native gRPC (HTTP/2) client for the sidecar, from @connectrpc/connect-node.
import type { MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, type Client } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { InferenceService, type GenerateRequestSchema } from "../../proto/gen/inference/v1/inference_pb.js";
import type { StreamSample } from "../sample.js";

export type GrpcClient = Client<typeof InferenceService>;
export type GenerateInit = MessageInitShape<typeof GenerateRequestSchema>;

export function grpcClient(url: string): GrpcClient {
  return createClient(InferenceService, createGrpcTransport({ baseUrl: url }));
}

/** Calls Generate and reads its stream to the end; never throws. */
export async function streamGrpc(client: GrpcClient, request: GenerateInit, timeoutMs: number): Promise<StreamSample> {
  const abort = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    abort.abort();
  }, timeoutMs);
  const sentAt = performance.now();
  const since = (): number => performance.now() - sentAt;
  let first: number | undefined;
  let last = 0;
  let tokens = 0;
  let promptTokens: number | undefined;
  let acceptedMs: number | undefined;
  let cachedTokens: number | undefined;
  let timings: { promptMs: number; generationMs: number; queueMs: number } | undefined;
  const result = (outcome: StreamSample["outcome"], status: number, error?: string): StreamSample => ({
    outcome,
    status,
    acceptedMs,
    ttftMs: first ?? Number.NaN,
    lastTokenMs: first === undefined ? Number.NaN : last,
    totalMs: since(),
    tokens,
    promptTokens,
    cachedTokens,
    serverPromptMs: timings?.promptMs,
    serverDecodeMs: timings?.generationMs,
    serverQueueMs: timings?.queueMs,
    sentAt,
    error,
  });
  try {
    for await (const { event } of client.generate(request, { signal: abort.signal })) {
      switch (event.case) {
        case "start":
          acceptedMs = since();
          promptTokens = event.value.promptTokens;
          cachedTokens = event.value.cachedTokens;
          break;
        case "token":
          last = since();
          first ??= last;
          tokens++;
          break;
        case "finish":
          tokens = event.value.completionTokens;
          cachedTokens = event.value.cachedTokens;
          if (event.value.timings) timings = event.value.timings;
          break;
        case undefined:
          break;
      }
    }
    return result("completed", 0);
  } catch (error) {
    const code = error instanceof ConnectError ? error.code : Code.Unknown;
    const outcome = timedOut ? "hung" : code === Code.ResourceExhausted ? "rejected" : "failed";
    return result(outcome, code, error instanceof Error ? error.message : String(error));
  } finally {
    clearTimeout(timer);
  }
}
