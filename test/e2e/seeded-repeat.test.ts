// A seeded request's reply repeats whatever the cache holds and whoever shares the batch: the same
// chat at temperature 1 with seed 7 on the 60M random-weight model (whose replies change with the
// smallest change in the logits), in F16, Q4_K (weights the CPU backend repacks) and Q8_0, cold,
// prefix cached, restored from the KV tier, copied from another sequence, beside sequences that are
// full, beside three streams decoding and with three prompts joining its batch, streamed and not;
// the same for completions, native gRPC and Ollama's chat and generate (the `ollama` client). With
// flash attention as the default has it (on with the engine build) and, on F16, off as well.
// docs/decisions.md, "Replies that repeat".
import { Ollama } from "ollama";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureModels } from "../../gguf/models.js";
import { startStack, type Stack } from "../support/edge.js";
import { clientsFor, collect } from "../support/sidecar.js";

/**
 * `words` pseudo-random words, different for each seed from the first word on (over 64 tokens: worth a saved state and
 * a copy).
 */
function wordsOf(seed: number, words: number): string {
  const pool = [
    "river",
    "stone",
    "lamp",
    "orbit",
    "maple",
    "signal",
    "copper",
    "harbor",
    "violet",
    "engine",
    "quiet",
    "north",
  ];
  let x = seed * 7919 + 17;
  const out: string[] = [];
  for (let i = 0; i < words; i++) {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    out.push(pool[x % pool.length] ?? "");
  }
  return `Note ${seed}: ${out.join(" ")}.`;
}

const SYSTEM = wordsOf(1, 120);
const ASK = "Tell me about the lighthouse.";
const SEEDED = { model: "m", temperature: 1, seed: 7, max_tokens: 40 } as const;
const CHAT = {
  ...SEEDED,
  messages: [
    { role: "system" as const, content: SYSTEM },
    { role: "user" as const, content: ASK },
  ],
};
const COMPLETION = { ...SEEDED, prompt: `${SYSTEM}\n${ASK}` };

let stack: Stack;
let client: OpenAI;

/** The sum of a counter's samples (every label) on the sidecar's /metrics. */
async function counter(name: string): Promise<number> {
  const body = await (await fetch(`${stack.sidecar.url}/metrics`)).text();
  return body
    .split("\n")
    .filter((line) => line.startsWith(`${name} `) || line.startsWith(`${name}{`))
    .reduce((sum, line) => sum + Number(line.split(" ").at(-1)), 0);
}

async function chat(stream: boolean): Promise<string> {
  if (!stream) return (await client.chat.completions.create(CHAT)).choices[0]?.message.content ?? "";
  let text = "";
  for await (const chunk of await client.chat.completions.create({ ...CHAT, stream: true }))
    text += chunk.choices[0]?.delta.content ?? "";
  return text;
}

async function completion(stream: boolean): Promise<string> {
  if (!stream) return (await client.completions.create(COMPLETION)).choices[0]?.text ?? "";
  let text = "";
  for await (const chunk of await client.completions.create({ ...COMPLETION, stream: true }))
    text += chunk.choices[0]?.text ?? "";
  return text;
}

/** Another prompt, not seeded, `maxTokens` long. */
function other(seed: number, maxTokens: number): Promise<unknown> {
  return client.chat.completions.create({
    model: "m",
    messages: [{ role: "user", content: wordsOf(100 + seed, 90) }],
    max_tokens: maxTokens,
  });
}

/** Three streams of others, once each has sent its first token; the promise they end by (they go on decoding). */
async function threeDecoding(): Promise<Promise<void>> {
  const begun: Promise<void>[] = [];
  const ends: Promise<void>[] = [];
  for (const i of [0, 1, 2]) {
    let started = (): void => {};
    begun.push(new Promise<void>((resolve) => (started = resolve)));
    const body = {
      model: "m",
      messages: [{ role: "user" as const, content: wordsOf(200 + i, 30) }],
      max_tokens: 160,
      stream: true as const,
    };
    const drain = async (): Promise<void> => {
      for await (const _chunk of await client.chat.completions.create(body)) started();
    };
    ends.push(drain().finally(started));
  }
  await Promise.all(begun);
  return Promise.all(ends).then(() => undefined);
}

