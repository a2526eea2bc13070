// The stateful API's speed (issue "Conversations and stored responses", Speed): on each of the
// three ways the edge keeps a conversation (stateful-paths.ts),
//  - a ~1,500-token conversation's next turn, which sends only its new message: its time to first
//    text against a cold prompt of the same length (the whole conversation, a new filler, through
//    the same protocol without the store) — the stored history must find its prefix in the
//    sidecar's KV cache;
//  - the time to first text of a short new conversation with the store on against the same
//    protocol with it off: the store's write comes after the last token, so it must add nothing.
// Client-side times to the first text (TTFT), rounds interleaved path by path.
import type { GrpcClient } from "../clients/grpc.js";
import { median } from "../stats.js";
import type { Target } from "../summary.js";
import { fmt } from "../table.js";
import { fillerText, streamPrompt, userTurn } from "../workload.js";
import { calibrate } from "./prefix.js";
import { statefulPaths, type PathName, type StatefulPath, type TurnSample } from "./stateful-paths.js";

export interface StatefulResult {
  readonly conversationTokens: number;
  readonly paths: Record<
    PathName,
    { label: string; cold: TurnSample[]; next: TurnSample[]; storeOff: TurnSample[]; storeOn: TurnSample[] }
  >;
}

/** Store-off / store-on pairs of short requests per round and path. */
const STORE_PAIRS = 5;

/** The first user message of a conversation: filler of `words` words, its own per `seed`. */
const opening = (seed: number, words: number): string =>
  `Conversation ${seed}. Notes follow. ${fillerText(words, seed)}`;

/** One round on one path: the long conversation (turn 1, its next turn, a cold twin) and a store on/off pair. */
async function round(
  path: StatefulPath,
  seed: number,
  words: number,
  into: StatefulResult["paths"][PathName],
): Promise<void> {
  const first = await path.create([{ role: "user", content: opening(seed, words) }]);
  if (!first.ok) throw new Error(`${path.label}: turn 1 failed: ${first.error ?? ""}`);
  into.next.push(await path.next(first.next, userTurn(1)));
  // The same conversation with a filler never seen before: every token evaluated.
  const twin = [
    { role: "user", content: opening(seed + 500_000, words) },
    { role: "assistant", content: first.text },
    { role: "user", content: userTurn(1) },
  ] as const;
  into.cold.push(await path.stateless(twin));
  // Short new conversations, store off and on in turn (its write comes after the last token).
  for (let i = 0; i < STORE_PAIRS; i++) {
    const off = () => path.stateless([{ role: "user", content: streamPrompt(seed * 100 + 2 * i) }]);
    const on = () => path.create([{ role: "user", content: streamPrompt(seed * 100 + 2 * i + 1) }]);
    const offFirst = i % 2 === 0;
    const a = await (offFirst ? off : on)();
    const b = await (offFirst ? on : off)();
    into.storeOff.push(offFirst ? a : b);
    into.storeOn.push(offFirst ? b : a);
  }
}

export async function runStateful(
  client: GrpcClient,
  edgeUrl: string,
  options: { rounds: number; tokens: number; timeoutMs: number },
  log: (m: string) => void,
): Promise<StatefulResult> {
  // Turn 1 a little under `tokens`: the reply and the next question bring the conversation to it.
  const { words } = await calibrate(client, options.tokens - 50);
  const paths = statefulPaths(edgeUrl, options.timeoutMs);
  const result: StatefulResult = { conversationTokens: Number.NaN, paths: {} as StatefulResult["paths"] };
  for (const path of paths)
    result.paths[path.name] = { label: path.label, cold: [], next: [], storeOff: [], storeOn: [] };
  for (let r = 0; r < options.rounds; r++) {
    for (const [i, path] of paths.entries()) await round(path, 10_000 + r * 10 + i, words, result.paths[path.name]);
    log(`stateful round ${r + 1}/${options.rounds} done`);
  }
  const next = Object.values(result.paths).flatMap((p) => p.next.filter((s) => s.ok));
  return { ...result, conversationTokens: median(next.map((s) => s.promptTokens)) };
}

