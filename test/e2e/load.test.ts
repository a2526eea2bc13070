// Many users at once, through the edge on Node and a real sidecar: batching without cross-talk,
// admission control (429 with Retry-After, never a hang), cancelled waiters that never start, and
// prefix reuse that reports cached tokens and changes nothing in the reply.
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { modelPath } from "../../gguf/models.js";
import { startStack } from "../support/edge.js";
import { readMetrics } from "../support/sidecar.js";
import { CHAT_REPLY, STORY } from "../support/scripted.js";

/** Starts a streaming completion and resolves once its first chunk has arrived. */
async function startSong(baseURL: string, maxTokens: number, signal?: AbortSignal): Promise<{ done: Promise<string> }> {
  const response = await fetch(`${baseURL}/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ prompt: "Let us sing. Sing", max_tokens: maxTokens, stream: true }),
    ...(signal ? { signal } : {}),
  });
  expect(response.status).toBe(200);
  const reader = response.body!.getReader();
  const first = await reader.read();
  const decoder = new TextDecoder();
  let body = decoder.decode(first.value, { stream: true });
  const done = (async () => {
    for (;;) {
      const { done: end, value } = await reader.read();
      if (end) return body;
      body += decoder.decode(value, { stream: true });
    }
  })();
  return { done };
}

describe("concurrent streams", () => {
  it("each get their own exact text, more requests than sequences", async () => {
    const stack = await startStack({ sequences: 4, contextSize: 512, maxQueue: 16 });
    try {
      const client = new OpenAI({ baseURL: stack.baseURL, apiKey: "x", maxRetries: 0 });
      const jobs = Array.from({ length: 10 }, (_, i) => {
        switch (i % 3) {
          case 0:
            return client.completions
              .create({ model: "m", prompt: "Once upon a time", seed: i })
              .then((r) => [r.choices[0]?.text, STORY]);
          case 1:
            return client.chat.completions
              .create({ model: "m", messages: [{ role: "user", content: `Question ${i}` }], temperature: 1, seed: i })
              .then((r) => [r.choices[0]?.message.content, CHAT_REPLY]);
          default:
            return client.completions
              .create({ model: "m", prompt: "Let us sing. Sing", max_tokens: 20 + i })
              .then((r) => [r.choices[0]?.text, " la".repeat(20 + i)]);
        }
      });
      for (const [got, want] of await Promise.all(jobs)) expect(got).toBe(want);
    } finally {
      await stack.stop();
    }
  });
});

describe("admission control", () => {
  it("refuses a request at once with 429 and Retry-After when the queue is full, while the others finish", async () => {
    // The waiting request waits for the whole song: on a loaded machine that outlasted the tests'
    // usual 10 s queue timeout (a 504 instead of its answer).
    const stack = await startStack({ sequences: 1, maxQueue: 1, contextSize: 4096, queueTimeoutMs: 120_000 });
    try {
      const running = await startSong(stack.baseURL, 1500);
      const waiting = fetch(`${stack.baseURL}/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ prompt: "Once upon a time" }),
      });
      await expect.poll(async () => (await readMetrics(stack.sidecar.url)).sidecar_queue_length).toBe(1);

      const refused = await fetch(`${stack.baseURL}/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ messages: [{ role: "user", content: "Hi" }], stream: true }),
      });
      expect(refused.status).toBe(429);
      expect(refused.headers.get("retry-after")).toMatch(/^\d+$/);
      expect(await refused.json()).toMatchObject({ error: { type: "rate_limit_error" } });

      expect(await running.done).toContain("data: [DONE]");
      const waited = await waiting;
      expect(waited.status).toBe(200);
      expect(((await waited.json()) as { choices: { text: string }[] }).choices[0]?.text).toBe(STORY);
    } finally {
      await stack.stop();
    }
  });

  it("never starts a queued request whose client left", async () => {
    const stack = await startStack({ sequences: 1, maxQueue: 4, contextSize: 4096 });
    try {
      const running = await startSong(stack.baseURL, 3000);
      const leaving = new AbortController();
      const queued = fetch(`${stack.baseURL}/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ prompt: "Once upon a time", stream: true }),
        signal: leaving.signal,
      }).catch((e: unknown) => e);
      await expect.poll(async () => (await readMetrics(stack.sidecar.url)).sidecar_queue_length).toBe(1);
      leaving.abort();
      await queued;
      await expect.poll(async () => (await readMetrics(stack.sidecar.url)).sidecar_queue_length).toBe(0);
      await running.done;
      const metrics = await readMetrics(stack.sidecar.url);
      expect(metrics.sidecar_requests_started_total).toBe(1);
      expect(metrics.sidecar_requests_cancelled_in_queue_total).toBe(1);
      expect(metrics.sidecar_tokens_generated_total).toBe(3000);
    } finally {
      await stack.stop();
    }
  });
});

describe("prefix reuse", () => {
  // Greedy decoding: at temperature > 0 a random-weight model's near-equal probabilities can be
  // reordered by the last bits of batch arithmetic (a prompt evaluated in one batch or token by
  // token), as in llama.cpp itself; a wrong cache would change the greedy reply.
  it("reports cached tokens and gives the same text as a cold run", async () => {
    const stack = await startStack({ model: modelPath("random-tiny"), sequences: 2, contextSize: 1024 });
    try {
      const client = new OpenAI({ baseURL: stack.baseURL, apiKey: "x", maxRetries: 0 });
      const system = `You are a careful assistant. ${"Answer briefly and precisely. ".repeat(40)}`;
      const ask = (question: string) =>
        client.chat.completions.create({
          model: "m",
          messages: [
            { role: "system", content: system },
            { role: "user", content: question },
          ],
          max_tokens: 24,
          temperature: 0,
        });
      const cold = await ask("What is a llama?");
      expect(cold.usage?.prompt_tokens_details?.cached_tokens).toBe(0);
      const warm = await ask("What is a llama?");
      // Everything but the last prompt token comes from the cache; the reply is the same.
      expect(warm.usage?.prompt_tokens_details?.cached_tokens).toBe((cold.usage?.prompt_tokens ?? 0) - 1);
      expect(warm.choices[0]?.message.content).toBe(cold.choices[0]?.message.content);
      // Another question shares the system prompt.
      const other = await ask("And an alpaca?");
      expect(other.usage?.prompt_tokens_details?.cached_tokens).toBeGreaterThan(200);
      expect(other.usage?.prompt_tokens_details?.cached_tokens).toBeLessThan(other.usage?.prompt_tokens ?? 0);
    } finally {
      await stack.stop();
    }
  });
});
