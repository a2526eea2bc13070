// Embeddings per second at 1 and 8 concurrent clients: the edge on Node (POST /v1/embeddings over
// the sidecar's Embed) and llama-server's /v1/embeddings (`--embeddings --pooling last`: the same
// last-token vector, scaled to unit length), each client sending one ~100-token text per request.
import { median, quantile } from "../stats.js";
import { fillerText } from "../workload.js";

export interface EmbeddingsLevel {
  readonly clients: number;
  readonly requests: number;
  readonly failed: number;
  readonly perSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
}

export interface EmbeddingsParty {
  readonly name: string;
  readonly levels: EmbeddingsLevel[];
}

export interface EmbeddingsResult {
  readonly inputWords: number;
  readonly parties: EmbeddingsParty[];
}

async function embedOnce(baseUrl: string, input: string, timeoutMs: number): Promise<number | undefined> {
  const sent = performance.now();
  try {
    const response = await fetch(`${baseUrl}/v1/embeddings`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "random-60m", input, encoding_format: "float" }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const body = (await response.json()) as { data?: { embedding?: number[] }[] };
    return response.ok && (body.data?.[0]?.embedding?.length ?? 0) > 0 ? performance.now() - sent : undefined;
  } catch {
    return undefined;
  }
}

async function level(baseUrl: string, clients: number, perClient: number, timeoutMs: number): Promise<EmbeddingsLevel> {
  const latencies: number[] = [];
  let failed = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      for (let i = 0; i < perClient; i++) {
        const ms = await embedOnce(baseUrl, fillerText(75, 1000 + c * perClient + i), timeoutMs);
        if (ms === undefined) failed += 1;
        else latencies.push(ms);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return {
    clients,
    requests: clients * perClient,
    failed,
    perSecond: latencies.length / seconds,
    p50Ms: median(latencies),
    p99Ms: quantile(latencies, 0.99),
  };
}

/** Each party at each level of concurrency, parties interleaved level by level; one warm-up request each. */
export async function runEmbeddings(
  parties: readonly { name: string; url: string }[],
  options: { levels: readonly number[]; perClient: number; timeoutMs: number },
  log: (m: string) => void,
): Promise<EmbeddingsResult> {
  const results = parties.map((p) => ({ name: p.name, levels: [] as EmbeddingsLevel[] }));
  for (const p of parties) await embedOnce(p.url, fillerText(75, 1), options.timeoutMs);
  for (const clients of options.levels) {
    for (const [i, p] of parties.entries()) {
      const result = await level(p.url, clients, options.perClient, options.timeoutMs);
      log(
        `embeddings, ${p.name}, ${clients} client(s): ${result.perSecond.toFixed(1)}/s, p50 ` +
          `${result.p50Ms.toFixed(0)} ms, ${result.failed} failed`,
      );
      results[i]?.levels.push(result);
    }
  }
  return { inputWords: 75, parties: results };
}
