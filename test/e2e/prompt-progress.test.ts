// `return_progress` on the protocols besides chat and completions (test/e2e/operator-endpoints.test.ts has those),
// through the real edge on both runtimes in front of a real sidecar serving the demo model and the `qwen2.5-coder`
// twin: each stream's exact frames with the prompt's progress in the protocol's own shape — Anthropic Messages'
// `prompt_progress` events after message_start, Responses' `response.in_progress` events with `prompt_progress`
// (sequence numbers contiguous, and read again from the middle of them by a background stream's retrieve), Ollama's
// NDJSON lines with empty content on /api/chat and /api/generate, /infill's llama-server objects — `processed` rising
// chunk by chunk to the prompt's total, the reply and usage as without progress; the official clients
// (`@anthropic-ai/sdk`, `openai`, `ollama`) streaming the reply with progress on; and `return_progress` ignored without
// `stream`.
import Anthropic from "@anthropic-ai/sdk";
import { Ollama } from "ollama";
import OpenAI from "openai";
import { afterAll, beforeAll, expect, it } from "vitest";
import { CODER_MIDDLE } from "../../gguf/twins/coder.js";
import { ensureModels } from "../../gguf/models.js";
import { PROMPT_CHUNK_TOKENS } from "../../sidecar/engine/decode/sequences.js";
import type { RunningSidecar } from "../../sidecar/start-sidecar.js";
import { startCatalogue } from "../support/catalogue.js";
import { describeOnRuntimes } from "../support/runtimes.js";
import { readEvents } from "../support/sse.js";

const CODER = "qwen2.5-coder";
/** About 1,300 tokens of the demo model's (its tokens are short): two whole chunks and a rest. */
const LONG = "the quick brown fox jumps over the lazy dog ".repeat(34);
/** About 1,300 tokens of the coder twin's (a word a token): a file of repository context before the prefix. */
const LONG_FILE = "the quick brown fox jumps over the lazy dog\n".repeat(140);
/** Ask for progress: a field of llama-server's that the clients' types do not know. */
const PROGRESS = { return_progress: true } as object;

let sidecar: RunningSidecar;

beforeAll(async () => {
  await ensureModels("models", ["demo", CODER]);
  sidecar = await startCatalogue(["demo", CODER], { sequences: 2, contextSize: 4096 });
}, 120_000);
afterAll(async () => {
  await sidecar?.stop();
});

type Json = Record<string, unknown>;
interface PromptProgress {
  total: number;
  cache: number;
  processed: number;
  time_ms: number;
}

/**
 * The progress a prompt of `total` tokens, `cache` of them cached, is reported with: a chunk of 512 tokens at a time
 * from the cache's end, the last the whole prompt; times that never go back. Checks `reported` is that.
 */
function expectProgress(reported: readonly unknown[], total: number, cache: number): void {
  expect(total - cache).toBeGreaterThan(2 * PROMPT_CHUNK_TOKENS);
  expect(total - cache).toBeLessThan(3 * PROMPT_CHUNK_TOKENS);
  expect(reported).toEqual(
    [cache + PROMPT_CHUNK_TOKENS, cache + 2 * PROMPT_CHUNK_TOKENS, total].map((processed) => ({
      total,
      cache,
      processed,
      time_ms: expect.any(Number),
    })),
  );
  const times = (reported as PromptProgress[]).map((p) => p.time_ms);
  expect(times).toEqual([...times].sort((a, b) => a - b));
}

/** The `prompt_progress` members of a stream's frames, in order. */
const progressOf = (frames: readonly Json[]): PromptProgress[] =>
  frames.flatMap((f) => (f["prompt_progress"] === undefined ? [] : [f["prompt_progress"] as PromptProgress]));

/** An NDJSON body's lines. */
async function lines(response: Response): Promise<Json[]> {
  expect(response.status).toBe(200);
  const text = await response.text();
  return text
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as Json);
}

