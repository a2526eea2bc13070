// llama-server's operator endpoints and fields through the real edge on both runtimes, in front of a real sidecar
// serving the demo model and random-60m: GET /slots and GET /props for an admin key, refused for a client key (403)
// and without a key (401); return_progress's prompt_progress chunks on chat and completions streams, exact and in
// order, through the `openai` client (the other protocols' progress: prompt-progress.test.ts); timings_per_token's
// timings, consistent with the usage.
import OpenAI from "openai";
import { afterAll, beforeAll, expect, it } from "vitest";
import { parseApiKeys } from "../../edge/access/keys.js";
import { EOS_ID } from "../../gguf/llama.js";
import { ensureModels } from "../../gguf/models.js";
import { PROMPT_CHUNK_TOKENS } from "../../sidecar/engine/decode/sequences.js";
import type { RunningSidecar } from "../../sidecar/start-sidecar.js";
import { startCatalogue } from "../support/catalogue.js";
import { describeOnRuntimes } from "../support/runtimes.js";
import { clientsFor } from "../support/sidecar.js";

const CLIENT_KEY = "ops-client-key";
const ADMIN_KEY = "ops-admin-key";
/** About 1,300 tokens of text (the demo model's tokens are short): two whole chunks and a rest. */
const LONG = "the quick brown fox jumps over the lazy dog ".repeat(34);

let sidecar: RunningSidecar;

beforeAll(async () => {
  await ensureModels("models", ["demo", "random-60m"]);
  sidecar = await startCatalogue(["demo", "random-60m"], { sequences: 2, contextSize: 4096 });
});
afterAll(async () => {
  await sidecar?.stop();
});

const get = (url: string, key?: string) =>
  fetch(url, key === undefined ? {} : { headers: { Authorization: `Bearer ${key}` } });

type Chunk = Record<string, unknown> & { choices: Record<string, unknown>[] };
type Usage = { prompt_tokens: number; prompt_tokens_details?: { cached_tokens: number } };

