// A native gRPC (HTTP/2) client for the sidecar, from @connectrpc/connect-node.
import type { MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, type Client } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import {
  InferenceService,
  type GenerateRequestSchema,
  type GenerateResponse,
} from "../../proto/gen/inference/v1/inference_pb.js";
import type { StreamSample } from "../sample.js";

export type GrpcClient = Client<typeof InferenceService>;
export type GenerateInit = MessageInitShape<typeof GenerateRequestSchema>;

export function grpcClient(url: string): GrpcClient {
  return createClient(InferenceService, createGrpcTransport({ baseUrl: url }));
}

/** What a Generate stream showed so far: when it was accepted, its tokens' times, the counts. */
interface Seen {
  acceptedMs: number | undefined;
  first: number | undefined;
  last: number;
  tokens: number;
  promptTokens: number | undefined;
  cachedTokens: number | undefined;
  timings: { promptMs: number; generationMs: number; queueMs: number } | undefined;
}

type GenerateEvent = GenerateResponse["event"];

function noteEvent(seen: Seen, event: GenerateEvent, since: () => number): void {
  switch (event.case) {
    case "start":
      seen.acceptedMs = since();
      seen.promptTokens = event.value.promptTokens;
      seen.cachedTokens = event.value.cachedTokens;
      break;
    case "token":
      seen.last = since();
      seen.first ??= seen.last;
      seen.tokens++;
      break;
    case "finish":
      seen.tokens = event.value.completionTokens;
      seen.cachedTokens = event.value.cachedTokens;
      if (event.value.timings) seen.timings = event.value.timings;
      break;
    case undefined:
      break;
  }
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
  const seen: Seen = {
    acceptedMs: undefined,
    first: undefined,
    last: 0,
    tokens: 0,
    promptTokens: undefined,
    cachedTokens: undefined,
    timings: undefined,
  };
  const result = (outcome: StreamSample["outcome"], status: number, error?: string): StreamSample => ({
    outcome,
    status,
    acceptedMs: seen.acceptedMs,
    ttftMs: seen.first ?? Number.NaN,
    lastTokenMs: seen.first === undefined ? Number.NaN : seen.last,
    totalMs: since(),
    tokens: seen.tokens,
    promptTokens: seen.promptTokens,
    cachedTokens: seen.cachedTokens,
    serverPromptMs: seen.timings?.promptMs,
    serverDecodeMs: seen.timings?.generationMs,
    serverQueueMs: seen.timings?.queueMs,
    sentAt,
    error,
  });
  try {
    for await (const { event } of client.generate(request, { signal: abort.signal })) noteEvent(seen, event, since);
    return result("completed", 0);
  } catch (error) {
    const code = error instanceof ConnectError ? error.code : Code.Unknown;
    const outcome = timedOut ? "hung" : code === Code.ResourceExhausted ? "rejected" : "failed";
    return result(outcome, code, error instanceof Error ? error.message : String(error));
  } finally {
    clearTimeout(timer);
  }
}
