/**
 * `npx tsx bench/affinity-hit-rate.ts`: the KV-cache hit rate of routing by affinity against random picking,
 * with several sidecars behind one edge (docs/decisions.md, "Several sidecars behind one edge").
 * Three sidecar processes (the random-tiny model, 3 sequences each) serve six conversations that
 * take turns (round-robin, one request at a time, each resending its history after a long system
 * prompt of its own). Affinity: one Node edge with SIDECAR_URLS (each conversation's opening keeps
 * it on one sidecar). Random: one edge per sidecar, the bench picking one at random per request
 * (a seeded generator). Each mode starts fresh sidecars. The hit rate is the prompt tokens the
 * sidecar found in a sequence's cache (`usage.prompt_tokens_details.cached_tokens`) over all
 * prompt tokens, for the turns after the first; the wall time per request is noisy on a shared
 * machine and shown for scale only. Prints a markdown table on stdout, progress on stderr. Needs
 * the random-tiny model (`npm run models`).
 */
import { startNodeEdge, type RunningEdge } from "../edge/hosts/node/main.js";
import { modelPath } from "../gguf/models.js";
import { seededRandom } from "../test/support/sse.js";
import { startSidecarProcess, type Started } from "../test/support/processes.js";
import { fillerText, SEED, TEMPERATURE, userTurn } from "./workload.js";

const SIDECARS = 3;
/** Per sidecar: room for its share of the conversations when each keeps to one sidecar. */
const SEQUENCES = 3;
const CONVERSATIONS = 6;
const TURNS = 5;
const SYSTEM_WORDS = 300;
const REPLY_TOKENS = 8;

type Message = { role: "system" | "user" | "assistant"; content: string };
interface Totals {
  prompt: number;
  cached: number;
  ms: number;
  requests: number;
}

const log = (m: string): void => void console.error(`affinity: ${m}`);

async function startSidecars(): Promise<Started[]> {
  const flags = ["--threads", "1", "--sequences", String(SEQUENCES), "--context-size", "4096"];
  return Promise.all(Array.from({ length: SIDECARS }, () => startSidecarProcess(modelPath("random-tiny"), flags)));
}

async function send(
  edge: RunningEdge,
  messages: readonly Message[],
): Promise<{ prompt: number; cached: number; reply: string; ms: number }> {
  const began = performance.now();
  const response = await fetch(`${edge.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "bench", messages, max_tokens: REPLY_TOKENS, temperature: TEMPERATURE, seed: SEED }),
    signal: AbortSignal.timeout(60_000),
  });
  if (response.status !== 200) throw new Error(`status ${response.status}: ${await response.text()}`);
  const body = (await response.json()) as {
    choices: { message: { content: string } }[];
    usage: { prompt_tokens: number; prompt_tokens_details?: { cached_tokens?: number } };
  };
  const ms = performance.now() - began;
  return {
    prompt: body.usage.prompt_tokens,
    cached: body.usage.prompt_tokens_details?.cached_tokens ?? 0,
    reply: body.choices[0]?.message.content ?? "",
    ms,
  };
}

/** Every conversation takes its turns round-robin; `pick` names the edge for each request. */
async function run(mode: string, pick: () => RunningEdge): Promise<{ first: Totals; later: Totals }> {
  const conversations: Message[][] = Array.from({ length: CONVERSATIONS }, (_, c) => [
    {
      role: "system",
      content: `${mode} conversation ${c}. You are a helpful assistant. Notes: ${fillerText(SYSTEM_WORDS, c + 1)}`,
    },
  ]);
  const totals = {
    first: { prompt: 0, cached: 0, ms: 0, requests: 0 },
    later: { prompt: 0, cached: 0, ms: 0, requests: 0 },
  };
  for (let turn = 0; turn < TURNS; turn++) {
    for (const messages of conversations) {
      messages.push({ role: "user", content: userTurn(turn) });
      const answer = await send(pick(), messages);
      messages.push({ role: "assistant", content: answer.reply });
      const into = turn === 0 ? totals.first : totals.later;
      [into.prompt, into.cached, into.ms, into.requests] = [
        into.prompt + answer.prompt,
        into.cached + answer.cached,
        into.ms + answer.ms,
        into.requests + 1,
      ];
    }
    log(`${mode}: turn ${turn + 1}/${TURNS} done`);
  }
  return totals;
}

async function withSidecars<T>(work: (sidecars: Started[]) => Promise<T>): Promise<T> {
  const sidecars = await startSidecars();
  try {
    return await work(sidecars);
  } finally {
    for (const s of sidecars) s.child.kill("SIGTERM");
  }
}

async function affinity(): Promise<{ first: Totals; later: Totals }> {
  return withSidecars(async (sidecars) => {
    const edge = await startNodeEdge({ sidecarUrls: sidecars.map((s) => s.url), port: 0, publicDir: false });
    try {
      const totals = await run("affinity", () => edge);
      const info = (await (await fetch(`${edge.url}/v1/info`)).json()) as { sidecars: { requests: { ok: number } }[] };
      log(`affinity: requests per sidecar ${info.sidecars.map((s) => s.requests.ok).join(", ")}`);
      return totals;
    } finally {
      await edge.close();
    }
  });
}

async function random(): Promise<{ first: Totals; later: Totals }> {
  return withSidecars(async (sidecars) => {
    const edges = await Promise.all(
      sidecars.map((s) => startNodeEdge({ sidecarUrl: s.url, port: 0, publicDir: false })),
    );
    const next = seededRandom(SEED);
    try {
      return await run("random", () => edges[Math.floor(next() * edges.length)] ?? (edges[0] as RunningEdge));
    } finally {
      for (const edge of edges) await edge.close();
    }
  });
}

function row(mode: string, t: { first: Totals; later: Totals }): string {
  const rate = (x: Totals) => `${((100 * x.cached) / Math.max(1, x.prompt)).toFixed(1)}%`;
  const perRequest = (x: Totals) => (x.ms / Math.max(1, x.requests)).toFixed(1);
  return (
    `| ${mode} | ${rate(t.later)} | ${t.later.cached} / ${t.later.prompt} | ${rate(t.first)} | ` +
    `${perRequest(t.later)} |`
  );
}

async function main(): Promise<void> {
  const picked = { affinity: await affinity(), random: await random() };
  console.log(
    `Affinity vs random picking: ${SIDECARS} sidecars (random-tiny, ${SEQUENCES} sequences each), ${CONVERSATIONS} ` +
      `conversations × ${TURNS} turns, round-robin, one request at a time.\n`,
  );
  console.log(
    "| picking | cache hit rate, turns 2+ | cached / prompt tokens | hit rate, turn 1 | ms per request, turns 2+ |",
  );
  console.log("|---|---|---|---|---|");
  console.log(row("affinity (rendezvous on the opening)", picked.affinity));
  console.log(row("random", picked.random));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
