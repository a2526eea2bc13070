// The operator's view of a real sidecar: GenerateRequest.return_progress (progress events while a long prompt is
// evaluated, one per chunk, in order, then the whole prompt right before the first token) and the Slots RPC (a busy
// sequence with its request id, client and decode rate during a request, idle after it with its tokens kept; the
// KV tier's saved state once the sequence is left idle). The demo model, on one sequence, over native gRPC.
import type { GenerateResponse, Progress } from "../../proto/gen/inference/v1/inference_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EOS_ID } from "../../gguf/llama.js";
import { ensureModels, modelPath } from "../../gguf/models.js";
import { PROMPT_CHUNK_TOKENS } from "../../sidecar/engine/decode/sequences.js";
import type { RunningSidecar } from "../../sidecar/start-sidecar.js";
import { clientsFor, collect, startTestSidecar, type InferenceClient } from "../support/sidecar.js";

let sidecar: RunningSidecar;
let client: InferenceClient;
/** About 1,300 tokens: two whole chunks and a rest. */
let prompt = "";
let promptTokens = 0;

beforeAll(async () => {
  sidecar = await startTestSidecar({ model: modelPath("demo"), sequences: 1, contextSize: 4096, cacheRam: 64 });
  client = clientsFor(sidecar.url).grpc;
  const unit = "the quick brown fox jumps over the lazy dog ";
  const perUnit = (await client.tokenize({ input: { case: "text", value: unit.repeat(10) } })).tokens.length / 10;
  prompt = unit.repeat(Math.floor(1300 / perUnit));
  promptTokens = (await client.tokenize({ input: { case: "text", value: prompt } })).tokens.length;
});
afterAll(async () => {
  await sidecar?.stop();
});

const progressOf = (events: readonly GenerateResponse["event"][]): Progress[] =>
  events.flatMap((e) => (e.case === "progress" ? [e.value] : []));

describe("return_progress", () => {
  it("a fresh prompt: a progress event per chunk, then the whole prompt, between start and first token", async () => {
    expect(promptTokens).toBeGreaterThan(2 * PROMPT_CHUNK_TOKENS + 1);
    expect(promptTokens).toBeLessThan(3 * PROMPT_CHUNK_TOKENS);
    const events = await collect(
      client.generate({ input: { case: "prompt", value: `0 ${prompt}` }, maxTokens: 2, returnProgress: true }),
    );
    const kinds = events.map((e) => e.case).filter((c) => c !== "heartbeat");
    expect(kinds).toEqual(["start", "progress", "progress", "progress", "token", "token", "finish"]);
    const progress = progressOf(events);
    const start = events[0]?.case === "start" ? events[0].value : undefined;
    const total = start?.promptTokens ?? 0;
    expect(start?.cachedTokens).toBe(0);
    expect(progress.map(({ total, cache, processed }) => ({ total, cache, processed }))).toEqual([
      { total, cache: 0, processed: PROMPT_CHUNK_TOKENS },
      { total, cache: 0, processed: 2 * PROMPT_CHUNK_TOKENS },
      { total, cache: 0, processed: total },
    ]);
    const times = progress.map((p) => p.timeMs);
    expect(times).toEqual([...times].sort((a, b) => a - b));
    expect(times[0]).toBeGreaterThan(0);
  });

  it("a prompt that continues a cached one: counted from the cache, the last equal to the whole", async () => {
    const events = await collect(
      client.generate({
        input: { case: "prompt", value: `0 ${prompt}${prompt.slice(0, 2000)}` },
        maxTokens: 1,
        returnProgress: true,
      }),
    );
    const start = events.find((e) => e.case === "start")?.value;
    const cache = start?.cachedTokens ?? 0;
    const total = start?.promptTokens ?? 0;
    expect(cache).toBeGreaterThan(2 * PROMPT_CHUNK_TOKENS);
    const progress = progressOf(events);
    const processed = progress.map((p) => p.processed);
    expect(processed[0]).toBeGreaterThan(cache);
    expect(processed).toEqual([...processed].sort((a, b) => a - b));
    expect(processed.at(-1)).toBe(total);
    expect(progress.map((p) => [p.total, p.cache])).toEqual(progress.map(() => [total, cache]));
    // Every chunk but the last is whole: the evaluated part is total - cache, in chunks from the cache's end.
    expect(processed.slice(0, -1)).toEqual(processed.slice(0, -1).map((_, i) => cache + (i + 1) * PROMPT_CHUNK_TOKENS));
  });

  it("without it, no progress event", async () => {
    const events = await collect(client.generate({ input: { case: "prompt", value: `1 ${prompt}` }, maxTokens: 1 }));
    expect(progressOf(events)).toEqual([]);
  });
});