describeOnRuntimes(
  "prompt progress in each protocol's shape",
  () => [sidecar.url],
  (edge) => {
    const post = (path: string, body: unknown): Promise<Response> =>
      fetch(`${edge().url}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" },
        body: JSON.stringify(body),
      });
    /** A stream's SSE events (keep-alive pings left out) as [event name, data]. */
    const sse = async (path: string, body: unknown): Promise<[string, Json | string][]> => {
      const response = await post(path, body);
      expect(response.status).toBe(200);
      return (await readEvents(response.body))
        .filter((e) => e.event !== "ping")
        .map((e) => [e.event, e.data === "[DONE]" ? e.data : (JSON.parse(e.data) as Json)]);
    };
    const prompt = (what: string) => `${edge().runtime} ${what} ${LONG}`;

    it("Messages: `prompt_progress` events right after message_start, then the reply as without", async () => {
      const events = await sse("/v1/messages", {
        model: "demo",
        max_tokens: 16,
        messages: [{ role: "user", content: prompt("messages") }],
        stream: true,
        return_progress: true,
      });
      for (const [name, data] of events) expect((data as Json)["type"]).toBe(name);
      const start = ((events[0] ?? [])[1] as { message: { usage: Json } }).message;
      const cache = start.usage["cache_read_input_tokens"] as number;
      const total = (start.usage["input_tokens"] as number) + cache;
      const progress = (processed: number) => [
        "prompt_progress",
        { type: "prompt_progress", prompt_progress: { total, cache, processed, time_ms: expect.any(Number) } },
      ];
      expect(events.slice(1)).toEqual([
        progress(cache + PROMPT_CHUNK_TOKENS),
        progress(cache + 2 * PROMPT_CHUNK_TOKENS),
        progress(total),
        ["content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }],
        ["content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Hi" } }],
        [
          "content_block_delta",
          { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: " there" } },
        ],
        ["content_block_stop", { type: "content_block_stop", index: 0 }],
        [
          "message_delta",
          {
            type: "message_delta",
            delta: { stop_reason: "end_turn", stop_sequence: null },
            usage: { output_tokens: 2 },
          },
        ],
        ["message_stop", { type: "message_stop" }],
      ]);
      expectProgress(progressOf(events.map(([, data]) => data as Json)), total, cache);
      expect(start.usage).toEqual({
        input_tokens: total - cache,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: cache,
        output_tokens: 0,
      });
    });

    it("Messages through @anthropic-ai/sdk: the stream skips the progress events, the message is whole", async () => {
      const anthropic = new Anthropic({ baseURL: edge().url, apiKey: "none", maxRetries: 0 });
      const stream = anthropic.messages.stream({
        model: "demo",
        max_tokens: 16,
        messages: [{ role: "user", content: prompt("anthropic-sdk") }],
        ...PROGRESS,
      });
      const types: string[] = [];
      for await (const event of stream) types.push(event.type);
      const message = await stream.finalMessage();
      expect(message.content).toEqual([{ type: "text", text: "Hi there" }]);
      expect([message.stop_reason, message.usage.output_tokens]).toEqual(["end_turn", 2]);
      expect(types).toEqual([
        "message_start",
        ...Array(3).fill("prompt_progress"),
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
      ]);
    });

    it("Responses: `response.in_progress` again with `prompt_progress`, sequence numbers contiguous", async () => {
      const events = await sse("/v1/responses", {
        model: "demo",
        input: prompt("responses"),
        stream: true,
        ...PROGRESS,
      });
      expect(events.at(-1)).toEqual(["message", "[DONE]"]);
      const frames = events.slice(0, -1).map(([, data]) => data as Json);
      for (const [name, data] of events.slice(0, -1)) expect((data as Json)["type"]).toBe(name);
      expect(frames.map((f) => f["sequence_number"])).toEqual(frames.map((_, i) => i));
      expect(frames.map((f) => f["type"])).toEqual([
        "response.created",
        ...Array(4).fill("response.in_progress"),
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
        "response.output_text.delta",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
      ]);
      const completed = frames.at(-1)?.["response"] as { usage: Json; output_text?: string };
      const total = completed.usage["input_tokens"] as number;
      const cache = (completed.usage["input_tokens_details"] as Json)["cached_tokens"] as number;
      expectProgress(progressOf(frames), total, cache);
      // Each progress event is the Response as response.in_progress announced it, `prompt_progress` beside.
      const announced = frames[1]?.["response"];
      expect(frames.slice(2, 5)).toEqual(
        progressOf(frames).map((progress, i) => ({
          type: "response.in_progress",
          response: announced,
          prompt_progress: progress,
          sequence_number: 2 + i,
        })),
      );
      expect(frames.map((f) => f["delta"]).filter((d) => d !== undefined)).toEqual(["Hi", " there"]);
      expect(completed.usage).toMatchObject({ output_tokens: 2, total_tokens: total + 2 });
    });

    it("Responses through openai: responses.stream() and create({stream}) read the reply, progress on", async () => {
      const openai = new OpenAI({ baseURL: `${edge().url}/v1`, apiKey: "none", maxRetries: 0 });
      const body = { model: "demo", input: prompt("responses-sdk"), ...PROGRESS };
      const stream = openai.responses.stream(body);
      const types: string[] = [];
      for await (const event of stream) types.push(event.type);
      const response = await stream.finalResponse();
      expect(response.output_text).toBe("Hi there");
      expect([response.status, response.usage?.output_tokens]).toEqual(["completed", 2]);
      expect(types.filter((t) => t === "response.in_progress")).toHaveLength(4);
      const raw = await openai.responses.create({ ...body, input: prompt("responses-raw"), stream: true });
      const events: Json[] = [];
      for await (const event of raw) events.push(event as unknown as Json);
      const completed = events.at(-1)?.["response"] as { usage: Json } | undefined;
      expect(progressOf(events).at(-1)?.processed).toBe(completed?.usage["input_tokens"]);
      expect(events.map((e) => e["delta"]).filter((d) => d !== undefined)).toEqual(["Hi", " there"]);
    });

    it("a background Responses stream left in its progress and read again from there: the same events", async () => {
      const openai = new OpenAI({ baseURL: `${edge().url}/v1`, apiKey: "none", maxRetries: 0 });
      const body = { model: "demo", input: prompt("background"), stream: true as const, background: true, ...PROGRESS };
      const first: Json[] = [];
      for await (const event of await openai.responses.create(body)) {
        first.push(event as unknown as Json);
        if (first.length === 3) break;
      }
      expect(first.map((e) => [e["type"], e["sequence_number"]])).toEqual([
        ["response.created", 0],
        ["response.in_progress", 1],
        ["response.in_progress", 2],
      ]);
      const id = (first[0]?.["response"] as { id: string } | undefined)?.id ?? "";
      const read = async (after?: number) => {
        const events: Json[] = [];
        const options = { stream: true as const, ...(after === undefined ? {} : { starting_after: after }) };
        for await (const event of await openai.responses.retrieve(id, options)) events.push(event as unknown as Json);
        return events;
      };
      const [rest, whole] = [await read(2), await read()];
      // The progress event it had is the one read again; the rest follows on, numbered as before.
      expect(whole.slice(0, 3)).toEqual(first);
      expect([...first, ...rest]).toEqual(whole);
      expect(progressOf(whole)).toHaveLength(3);
      const completed = whole.at(-1)?.["response"] as { output_text: string } | undefined;
      expect(completed?.output_text).toBe("Hi there");
    });

    it("Ollama /api/chat: lines with empty content and `prompt_progress`, then the reply's lines", async () => {
      const all = await lines(
        await post("/api/chat", {
          model: "demo",
          messages: [{ role: "user", content: prompt("ollama-chat") }],
          return_progress: true,
        }),
      );
      const last = all.at(-1) as Json;
      const total = last["prompt_eval_count"] as number;
      const cache = progressOf(all)[0]?.cache ?? -1;
      expectProgress(progressOf(all), total, cache);
      const line = (fields: Json) => ({ model: "demo", created_at: expect.any(String), ...fields, done: false });
      expect(all.slice(0, -1)).toEqual([
        ...progressOf(all).map((p) => line({ message: { role: "assistant", content: "" }, prompt_progress: p })),
        line({ message: { role: "assistant", content: "Hi" } }),
        line({ message: { role: "assistant", content: " there" } }),
      ]);
      expect(last).toMatchObject({ message: { role: "assistant", content: "" }, done: true, done_reason: "stop" });
      expect(last["eval_count"]).toBe(2);
    });

    it("Ollama through the ollama client: chat and generate stream the reply with progress on", async () => {
      const ollama = new Ollama({ host: edge().url });
      const chat = await ollama.chat({
        model: "demo",
        messages: [{ role: "user", content: prompt("ollama-js") }],
        stream: true,
        ...PROGRESS,
      });
      const parts: Json[] = [];
      for await (const part of chat) parts.push(part as unknown as Json);
      expect(parts.map((p) => (p["message"] as { content: string }).content).join("")).toBe("Hi there");
      expect(progressOf(parts)).toHaveLength(3);
      expect(parts.at(-1)).toMatchObject({ done: true, done_reason: "stop", eval_count: 2 });
      const generate = await ollama.generate({ model: "demo", prompt: prompt("generate"), stream: true, ...PROGRESS });
      const lines: Json[] = [];
      for await (const part of generate) lines.push(part as unknown as Json);
      const total = lines.at(-1)?.["prompt_eval_count"] as number;
      expectProgress(progressOf(lines), total, progressOf(lines)[0]?.cache ?? -1);
      expect(lines.slice(0, 3)).toEqual(
        progressOf(lines).map((p) => ({
          model: "demo",
          created_at: expect.any(String),
          response: "",
          prompt_progress: p,
          done: false,
        })),
      );
      expect(lines.map((l) => l["response"]).join("")).toBe("Hi there");
    });

    it("/infill: llama-server's objects with `prompt_progress` before the middle's", async () => {
      const events = await sse("/infill", {
        model: CODER,
        input_extra: [{ filename: "notes.txt", text: `${edge().runtime}\n${LONG_FILE}` }],
        input_prefix: "def add(a, b):\n    ",
        input_suffix: "\n\nprint(add(1, 2))\n",
        temperature: 0,
        stream: true,
        return_progress: true,
      });
      const frames = events.map(([name, data]) => {
        expect(name).toBe("message");
        return data as Json;
      });
      const last = frames.at(-1) as Json;
      const total = last["tokens_evaluated"] as number;
      const cache = (last["timings"] as Json)["cache_n"] as number;
      expectProgress(progressOf(frames), total, cache);
      const partial = (content: string, predicted: number, more: Json = {}) => ({
        index: 0,
        content,
        tokens: [],
        stop: false,
        tokens_predicted: predicted,
        tokens_evaluated: total,
        ...more,
      });
      expect(frames.slice(0, 3)).toEqual(progressOf(frames).map((p) => partial("", 0, { prompt_progress: p })));
      const middle = frames.slice(3, -1);
      expect(middle).toEqual(middle.map((f, i) => partial(f["content"] as string, i + 1)));
      expect(middle.map((f) => f["content"]).join("")).toBe(CODER_MIDDLE);
      expect(last).toMatchObject({ content: "", stop: true, stop_type: "eos", tokens_predicted: middle.length });
    });

    it("without `stream` return_progress is ignored: the whole answer, as without it", async () => {
      const messages = [{ role: "user", content: "Hi" }];
      const anthropic = await post("/v1/messages", { model: "demo", max_tokens: 8, messages, return_progress: true });
      expect(anthropic.status).toBe(200);
      expect(((await anthropic.json()) as { content: unknown }).content).toEqual([{ type: "text", text: "Hi there" }]);
      const responses = await post("/v1/responses", { model: "demo", input: "Hi", return_progress: true });
      const response = (await responses.json()) as Json & { output: { content: unknown[] }[] };
      expect(response.output.map((item) => item.content)).toEqual([
        [{ type: "output_text", text: "Hi there", annotations: [], logprobs: [] }],
      ]);
      const ollama = await post("/api/chat", { model: "demo", messages, stream: false, return_progress: true });
      const answer = (await ollama.json()) as Json;
      expect([answer["message"], answer["done"]]).toEqual([{ role: "assistant", content: "Hi there" }, true]);
      const infill = await post("/infill", {
        model: CODER,
        input_prefix: "def add(a, b):\n    ",
        input_suffix: "\n",
        return_progress: true,
      });
      const middle = (await infill.json()) as Json;
      expect([infill.status, middle["content"], middle["stop"]]).toEqual([200, CODER_MIDDLE, true]);
      for (const body of [response, answer, middle]) expect(Object.keys(body)).not.toContain("prompt_progress");
    });
  },
);
