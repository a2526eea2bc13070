// Many sessions on one box: more agent sessions than sequences, taking turns round-robin, one
// request at a time (so sequences, not concurrency, are the limit). Each session opens with a long
// prompt of its own and grows a turn at a time (its previous reply and a short user turn), through
// `/v1/chat/completions`. A session that comes back finds its sequence taken over by others: its
// returning turn's time to first token shows whether the server kept its prompt somewhere (the
// sidecar's KV tier, `--cache-ram`; llama-server's prompt cache) or evaluates it all again.
import { streamSse } from "../clients/sse.js";
import { referencePeer } from "../peer-paths.js";
import type { StreamSample } from "../sample.js";
import { median, quantile } from "../stats.js";
import { fmt } from "../table.js";
import { fillerText, SEED, streamPrompt, TEMPERATURE, userTurn } from "../workload.js";

/** Tokens generated per turn: the prompt is what is measured here. */
export const SESSION_REPLY_TOKENS = 16;

export interface SessionsOptions {
  readonly sessions: number;
  readonly sequences: number;
  /** Tokens of each session's opening prompt. */
  readonly tokens: number;
  readonly turns: number;
  readonly timeoutMs: number;
}

/** Tokens per sequence: the opening, every turn's reply and user message (with the template's tokens), and a margin. */
export function sessionsContextSize(tokens: number, turns: number): number {
  return tokens + turns * (SESSION_REPLY_TOKENS + 64) + 256;
}

export interface SessionTurn {
  readonly session: number;
  readonly turn: number;
  readonly sample: StreamSample;
}

export interface SessionsParty {
  readonly label: string;
  readonly turns: SessionTurn[];
}

export interface SessionsResult {
  readonly options: SessionsOptions;
  readonly contextSize: number;
  readonly parties: SessionsParty[];
}

interface Message {
  readonly role: "system" | "user" | "assistant";
  readonly content: string;
}

/** Session `session`'s opening: its number first and a filler of its own, so no two share more than a few tokens. */
export const sessionOpening = (session: number, words: number): string =>
  `Session ${session}. You are a coding agent working in a repository. Its notes follow. ` +
  `${fillerText(words, 20_000 + session)}`;

/** A streaming chat completions body; `model` "bench" reaches a one-model catalogue's model. */
export function chatBody(messages: readonly Message[], maxTokens: number, model = "bench"): Record<string, unknown> {
  return {
    model,
    messages,
    max_tokens: maxTokens,
    temperature: TEMPERATURE,
    seed: SEED,
    stream: true,
    stream_options: { include_usage: true },
  };
}

/** One party's run: a warm-up, then every session's turns round-robin, one request at a time. */
export async function runSessionParty(
  label: string,
  baseUrl: string,
  words: number,
  options: SessionsOptions,
  log: (m: string) => void,
): Promise<SessionsParty> {
  const url = `${baseUrl}/v1/chat/completions`;
  await streamSse(url, chatBody([{ role: "user", content: streamPrompt(7) }], 4), options.timeoutMs);
  const histories: Message[][] = Array.from({ length: options.sessions }, (_, s) => [
    { role: "system", content: sessionOpening(s, words) },
  ]);
  const party: SessionsParty = { label, turns: [] };
  for (let turn = 0; turn < options.turns; turn++) {
    for (const [session, history] of histories.entries()) {
      history.push({ role: "user", content: userTurn(turn + 1) });
      const sample = await streamSse(url, chatBody(history, SESSION_REPLY_TOKENS), options.timeoutMs);
      history.push({ role: "assistant", content: sample.text ?? "" });
      party.turns.push({ session, turn, sample });
    }
    log(`sessions: ${label}: turn ${turn + 1}/${options.turns} of ${options.sessions} sessions done`);
  }
  return party;
}

export interface SessionsRow {
  readonly label: string;
  /** Returning turns completed / sent. */
  readonly returning: string;
  readonly coldTtftP50: number;
  readonly returningTtftP50: number;
  readonly returningTtftP99: number;
  /** Median prompt tokens of a returning turn. */
  readonly returningPromptTokens: number;
  /** Cached tokens over prompt tokens, summed over the returning turns. */
  readonly cachedShare: number;
  /** Returning TTFT p50 over llama-server's (its default build's, else the prebuilt-like one's). */
  readonly vsPeer: number;
}

const completed = (turns: readonly SessionTurn[]): StreamSample[] =>
  turns.map((t) => t.sample).filter((s) => s.outcome === "completed");
const sum = (values: readonly number[]): number => values.reduce((a, b) => a + b, 0);

export function summarizeSessions(result: SessionsResult): SessionsRow[] {
  const rows = result.parties.map((p) => {
    const cold = completed(p.turns.filter((t) => t.turn === 0));
    const back = p.turns.filter((t) => t.turn > 0);
    const done = completed(back);
    const ttft = done.map((s) => s.ttftMs);
    return {
      label: p.label,
      returning: `${done.length} / ${back.length}`,
      coldTtftP50: median(cold.map((s) => s.ttftMs)),
      returningTtftP50: median(ttft),
      returningTtftP99: quantile(ttft, 0.99),
      returningPromptTokens: median(done.map((s) => s.promptTokens ?? Number.NaN)),
      cachedShare: sum(done.map((s) => s.cachedTokens ?? 0)) / sum(done.map((s) => s.promptTokens ?? 0)),
    };
  });
  const peer = referencePeer(rows, (r) => r.label);
  return rows.map((r) => ({ ...r, vsPeer: peer ? r.returningTtftP50 / peer.returningTtftP50 : Number.NaN }));
}

export function renderSessions(
  rows: readonly SessionsRow[],
  result: SessionsResult,
  title = "Many sessions on one box",
): string {
  const o = result.options;
  const header = [
    "server",
    "returning turns done",
    "cold TTFT p50 ms",
    "returning TTFT p50 ms",
    "returning TTFT p99 ms",
    "returning prompt tokens",
    "cached share",
    `returning vs ${referencePeer(rows, (r) => r.label)?.label ?? "llama-server"}`,
  ];
  const line = (cells: readonly string[]): string => `| ${cells.join(" | ")} |`;
  const body = rows.map((r) =>
    line([
      r.label,
      r.returning,
      fmt(r.coldTtftP50, 0),
      fmt(r.returningTtftP50, 0),
      fmt(r.returningTtftP99, 0),
      fmt(r.returningPromptTokens, 0),
      `${fmt(r.cachedShare * 100)}%`,
      Number.isFinite(r.vsPeer) ? `${fmt(r.vsPeer, 2)}×` : "–",
    ]),
  );
  return [
    `\n**${title}** (${o.sessions} sessions, ${o.sequences} sequences × ` +
      `${fmt(result.contextSize, 0)} tokens, ` +
      `~${fmt(o.tokens, 0)}-token openings, ${o.turns} turns each, round-robin, one request at a time, ` +
      `${SESSION_REPLY_TOKENS} tokens ` +
      "per reply; cold = a session's first turn, returning = its later turns, each resending its history; client " +
      "TTFT through " +
      "/v1/chat/completions; cached share = cached over prompt tokens of the returning turns)\n",
    line(header),
    line(header.map(() => "---")),
    ...body,
  ].join("\n");
}

/** The headline figures of the section (results-file.ts compares them run to run). */
export function sessionsHeadline(rows: readonly SessionsRow[], headline: Record<string, number>): void {
  for (const r of rows) {
    headline[`sessions ${r.label} returning TTFT p50 ms`] = r.returningTtftP50;
    headline[`sessions ${r.label} cold TTFT p50 ms`] = r.coldTtftP50;
  }
}
