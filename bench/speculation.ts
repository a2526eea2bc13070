// `npm run bench:speculation` (~30 minutes, not part of `npm run bench`): speculative decoding as a
// newcomer meets it, on the `edit-850m` twin (random-850m's size; gguf/twins/edit.ts). Servers on
// 127.0.0.1, each started as a user starts it: this project by `npm start` (EDGE_RUNTIME=node,
// MODEL=the twin; prompt lookup on by default) and with SPEC_LOOKUP=0; llama-server of llama.cpp's
// default build (`npm run bench:peer-build -- --variant default`) with `-np 4 -c 8192` as is, and with
// each of its n-gram speculation types. From this process, outside all of them, streamed
// `/v1/completions` at temperature 0, one at a time, of two workloads: an edit (a 1,500-word file in
// the prompt, repeated with two changes) and a chat (500 words the prompt does not hold, which it
// quotes pairs of). Each server's first request of a workload evaluates its prompt (apart); then
// `--rounds` requests read the cached prompt, and their decode rates are pooled over `--runs` fresh
// starts (servers in turn). Last, the chat's cost side by side (`--pairs`; `--runs 0`: that
// alone), seeded at temperature 1: a greedy request asked again drafts from the reply it had, a seeded one from its
// own tokens alone, which is the cost being read. Every reply is checked against the twin's script. `--draft` adds
// both servers with the `edit-draft` model (the same script in one block) as their draft model. Figures:
// docs/performance.md.
import { parseArgs } from "node:util";
import { ensureModels } from "../gguf/models.js";
import { speculationWorkloads } from "../gguf/twins/edit.js";
import { streamSse } from "./clients/sse.js";
import { decodeRate, type StreamSample } from "./sample.js";
import { LLAMA_SERVER_ARGS } from "./sections/newcomer.js";
import { startLlamaServer, startOurs, type Server } from "./servers.js";
import { median } from "./stats.js";

const WORKLOADS = ["edit", "chat"] as const;
type Workload = (typeof WORKLOADS)[number];

interface Party {
  readonly name: string;
  start(model: string): Promise<Server>;
}

const BASE_PARTIES: readonly Party[] = [
  { name: "this server (npm start)", start: (m) => startOurs(m) },
  { name: "this server, SPEC_LOOKUP=0", start: (m) => startOurs(m, { SPEC_LOOKUP: "0" }) },
  { name: "llama-server", start: (m) => startLlamaServer(m, LLAMA_SERVER_ARGS) },
  ...["ngram-simple", "ngram-map-k", "ngram-mod"].map((type) => ({
    name: `llama-server --spec-type ${type}`,
    start: (m: string) => startLlamaServer(m, [...LLAMA_SERVER_ARGS, "--spec-type", type]),
  })),
];
/** The n-gram parties of llama-server: BASE_PARTIES[3..5]. */
const PEER_NGRAM = [3, 6] as const;

/** With `--draft`: both servers with the `edit-draft` model as their draft model, after the others. */
function partiesOf(draft: string | undefined): readonly Party[] {
  if (draft === undefined) return BASE_PARTIES;
  return [
    ...BASE_PARTIES,
    { name: "this server, MODEL_DRAFT=edit-draft", start: (m) => startOurs(m, { MODEL_DRAFT: draft }) },
    {
      name: "llama-server --model-draft edit-draft",
      start: (m) => startLlamaServer(m, [...LLAMA_SERVER_ARGS, "--model-draft", draft]),
    },
  ];
}

interface Measured {
  readonly first: Partial<Record<Workload, StreamSample>>;
  readonly warm: Record<Workload, StreamSample[]>;
}

/** Greedy, as the workloads' replies are checked; the side by side's seeded requests read no reply pool. */
type Sampling = { readonly temperature: 0 } | { readonly temperature: number; readonly seed: number };

async function request(
  server: Server,
  prompt: string,
  expected: string,
  maxTokens: number,
  sampling: Sampling = { temperature: 0 },
): Promise<StreamSample> {
  const body = {
    model: "m",
    prompt,
    max_tokens: maxTokens,
    ...sampling,
    stream: true,
    stream_options: { include_usage: true },
  };
  const sample = await streamSse(`${server.url}/v1/completions`, body, 600_000);
  if (sample.outcome !== "completed") throw new Error(`${server.name}: ${sample.outcome} ${sample.error ?? ""}`);
  // Exact: the reply is the twin's script, however many tokens each step took.
  if (!expected.startsWith(sample.text ?? "") || (sample.text ?? "") === "")
    throw new Error(`${server.name}: a reply off the script: ${sample.text?.slice(0, 80)}`);
  return sample;
}

/** One fresh start of a party: each workload's first request apart, then `rounds` requests. */
async function measure(party: Party, model: string, rounds: number, maxTokens: number, into: Measured): Promise<void> {
  const server = await party.start(model);
  try {
    const workloads = speculationWorkloads();
    for (const workload of WORKLOADS) {
      const { prompt, reply } = workloads[workload];
      const first = await request(server, prompt, reply, maxTokens);
      into.first[workload] ??= first;
      for (let r = 0; r < rounds; r++) into.warm[workload].push(await request(server, prompt, reply, maxTokens));
    }
  } finally {
    await server.stop();
  }
}

const rate = (samples: readonly StreamSample[]): number => median(samples.map(decodeRate));

