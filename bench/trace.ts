/**
 * `npm run bench:trace`: what traces cost (docs/decisions.md, "Traces"; docs/performance.md,
 * "Traces"). Two stacks side by side on 127.0.0.1, each a sidecar process (the random-60m model)
 * and a Node edge in this process: one with traces off, one exporting every span to a local OTLP
 * sink (OTEL_EXPORTER_OTLP_ENDPOINT, `--protocol` http/protobuf or http/json). Rounds alternate
 * which stack goes first; each round sends `--streams` streamed chats at once, `--requests` of
 * them in all. Prints per stack the median round's throughput (completion tokens per second over
 * the round's wall time) and TTFT p50 / p90 (first content chunk), then the difference. Progress on
 * stderr, the table on stdout; then the CPU one traced request adds (trace-cpu.ts). Figures are noisy on a shared
 * machine: the load average is printed,
 * and `--control` runs the same two stacks both untraced, to show the noise alone.
 */
import { loadavg } from "node:os";
import { parseArgs } from "node:util";
import { startNodeEdge, type RunningEdge } from "../edge/hosts/node/main.js";
import { ensureModels } from "../gguf/models.js";
import { startOtlpReceiver } from "../test/support/otlp-receiver.js";
import { startSidecarProcess, type Started } from "../test/support/processes.js";
import { streamSse } from "./clients/sse.js";
import { cpuPerRequest } from "./trace-cpu.js";
import { median, quantile } from "./stats.js";
import { SEED, streamPrompt, TEMPERATURE } from "./workload.js";

const { values: flags } = parseArgs({
  options: {
    rounds: { type: "string", default: "6" },
    streams: { type: "string", default: "4" },
    requests: { type: "string", default: "16" },
    "max-tokens": { type: "string", default: "64" },
    protocol: { type: "string", default: "http/protobuf" },
    control: { type: "boolean", default: false },
  },
});
const [rounds, streams, requests, maxTokens] = [flags.rounds, flags.streams, flags.requests, flags["max-tokens"]].map(
  Number,
) as [number, number, number, number];
const protocol = flags.protocol === "http/json" ? "http/json" : "http/protobuf";
const log = (m: string): void => void console.error(`bench:trace: ${m}`);

interface Stack {
  readonly name: "off" | "on";
  readonly sidecar: Started;
  readonly edge: RunningEdge;
  readonly throughput: number[];
  readonly ttfts: number[];
}

async function startStack(name: "off" | "on", model: string, sink: string | undefined): Promise<Stack> {
  const flagsOf = ["--threads", "1", "--sequences", String(streams), "--context-size", "1024"];
  const env = sink === undefined ? {} : { OTEL_EXPORTER_OTLP_ENDPOINT: sink, OTEL_EXPORTER_OTLP_PROTOCOL: protocol };
  Object.assign(process.env, env); // the sidecar process inherits it; the edge takes it as an option below
  const sidecar = await startSidecarProcess(model, flagsOf);
  for (const key of Object.keys(env)) delete process.env[key];
  const trace =
    sink === undefined
      ? undefined
      : ({ url: `${sink}/v1/traces`, protocol, serviceName: "llm-edge", captureContent: false } as const);
  const edge = await startNodeEdge({ sidecarUrl: sidecar.url, port: 0, publicDir: false, trace });
  return { name, sidecar, edge, throughput: [], ttfts: [] };
}

/** One round on `stack`: `requests` streamed chats, `streams` at a time. */
async function round(stack: Stack, index: number): Promise<void> {
  const began = performance.now();
  let [next, tokens] = [0, 0];
  const worker = async (): Promise<void> => {
    for (let i = next++; i < requests; i = next++) {
      const body = {
        model: "bench",
        messages: [{ role: "user", content: streamPrompt(index * requests + i) }],
        max_tokens: maxTokens,
        temperature: TEMPERATURE,
        seed: SEED,
        stream: true,
        stream_options: { include_usage: true },
      };
      const sample = await streamSse(`${stack.edge.url}/v1/chat/completions`, body, 120_000);
      if (sample.outcome !== "completed") throw new Error(`${stack.name}: ${sample.outcome} ${sample.error ?? ""}`);
      tokens += sample.tokens;
      stack.ttfts.push(sample.ttftMs);
    }
  };
  await Promise.all(Array.from({ length: streams }, worker));
  stack.throughput.push(tokens / ((performance.now() - began) / 1000));
}

const row = (stack: Stack) =>
  [median(stack.throughput), quantile(stack.ttfts, 0.5), quantile(stack.ttfts, 0.9)] as const;

async function main(): Promise<void> {
  const { "random-60m": model } = await ensureModels("models", ["random-60m"]);
  const sink = await startOtlpReceiver();
  // --control: both stacks untraced (an A/A run), to show how far apart two equal stacks come out.
  const stacks = [
    await startStack("off", model, undefined),
    await startStack("on", model, flags.control ? undefined : sink.url),
  ] as const;
  const load = loadavg()[0]?.toFixed(2);
  try {
    for (const stack of stacks) await round(stack, 0); // warm-up, not counted
    for (const stack of stacks) [stack.throughput.length, stack.ttfts.length] = [0, 0];
    for (let r = 1; r <= rounds; r++) {
      for (const stack of r % 2 === 0 ? [...stacks].reverse() : stacks) await round(stack, r);
      log(`round ${r} of ${rounds}`);
    }
  } finally {
    for (const stack of stacks) {
      await stack.edge.close();
      const exited = new Promise((resolve) => stack.sidecar.child.once("exit", resolve));
      stack.sidecar.child.kill("SIGTERM"); // the sidecar drains and sends its last spans
      await exited;
    }
    await sink.close();
  }
  const [off, on] = stacks.map(row) as [ReturnType<typeof row>, ReturnType<typeof row>];
  const format = (r: ReturnType<typeof row>) => `${r[0].toFixed(1)} | ${r[1].toFixed(1)} | ${r[2].toFixed(1)}`;
  const setup = `${rounds} rounds × ${requests} streamed chats (${streams} at once, ${maxTokens} tokens)`;
  console.log(
    `Traces ${flags.control ? "off on both stacks (--control)" : protocol}, ${setup}, load average ${load} at start, ` +
      `${sink.spans.length} spans received`,
  );
  console.log("| traces | tokens/s (median round) | TTFT p50 ms | TTFT p90 ms |\n|---|---|---|---|");
  console.log(`| off | ${format(off)} |\n| on | ${format(on)} |`);
  console.log(
    `| on − off | ${(((on[0] - off[0]) / off[0]) * 100).toFixed(1)} % | ${(on[1] - off[1]).toFixed(1)} | ` +
      `${(on[2] - off[2]).toFixed(1)} |`,
  );
  const cpu = await cpuPerRequest();
  console.log(`\nCPU per request in this process (edge and sidecar hooks, 64 tokens, spans encoded as protobuf):`);
  console.log(
    `untraced ${cpu.off.toFixed(0)} µs, traced ${cpu.on.toFixed(0)} µs: tracing adds ` +
      `${(cpu.on - cpu.off).toFixed(0)} µs of CPU per request`,
  );
}

await main();
