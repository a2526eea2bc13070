import { createClient, type Client } from "@connectrpc/connect";
import { createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { InferenceService, type GenerateResponse } from "../../proto/gen/inference/v1/inference_pb.js";
import { modelPath } from "../../gguf/models.js";
import { startSidecar, type RunningSidecar, type StartOptions } from "../../sidecar/start-sidecar.js";

export type InferenceClient = Client<typeof InferenceService>;

/** A real sidecar in this process, on a free port of 127.0.0.1, serving a test model. */
export function startTestSidecar(options: Partial<StartOptions> = {}): Promise<RunningSidecar> {
  return startSidecar({
    model: modelPath("scripted"),
    modelId: undefined,
    host: "127.0.0.1",
    port: 0,
    threads: 1,
    engine: "auto",
    sequences: 2,
    contextSize: 256,
    maxQueue: 8,
    queueTimeoutMs: 10_000,
    drainMs: 2_000,
    ...options,
  });
}

/** Native gRPC (HTTP/2) and gRPC-Web (HTTP/1.1) clients, both from connect-node. */
export function clientsFor(url: string): Record<"grpc" | "grpc-web", InferenceClient> {
  return {
    grpc: createClient(InferenceService, createGrpcTransport({ baseUrl: url })),
    "grpc-web": createClient(InferenceService, createGrpcWebTransport({ baseUrl: url, httpVersion: "1.1" })),
  };
}

export async function collect(events: AsyncIterable<GenerateResponse>): Promise<GenerateResponse["event"][]> {
  const out: GenerateResponse["event"][] = [];
  for await (const e of events) out.push(e.event);
  return out;
}

/** The reply text: token texts, then the finish event's held-back tail. */
export function replyText(events: readonly GenerateResponse["event"][]): string {
  let text = "";
  for (const e of events) {
    if (e.case === "token") text += e.value.text;
    if (e.case === "finish") text += e.value.text;
  }
  return text;
}

/** The sidecar's metrics without labels, by name (comment and labelled lines skipped). */
export async function readMetrics(url: string, init: RequestInit = {}): Promise<Record<string, number>> {
  const body = await (await fetch(`${url}/metrics`, init)).text();
  return Object.fromEntries(
    body
      .trim()
      .split("\n")
      .filter((line) => !line.startsWith("#") && !line.includes("{"))
      .map((line) => line.split(" "))
      .map(([name, value]) => [name ?? "", Number(value)]),
  );
}