describe.each([
  ["random-60m", "auto"],
  ["random-60m-q4k", "auto"],
  ["random-60m-q8", "auto"],
  ["random-60m", "off"],
] as const)("on %s, flash attention %s", (name, flashAttention) => {
  beforeAll(async () => {
    const { [name]: model } = await ensureModels("models", [name]);
    stack = await startStack({
      model,
      sequences: 4,
      contextSize: 1024,
      threads: 2,
      maxQueue: 16,
      cacheRam: 256,
      flashAttention,
    });
    client = new OpenAI({ baseURL: stack.baseURL, apiKey: "x", maxRetries: 0 });
  }, 120_000);
  afterAll(async () => {
    await stack?.stop();
  });

  describe("a seeded chat at temperature 1 repeats", () => {
    let cold = "";
    beforeAll(async () => {
      cold = await chat(false);
    });

    it("cold, then with its prefix cached, streamed or not", async () => {
      expect(cold.length).toBeGreaterThan(20);
      const stream = await client.chat.completions.create({
        ...CHAT,
        stream: true,
        stream_options: { include_usage: true },
      });
      let [text, cached] = ["", 0];
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta.content ?? "";
        cached = chunk.usage?.prompt_tokens_details?.cached_tokens ?? cached;
      }
      expect(cached).toBeGreaterThan(100);
      expect(text).toBe(cold);
    });

    it("copied from the sequence that holds it while that one answers the same request", async () => {
      const copies = await counter("sidecar_prefix_copies_total");
      const both = await Promise.all([chat(false), chat(true)]);
      expect(both).toEqual([cold, cold]);
      expect(await counter("sidecar_prefix_copies_total")).toBeGreaterThan(copies);
    });

    it("beside three streams decoding, and with three prompts joining its batch", async () => {
      const ends = await threeDecoding();
      expect(await chat(true)).toBe(cold);
      await ends;
      const mine = chat(false);
      const joining = [0, 1, 2].map((i) => other(i, 24));
      expect(await mine).toBe(cold);
      await Promise.all(joining);
    });

    it("restored from the KV tier after every sequence was taken over", async () => {
      const hits = await counter("sidecar_kv_tier_hits_total");
      await Promise.all([0, 1, 2, 3].map((i) => other(10 + i, 32)));
      expect(await chat(true)).toBe(cold);
      expect(await counter("sidecar_kv_tier_hits_total")).toBeGreaterThan(hits);
    });
  });

  describe("a seeded completion repeats", () => {
    it("cold, cached, beside others decoding, streamed or not, and over native gRPC", async () => {
      const cold = await completion(false);
      expect(cold.length).toBeGreaterThan(20);
      expect(await completion(true)).toBe(cold);
      const ends = await threeDecoding();
      expect(await completion(false)).toBe(cold);
      await ends;
      const events = await collect(
        clientsFor(stack.sidecar.url).grpc.generate({
          input: { case: "prompt", value: COMPLETION.prompt },
          sampling: { temperature: 1, seed: 7 },
          maxTokens: 40,
        }),
      );
      const text = events.map((e) => (e?.case === "token" || e?.case === "finish" ? e.value.text : "")).join("");
      expect(text).toBe(cold);
    });
  });
  describe("a seeded Ollama chat and generate repeat", () => {
    it("cold, cached, beside others decoding, streamed or not", async () => {
      const ollama = new Ollama({ host: stack.edge.url });
      const options = { temperature: 1, seed: 7, num_predict: 40 };
      const chatOnce = async (stream: boolean): Promise<string> => {
        const request = { model: "m", messages: CHAT.messages, options };
        if (!stream) return (await ollama.chat({ ...request, stream: false })).message.content;
        let text = "";
        for await (const part of await ollama.chat({ ...request, stream: true })) text += part.message.content;
        return text;
      };
      const generateOnce = async (stream: boolean): Promise<string> => {
        const request = { model: "m", prompt: COMPLETION.prompt, raw: true, options };
        if (!stream) return (await ollama.generate({ ...request, stream: false })).response ?? "";
        let text = "";
        for await (const part of await ollama.generate({ ...request, stream: true })) text += part.response;
        return text;
      };
      const [chat, generate] = [await chatOnce(false), await generateOnce(false)];
      expect(chat.length).toBeGreaterThan(20);
      expect(generate.length).toBeGreaterThan(20);
      expect(await chatOnce(true)).toBe(chat);
      const ends = await threeDecoding();
      expect(await chatOnce(true)).toBe(chat);
      expect(await generateOnce(false)).toBe(generate);
      await ends;
      expect(await generateOnce(true)).toBe(generate);
    });
  });
});