export interface StatefulRow {
  readonly path: PathName;
  readonly label: string;
  readonly requests: number;
  /** Store-off / store-on pairs that both completed. */
  readonly storePairs: number;
  readonly promptTokens: number;
  readonly cachedTokens: number;
  readonly coldTtftMs: number;
  readonly nextTtftMs: number;
  readonly storeOffTtftMs: number;
  readonly storeOnTtftMs: number;
}

const ok = (samples: readonly TurnSample[]): TurnSample[] => samples.filter((s) => s.ok);
const p50 = (samples: readonly TurnSample[], of: (s: TurnSample) => number): number => median(ok(samples).map(of));

export function summarizeStateful(result: StatefulResult): StatefulRow[] {
  return (Object.keys(result.paths) as PathName[]).map((path) => {
    const p = result.paths[path];
    return {
      path,
      label: p.label,
      requests: ok(p.next).length,
      storePairs: Math.min(ok(p.storeOff).length, ok(p.storeOn).length),
      promptTokens: p50(p.next, (s) => s.promptTokens),
      cachedTokens: p50(p.next, (s) => s.cachedTokens),
      coldTtftMs: p50(p.cold, (s) => s.ttftMs),
      nextTtftMs: p50(p.next, (s) => s.ttftMs),
      storeOffTtftMs: p50(p.storeOff, (s) => s.ttftMs),
      storeOnTtftMs: p50(p.storeOn, (s) => s.ttftMs),
    };
  });
}

export function renderStateful(rows: readonly StatefulRow[], conversationTokens: number): string {
  const header = [
    "path",
    "next turns / store pairs",
    "next turn: prompt / cached tokens",
    "cold TTFT p50 ms",
    "next turn TTFT p50 ms",
    "next / cold",
    "store off TTFT ms",
    "store on TTFT ms",
    "added ms",
  ];
  const line = (cells: readonly string[]): string => `| ${cells.join(" | ")} |`;
  const body = rows.map((r) =>
    line([
      r.label,
      `${r.requests} / ${r.storePairs}`,
      `${fmt(r.promptTokens, 0)} / ${fmt(r.cachedTokens, 0)}`,
      fmt(r.coldTtftMs),
      fmt(r.nextTtftMs),
      `${fmt((r.nextTtftMs / r.coldTtftMs) * 100)}%`,
      fmt(r.storeOffTtftMs),
      fmt(r.storeOnTtftMs),
      fmt(r.storeOnTtftMs - r.storeOffTtftMs),
    ]),
  );
  return [
    `\n**Stateful conversations** (a ~${fmt(conversationTokens, 0)}-token conversation's next turn, sending only its ` +
      `new ` +
      `message, against a cold prompt of the same length through the same protocol without the store; and a short ` +
      `new ` +
      `conversation with the store on vs off; client TTFT)\n`,
    line(header),
    line(header.map(() => "---")),
    ...body,
  ].join("\n");
}

export function statefulTargets(rows: readonly StatefulRow[]): Target[] {
  return rows.flatMap((r) => {
    const ratio = r.nextTtftMs / r.coldTtftMs;
    const added = r.storeOnTtftMs - r.storeOffTtftMs;
    return [
      {
        name: `${r.label}: next turn of a ~1,500-token conversation, time to first token vs cold`,
        measured:
          `${fmt(ratio * 100)}% (${fmt(r.nextTtftMs)} vs ${fmt(r.coldTtftMs)} ms; ` +
          `${fmt(r.promptTokens - r.cachedTokens, 0)} of ` +
          `${fmt(r.promptTokens, 0)} tokens evaluated)`,
        needed: "≤ 30%",
        pass: Number.isFinite(ratio) ? ratio <= 0.3 : undefined,
      },
      {
        name: `${r.label}: added TTFT p50, store on vs off`,
        measured: `${fmt(added)} ms (${fmt(r.storeOnTtftMs)} vs ${fmt(r.storeOffTtftMs)} ms)`,
        needed: "≤ 5 ms",
        pass: Number.isFinite(added) ? added <= 5 : undefined,
      },
    ];
  });
}
