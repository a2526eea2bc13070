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

/** Native gRPC (HTTP/2) and gRPC-Web (HTTP/1.1) clients, both from connect-node; and the sidecar's in-process one. */
export function transportsOf(sidecar: RunningSidecar): Record<"grpc" | "grpc-web" | "in-process", InferenceClient> {
  return { ...clientsFor(sidecar.url), "in-process": createClient(InferenceService, sidecar.transport) };
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

/** A prompt of `words` pseudo-random words, different for each seed (0 to 5) from its first word on. */
export function promptOf(seed: number, words = 120): string {
  const out: string[] = [];
  let x = seed * 7919 + 17;
  for (let i = 0; i < words; i++) {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    out.push(
      ["river", "stone", "lamp", "orbit", "maple", "signal", "copper", "harbor", "violet", "engine"][x % 10] ?? "",
    );
  }
  return `${["Alpha", "Bravo", "Charlie", "Delta", "Echo", "Foxtrot"][seed]} ${out.join(" ")}`;
}