describeOnRuntimes(
  "llama-server's operator endpoints",
  () => [sidecar.url],
  (edge) => {
    const openai = (key = CLIENT_KEY) => new OpenAI({ baseURL: `${edge().url}/v1`, apiKey: key, maxRetries: 0 });

    it("/slots and /props refuse a client key (403) and no key (401), in OpenAI's error shape", async () => {
      for (const path of ["/slots", "/props?model=demo", "/slots?saved=true"]) {
        const refused = await get(`${edge().url}${path}`, CLIENT_KEY);
        expect(refused.status).toBe(403);
        expect(await refused.json()).toEqual({
          error: {
            message: "This operation needs an admin key (one of ADMIN_KEYS, sent as 'Authorization: Bearer <key>').",
            type: "invalid_request_error",
            param: null,
            code: "admin_key_required",
          },
        });
        const anonymous = await get(`${edge().url}${path}`);
        expect(anonymous.status).toBe(401);
        expect(((await anonymous.json()) as { error: { type: string } }).error.type).toBe("invalid_request_error");
      }
    });

    it("/props?model=demo: llama-server's fields for the model; without ?model= a 400 naming the models", async () => {
      await openai().chat.completions.create({ model: "demo", messages: [{ role: "user", content: "Hi" }] });
      const { models } = await clientsFor(sidecar.url).grpc.listModels({});
      const demo = models.find((m) => m.id === "demo");
      const answer = await get(`${edge().url}/props?model=demo`, ADMIN_KEY);
      expect(answer.status).toBe(200);
      expect(await answer.json()).toEqual({
        default_generation_settings: {
          id: 0,
          id_task: -1,
          n_ctx: 4096,
          // The demo model drafts from the prompt (lookup decoding) unless told not to.
          speculative: demo?.speculation !== "",
          is_processing: false,
          params: {
            n_predict: -1,
            seed: 4294967295,
            temperature: 1,
            top_k: 40,
            top_p: 0.95,
            repeat_penalty: 1,
            presence_penalty: 0,
            frequency_penalty: 0,
            stop: [],
            max_tokens: -1,
            n_probs: 0,
            timings_per_token: false,
          },
          prompt: "",
          next_token: { has_next_token: true, has_new_line: false, n_remain: -1, n_decoded: 0, stopping_word: "" },
        },
        total_slots: 2,
        model_path: "demo",
        model_alias: "demo",
        chat_template: demo?.chatTemplate,
        modalities: { vision: false, audio: false },
        build_info: `llm-edge 0.1.0 (${demo?.engineBuild})`,
        is_sleeping: false,
      });
      const unnamed = await get(`${edge().url}/props`, ADMIN_KEY);
      expect(unnamed.status).toBe(400);
      expect(((await unnamed.json()) as { error: unknown }).error).toEqual({
        message: "Several models are served: name one with ?model= (demo, random-60m).",
        type: "invalid_request_error",
        param: "model",
        code: "model_required",
      });
      expect((await get(`${edge().url}/props?model=nope`, ADMIN_KEY)).status).toBe(404);
    });

    it("/slots: each sequence, the request's id and key while busy, then idle; ?saved=true the KV states", async () => {
      const { data: stream, response } = await openai()
        .chat.completions.create({
          model: "random-60m",
          messages: [{ role: "user", content: `Go on (${edge().runtime})` }],
          max_tokens: 300,
          logit_bias: { [EOS_ID]: -100 },
          stream: true,
        })
        .withResponse();
      const requestId = response.headers.get("x-request-id");
      const [client] = await parseApiKeys(CLIENT_KEY);
      let busy: Record<string, unknown>[] = [];
      for await (const chunk of stream) {
        if (chunk.choices[0]?.delta.content === undefined) continue;
        busy = (await (await get(`${edge().url}/slots`, ADMIN_KEY)).json()) as Record<string, unknown>[];
        break;
      }
      const random = busy.find((slot) => slot["model"] === "random-60m" && slot["is_processing"] === true);
      expect(random).toMatchObject({
        id_task: -1,
        n_ctx: 4096,
        speculative: false,
        is_processing: true,
        sidecar: expect.stringMatching(/^[0-9a-f]{12}$/),
        is_prompt_processing: false,
        request_id: requestId,
        key_id: client?.id,
      });
      expect(random?.["decode_tokens_per_second"]).toBeGreaterThan(0);
      // Every sequence of both loaded models, numbered in the list's order.
      expect(busy.map((slot) => [slot["id"], slot["model"], slot["sequence"]])).toEqual([
        [0, "demo", 0],
        [1, "demo", 1],
        [2, "random-60m", 0],
        [3, "random-60m", 1],
      ]);
      const idle = async () =>
        (await (await get(`${edge().url}/slots`, ADMIN_KEY)).json()) as Record<string, unknown>[];
      await expect.poll(async () => (await idle()).filter((slot) => slot["is_processing"]).length).toBe(0);
      for (const slot of await idle())
        expect(slot).toMatchObject({
          is_processing: false,
          request_id: null,
          key_id: null,
          next_token: { has_next_token: false, has_new_line: false, n_remain: -1, n_decoded: 0 },
        });
      const saved = (await (await get(`${edge().url}/slots?saved=true`, ADMIN_KEY)).json()) as {
        object: string;
        data: unknown[];
      };
      expect(saved.object).toBe("list");
      for (const state of saved.data)
        expect(state).toEqual({
          object: "kv_state",
          model: expect.any(String),
          sidecar: random?.["sidecar"],
          n_tokens: expect.any(Number),
          bytes: expect.any(Number),
          last_used_ms: expect.any(Number),
        });
    });

    it("return_progress on a chat stream: prompt_progress chunks in order, then the reply", async () => {
      const stream = await openai().chat.completions.create({
        model: "demo",
        messages: [{ role: "user", content: `${edge().runtime} ${LONG}` }],
        stream: true,
        stream_options: { include_usage: true },
        // llama-server's fields, which the client's types do not know.
        ...({ return_progress: true } as object),
      });
      const chunks: Chunk[] = [];
      for await (const chunk of stream) chunks.push(chunk as unknown as Chunk);
      const usage = chunks.at(-1)?.["usage"] as Usage | undefined;
      const total = usage?.prompt_tokens ?? 0;
      // The template's opening is cached from the requests before: the progress counts from the cache's end.
      const cache = usage?.prompt_tokens_details?.cached_tokens ?? 0;
      expect(total - cache).toBeGreaterThan(2 * PROMPT_CHUNK_TOKENS);
      expect(total).toBeLessThan(3 * PROMPT_CHUNK_TOKENS);
      const progress = (processed: number) => ({
        choices: [{ index: 0, delta: { role: "assistant", content: null }, finish_reason: null }],
        prompt_progress: { total, cache, processed, time_ms: expect.any(Number) },
      });
      expect(chunks.map(({ id: _, created: __, model: ___, object: ____, ...rest }) => rest)).toEqual([
        { choices: [{ index: 0, delta: { role: "assistant" }, finish_reason: null }] },
        progress(cache + PROMPT_CHUNK_TOKENS),
        progress(cache + 2 * PROMPT_CHUNK_TOKENS),
        progress(total),
        { choices: [{ index: 0, delta: { content: "Hi" }, finish_reason: null }] },
        { choices: [{ index: 0, delta: { content: " there" }, finish_reason: null }] },
        { choices: [{ index: 0, delta: {}, finish_reason: "stop" }] },
        { choices: [], usage: expect.objectContaining({ prompt_tokens: total }) },
      ]);
      expect(new Set(chunks.map((chunk) => chunk["object"]))).toEqual(new Set(["chat.completion.chunk"]));
      const times = chunks.flatMap((chunk) => {
        const p = chunk["prompt_progress"] as { time_ms: number } | undefined;
        return p === undefined ? [] : [p.time_ms];
      });
      expect(times).toEqual([...times].sort((a, b) => a - b));
    });

    it("return_progress on a completions stream: the same progress in text_completion chunks", async () => {
      const stream = await openai().completions.create({
        model: "demo",
        prompt: `${edge().runtime} ${LONG}`,
        max_tokens: 1,
        stream: true,
        stream_options: { include_usage: true },
        ...({ return_progress: true } as object),
      });
      const chunks: Chunk[] = [];
      for await (const chunk of stream) chunks.push(chunk as unknown as Chunk);
      const progress = chunks.filter((chunk) => chunk["prompt_progress"] !== undefined);
      expect(progress).toHaveLength(3);
      const usage = chunks.at(-1)?.["usage"] as Usage | undefined;
      const [total, cache] = [usage?.prompt_tokens ?? 0, usage?.prompt_tokens_details?.cached_tokens ?? 0];
      expect(progress.map((chunk) => [chunk.choices, chunk["prompt_progress"]])).toEqual(
        [cache + PROMPT_CHUNK_TOKENS, cache + 2 * PROMPT_CHUNK_TOKENS, total].map((processed) => [
          [{ text: "", index: 0, logprobs: null, finish_reason: null }],
          { total, cache, processed, time_ms: expect.any(Number) },
        ]),
      );
      // Before the reply's chunks.
      expect(chunks.indexOf(progress.at(-1) as Chunk)).toBe(2);
    });

    it("timings_per_token: llama-server's timings on the answer and the last chunk, as the usage says", async () => {
      const body = {
        model: "demo",
        messages: [{ role: "user" as const, content: `timings ${edge().runtime}` }],
        ...({ timings_per_token: true } as object),
      };
      const answer = (await openai().chat.completions.create(body)) as unknown as {
        usage: { prompt_tokens: number; completion_tokens: number; prompt_tokens_details?: { cached_tokens: number } };
        timings: Record<string, number>;
      };
      const cached = answer.usage.prompt_tokens_details?.cached_tokens ?? 0;
      const t = answer.timings;
      expect(Object.keys(t)).toEqual([
        "cache_n",
        "prompt_n",
        "prompt_ms",
        "prompt_per_token_ms",
        "prompt_per_second",
        "predicted_n",
        "predicted_ms",
        "predicted_per_token_ms",
        "predicted_per_second",
      ]);
      expect(t).toMatchObject({
        cache_n: cached,
        prompt_n: answer.usage.prompt_tokens - cached,
        predicted_n: answer.usage.completion_tokens,
      });
      expect(t["prompt_ms"]).toBeGreaterThan(0);
      expect(t["prompt_per_token_ms"]).toBeCloseTo((t["prompt_ms"] ?? 0) / (t["prompt_n"] ?? 1), 6);
      expect(t["prompt_per_second"]).toBeCloseTo((1000 * (t["prompt_n"] ?? 0)) / (t["prompt_ms"] ?? 1), 3);
      expect(t["predicted_per_second"]).toBeCloseTo((1000 * (t["predicted_n"] ?? 0)) / (t["predicted_ms"] ?? 1), 3);
      const plain = await openai().chat.completions.create({ ...body, timings_per_token: false } as typeof body);
      expect(Object.keys(plain)).not.toContain("timings");
      const stream = await openai().chat.completions.create({ ...body, stream: true });
      const chunks: Chunk[] = [];
      for await (const chunk of stream) chunks.push(chunk as unknown as Chunk);
      expect(chunks.map((chunk) => chunk["timings"] !== undefined)).toEqual(
        chunks.map((_, i) => i === chunks.length - 1),
      );
      expect(chunks.at(-1)?.choices[0]?.["finish_reason"]).toBe("stop");
      // The same prompt again: its tokens are cached now, all but the last.
      const last = chunks.at(-1)?.["timings"] as Record<string, number>;
      expect(last["prompt_n"]).toBe(1);
      expect({ total: (last["prompt_n"] ?? 0) + (last["cache_n"] ?? 0), predicted_n: last["predicted_n"] }).toEqual({
        total: answer.usage.prompt_tokens,
        predicted_n: t["predicted_n"],
      });
    });
  },
  { apiKeys: CLIENT_KEY, adminKeys: ADMIN_KEY },
);
