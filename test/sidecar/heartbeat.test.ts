// Long waits are not silences: a queued request and a long prompt get heartbeat events; a client
// that leaves during a long prompt stops it between chunks (the next request finds only part of
// the prompt in the cache).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EOS_ID } from "../../gguf/llama.js";
import { ensureModels } from "../../gguf/models.js";
import { PROMPT_CHUNK_TOKENS } from "../../sidecar/engine/decode/sequences.js";
import type { RunningSidecar } from "../../sidecar/start-sidecar.js";
import { clientsFor, startTestSidecar } from "../support/sidecar.js";

describe("heartbeats and long prompts", () => {
  let sidecar: RunningSidecar;
  beforeAll(async () => {
    const { "random-60m": model } = await ensureModels("models", ["random-60m"]);
    sidecar = await startTestSidecar({ model, sequences: 1, contextSize: 8192, heartbeatMs: 100 });
  });
  afterAll(async () => {
    await sidecar?.stop();
  });

  it("sends heartbeats while a request waits in the queue, before its start", async () => {
    const client = clientsFor(sidecar.url).grpc;
    const holder = new AbortController();
    const held = (async () => {
      // Its end of sequence banned: random weights may sample it, which would free the sequence early.
      const sampling = { logitBias: { [EOS_ID]: -100 } };
      for await (const _ of client.generate(
        { input: { case: "prompt", value: "Once" }, maxTokens: 4000, sampling },
        { signal: holder.signal },
      ))
        void _;
    })().catch(() => undefined);
    await expect.poll(() => sidecar.metrics.generationsActive).toBe(1);
    const seen: string[] = [];
    const waiter = new AbortController();
    const waiting = (async () => {
      for await (const { event } of client.generate(
        { input: { case: "prompt", value: "Twice" }, maxTokens: 2 },
        { signal: waiter.signal },
      )) {
        seen.push(event.case ?? "");
        if (seen.filter((c) => c === "heartbeat").length === 3) holder.abort();
      }
    })();
    await waiting;
    await held;
    const start = seen.indexOf("start");
    expect(seen.slice(0, 3), seen.join(" ")).toEqual(["heartbeat", "heartbeat", "heartbeat"]);
    expect(start).toBeGreaterThanOrEqual(3);
    expect(seen.at(-1)).toBe("finish");
  });

  it("stops a long prompt between chunks when its client leaves", async () => {
    const client = clientsFor(sidecar.url).grpc;
    // About 7,000 tokens: several chunks, well inside the 8,192-token context.
    const unit = "the quick brown fox jumps over the lazy dog ";
    const perUnit = (await client.tokenize({ input: { case: "text", value: unit.repeat(10) } })).tokens.length / 10;
    const prompt = unit.repeat(Math.floor(7000 / perUnit));
    const { tokens } = await client.tokenize({ input: { case: "text", value: prompt } });
    expect(tokens.length).toBeGreaterThan(6 * PROMPT_CHUNK_TOKENS);
    expect(tokens.length).toBeLessThan(8000);
    const aborted = sidecar.metrics.generationsAborted;
    const leaving = new AbortController();
    const events: string[] = [];
    const first = (async () => {
      for await (const { event } of client.generate(
        { input: { case: "prompt", value: prompt }, maxTokens: 4 },
        { signal: leaving.signal },
      )) {
        events.push(event.case ?? "");
        if (events.filter((c) => c === "heartbeat").length === 2) leaving.abort(); // well into the prompt
      }
    })().catch(() => undefined);
    await first;
    // The chunk in flight ends first (over a second on a busy 2-core machine); that the rest of the
    // prompt was never evaluated is what the cache check below shows.
    await expect.poll(() => sidecar.metrics.generationsAborted, { timeout: 10_000 }).toBe(aborted + 1);
    expect(events).toContain("start");
    expect(events).not.toContain("token");
    // The same prompt again: only the chunks evaluated before the client left are in the cache.
    let cached = -1;
    for await (const { event } of client.generate({ input: { case: "prompt", value: prompt }, maxTokens: 1 })) {
      if (event.case === "start") {
        cached = event.value.cachedTokens;
        break;
      }
    }
    expect(cached).toBeGreaterThan(0);
    expect(cached).toBeLessThan(tokens.length - PROMPT_CHUNK_TOKENS);
    expect(cached % PROMPT_CHUNK_TOKENS).toBeLessThanOrEqual(1);
  });
});