describe("Slots", () => {
  // Random weights with the end of sequence banned go on generating (the demo model ends its reply on its own).
  let random: RunningSidecar;
  beforeAll(async () => {
    const { "random-60m": model } = await ensureModels("models", ["random-60m"]);
    random = await startTestSidecar({ model, sequences: 1, contextSize: 512 });
  });
  afterAll(async () => {
    await random?.stop();
  });

  it("a busy sequence with the request's id, client and rate during a request; idle with tokens after", async () => {
    const client = clientsFor(random.url).grpc;
    const leave = new AbortController();
    const seen: GenerateResponse["event"][] = [];
    const sampling = { logitBias: { [EOS_ID]: -100 } };
    const stream = client.generate(
      { input: { case: "prompt", value: "Once" }, maxTokens: 400, sampling, requestId: "req-7", clientId: "key-3" },
      { signal: leave.signal },
    );
    const reading = (async () => {
      for await (const { event } of stream) seen.push(event);
    })().catch(() => undefined);
    await expect.poll(() => seen.filter((e) => e.case === "token").length, { timeout: 20_000 }).toBeGreaterThan(4);
    const busy = await client.slots({});
    leave.abort();
    await reading;
    expect(busy.slots).toHaveLength(1);
    const [slot] = busy.slots;
    expect(slot).toMatchObject({
      id: 0,
      model: "random-60m",
      busy: true,
      contextSize: 512,
      requestId: "req-7",
      clientId: "key-3",
      processingPrompt: false,
    });
    expect(slot?.generatedTokens).toBeGreaterThan(4);
    expect(slot?.tokens).toBeGreaterThanOrEqual((slot?.promptTokens ?? 0) + (slot?.generatedTokens ?? 0) - 1);
    expect(slot?.decodeTokensPerSecond).toBeGreaterThan(0);
    await expect.poll(async () => (await client.slots({})).slots[0]?.busy).toBe(false);
    const [idle] = (await client.slots({ model: "random-60m" })).slots;
    expect(idle).toMatchObject({ id: 0, busy: false, requestId: "", clientId: "", generatedTokens: 0 });
    expect(idle?.tokens).toBeGreaterThan(0);
  });

  it("the KV tier's states: tokens, bytes and last use of the state saved when the sequence went idle", async () => {
    const before = Date.now();
    const events = await collect(client.generate({ input: { case: "prompt", value: `2 ${prompt}` }, maxTokens: 1 }));
    // The prompt's tokens are in the sequence; the one token generated was sampled, never evaluated.
    const held = events.find((e) => e.case === "start")?.value.promptTokens;
    const newest = async () => (await client.slots({})).saved[0];
    await expect
      .poll(async () => Number((await newest())?.lastUsedMs), { timeout: 10_000 })
      .toBeGreaterThanOrEqual(before);
    const saved = (await client.slots({})).saved;
    const [state] = saved;
    expect(state?.tokens).toBe(held);
    expect(state?.model).toBe("demo");
    expect(Number(state?.bytes)).toBeGreaterThan(0);
    expect(Number(state?.lastUsedMs)).toBeGreaterThanOrEqual(before);
    expect(Number(state?.lastUsedMs)).toBeLessThanOrEqual(Date.now());
    const used = saved.map((s) => Number(s.lastUsedMs));
    expect(used).toEqual([...used].sort((a, b) => b - a));
  });

  it("a model the catalogue does not hold is NOT_FOUND", async () => {
    await expect(client.slots({ model: "no-such-model" })).rejects.toThrow(/no-such-model/);
  });
});