/** The markdown table: decode tok/s and first-token ms per party and workload, and the ratios the targets read. */
function report(parties: readonly Party[], maxTokens: number, runs: number, measured: readonly Measured[]): string {
  const lines = [
    `speculative decoding on edit-850m: ${maxTokens} tokens a reply, temperature 0, medians of ${runs} runs`,
    "",
    "| server | edit: decode tok/s | edit: first token ms | chat: decode tok/s | chat: first token ms | edit: first " +
      "request decode tok/s |",
    "| --- | --- | --- | --- | --- | --- |",
  ];
  parties.forEach((party, i) => {
    const m = measured[i] as Measured;
    const ttft = (w: Workload): string => median(m.warm[w].map((s) => s.ttftMs)).toFixed(1);
    const first = m.first.edit === undefined ? "—" : decodeRate(m.first.edit).toFixed(1);
    lines.push(
      `| ${party.name} | ${rate(m.warm.edit).toFixed(1)} | ${ttft("edit")} | ${rate(m.warm.chat).toFixed(1)} | ` +
        `${ttft("chat")} | ${first} |`,
    );
  });
  const [ours, off, peer] = measured as [Measured, Measured, Measured];
  const bestPeer = Math.max(...measured.slice(...PEER_NGRAM).map((m) => rate(m.warm.edit)));
  lines.push(
    "",
    `- edit, this server ÷ llama-server: **${(rate(ours.warm.edit) / rate(peer.warm.edit)).toFixed(2)}×** (target ≥ ` +
      `2.0)`,
    `- edit, this server ÷ llama-server with its best n-gram speculation: ` +
      `**${(rate(ours.warm.edit) / bestPeer).toFixed(2)}×** (target ≥ 1.0)`,
    `- chat, this server ÷ itself with SPEC_LOOKUP=0, runs apart: ` +
      `${(rate(ours.warm.chat) / rate(off.warm.chat)).toFixed(2)}× (target: below)`,
  );
  const [draft, peerDraft] = measured.slice(BASE_PARTIES.length);
  if (draft !== undefined && peerDraft !== undefined)
    lines.push(
      `- edit, the same draft model in both: this server ÷ llama-server ` +
        `**${(rate(draft.warm.edit) / rate(peerDraft.warm.edit)).toFixed(2)}×**; chat ` +
        `${(rate(draft.warm.chat) / rate(peerDraft.warm.chat)).toFixed(2)}×`,
    );
  return lines.join("\n");
}

/**
 * The chat's cost read side by side: this server with and without drafts started together, their
 * chat requests alternating (`pairs` each), so the machine's drift between parties does not enter
 * the ratio (it moves more than the cost being read).
 */
async function sideBySide(model: string, pairs: number, maxTokens: number): Promise<string> {
  const [on, off] = await Promise.all([startOurs(model), startOurs(model, { SPEC_LOOKUP: "0" })]);
  const { prompt, reply } = speculationWorkloads().chat;
  const rates: [number[], number[]] = [[], []];
  // Seeded, so that the drafts come from the request's own tokens (a greedy request asked again drafts from the reply
  // it had: docs/decisions.md, "Speculative decoding"); the twin's script is far likelier than any other token.
  const seeded = { temperature: 1, seed: 42 };
  try {
    for (const server of [on, off]) await request(server, prompt, reply, maxTokens, seeded);
    for (let i = 0; i < pairs; i++) {
      const order = i % 2 === 0 ? [0, 1] : [1, 0];
      for (const k of order)
        rates[k]?.push(decodeRate(await request(k === 0 ? on : off, prompt, reply, maxTokens, seeded)));
    }
  } finally {
    await Promise.all([on.stop(), off.stop()]);
  }
  const [a, b] = [median(rates[0]), median(rates[1])];
  const ratio = (a / b).toFixed(2);
  return (
    `- chat side by side (${pairs} seeded requests each, alternating): drafts on ${a.toFixed(1)}, ` +
    `off ${b.toFixed(1)} ` +
    `tok/s: **${ratio}×** (target ≥ 0.97)`
  );
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      runs: { type: "string", default: "3" },
      rounds: { type: "string", default: "2" },
      tokens: { type: "string", default: "300" },
      pairs: { type: "string", default: "6" },
      draft: { type: "boolean", default: false },
    },
  });
  const [runs, rounds, maxTokens, pairs] = [
    Number(values.runs),
    Number(values.rounds),
    Number(values.tokens),
    Number(values.pairs),
  ];
  const models = await ensureModels("models", values.draft ? ["edit-850m", "edit-draft"] : ["edit-850m"]);
  const model = models["edit-850m"];
  const parties = partiesOf(values.draft ? models["edit-draft"] : undefined);
  const measured = parties.map((): Measured => ({ first: {}, warm: { edit: [], chat: [] } }));
  for (let run = 0; run < runs; run++) {
    // Parties take turns going first.
    const order = parties.map((_, i) => (i + run) % parties.length);
    for (const i of order) await measure(parties[i] as Party, model, rounds, maxTokens, measured[i] as Measured);
    console.error(`bench:speculation: run ${run + 1} of ${runs}`);
  }
  if (runs > 0) console.log(report(parties, maxTokens, runs, measured));
  console.log(await sideBySide(model, pairs, maxTokens));
}

await main();
