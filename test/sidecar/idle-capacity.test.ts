// PRIORITY_BATCH through a real model over real gRPC (proto: GenerateRequest.priority;
// docs/contract.md, "Priority"): a batch request waits behind every interactive one and outside
// --max-queue; an interactive request that finds every sequence busy preempts the batch request
// that took its sequence last, which ends ABORTED with a Preempted detail; nothing is preempted
// while a sequence is free; batch Embed calls wait behind interactive ones; batch calls waiting for
// a model's load are outside the interactive limit.
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureModels } from "../../gguf/models.js";
import {
  EmbedInputSchema,
  FinishReason,
  type GenerateResponse,
  PreemptedSchema,
  Priority,
} from "../../proto/gen/inference/v1/inference_pb.js";
import { PREEMPTED_MESSAGE } from "../../sidecar/engine/engine-errors.js";
import type { RunningSidecar } from "../../sidecar/start-sidecar.js";
import { startCatalogue } from "../support/catalogue.js";
import { watchBatches } from "../support/engine.js";
import { clientsFor, type InferenceClient, readMetrics, startTestSidecar } from "../support/sidecar.js";

/** One generation followed event by event: when it started, its events, how it ended. */
interface Call {
  readonly events: GenerateResponse["event"][];
  /** Resolves at the first token: the request holds its sequence and decodes. */
  readonly decoding: Promise<void>;
  /** The finish reason, or the error's code. */
  readonly ended: Promise<{ finish?: FinishReason; error?: ConnectError }>;
  readonly stop: () => void;
}

let sidecar: RunningSidecar;
let client: InferenceClient;
/** The order in which calls sent `start` (each names itself). */
let starts: string[] = [];

function call(name: string, priority: Priority, maxTokens: number, via: InferenceClient = client): Call {
  const leave = new AbortController();
  const events: GenerateResponse["event"][] = [];
  let decoding: () => void = () => undefined;
  const started = new Promise<void>((resolve) => {
    decoding = resolve;
  });
  const request = { input: { case: "prompt" as const, value: `Once upon a time, ${name}` }, maxTokens, priority };
  const ended = (async () => {
    try {
      for await (const { event } of via.generate(request, { signal: leave.signal })) {
        events.push(event);
        if (event.case === "start") starts.push(name);
        if (event.case === "token") decoding();
        if (event.case === "finish") return { finish: event.value.reason };
      }
      return {};
    } catch (error) {
      return { error: ConnectError.from(error) };
    } finally {
      decoding();
    }
  })();
  return { events, decoding: started, ended, stop: () => leave.abort() };
}

const metric = async (name: string) => (await readMetrics(sidecar.url))[name];

beforeAll(async () => {
  const { "random-60m": model } = await ensureModels("models", ["random-60m"]);
  // Two sequences, one interactive request may wait; long holders (3000 tokens) stop when told.
  sidecar = await startTestSidecar({ model, sequences: 2, contextSize: 4096, maxQueue: 1 });
  client = clientsFor(sidecar.url).grpc;
});
afterAll(async () => {
  await sidecar?.stop();
});

describe("PRIORITY_BATCH generations", () => {
  it(
    "serves a waiting batch request after an interactive one that came later, and never counts it against " +
      "--max-queue",
    async () => {
      starts = [];
      const holders = [call("h1", Priority.INTERACTIVE, 3000), call("h2", Priority.INTERACTIVE, 3000)];
      await Promise.all(holders.map((h) => h.decoding));
      const batch: Call[] = [];
      for (const name of ["b1", "b2", "b3"]) {
        batch.push(call(name, Priority.BATCH, 2));
        await expect.poll(() => metric("sidecar_batch_requests_waiting")).toBe(batch.length);
      }
      const interactive = call("i", Priority.INTERACTIVE, 2);
      await expect.poll(() => metric("sidecar_queue_length")).toBe(1);
      // The interactive queue (--max-queue 1) is full; the three batch requests were not refused.
      expect((await call("refused", Priority.INTERACTIVE, 2).ended).error?.code).toBe(Code.ResourceExhausted);
      holders[0]?.stop();
      expect(await interactive.ended).toEqual({ finish: FinishReason.LENGTH });
      for (const b of batch) expect(await b.ended).toEqual({ finish: FinishReason.LENGTH });
      // Interactive holders are never preempted: h2 decoded throughout.
      expect(starts.slice(2)).toEqual(["i", "b1", "b2", "b3"]);
      expect(sidecar.metrics.generationsPreempted).toBe(0);
      holders[1]?.stop();
      expect((await holders[1]?.ended)?.error?.code).toBe(Code.Canceled);
    },
  );

  it.each(["grpc", "grpc-web"] as const)(
    "preempts the batch request that took its sequence last for an interactive one (%s)",
    async (transport) => {
      const via = clientsFor(sidecar.url)[transport];
      const preemptedBefore = sidecar.metrics.generationsPreempted;
      const first = call("first", Priority.BATCH, 3000, via);
      await first.decoding;
      const last = call("last", Priority.BATCH, 3000, via);
      await last.decoding;
      expect(await metric("sidecar_batch_requests_running")).toBe(2);
      const interactive = call("i", Priority.INTERACTIVE, 3, via);
      const { error } = await last.ended;
      expect(error?.code).toBe(Code.Aborted);
      expect(error?.rawMessage).toBe(PREEMPTED_MESSAGE);
      // The detail counts the tokens it had generated: every one it sent.
      const tokens = last.events.filter((e) => e.case === "token").length;
      expect(error?.findDetails(PreemptedSchema).map((d) => d.completionTokens)).toEqual([tokens]);
      expect(await interactive.ended).toEqual({ finish: FinishReason.LENGTH });
      expect(interactive.events.filter((e) => e.case === "token")).toHaveLength(3);
      expect(sidecar.metrics.generationsPreempted).toBe(preemptedBefore + 1);
      expect(await metric("sidecar_batch_preempted_total")).toBe(preemptedBefore + 1);
      // The first batch request decodes on; its caller leaving ends it as any call.
      expect(await metric("sidecar_batch_requests_running")).toBe(1);
      first.stop();
      expect((await first.ended).error?.code).toBe(Code.Canceled);
    },
  );

  it(
    "frees the sequence at the batch request's next decode step: no batch starts while the interactive request " +
      "waits",
    async () => {
      const loaded = sidecar.models[0];
      if (loaded === undefined) throw new Error("no model loaded");
      const holders = [call("b1", Priority.BATCH, 3000), call("b2", Priority.BATCH, 3000)];
      await Promise.all(holders.map((h) => h.decoding));
      const whileWaiting: number[][] = [];
      watchBatches(loaded, (tokens) => {
        if (loaded.pool.queued > 0) whileWaiting.push(tokens);
      });
      const interactive = call("i", Priority.INTERACTIVE, 3);
      expect(await interactive.ended).toEqual({ finish: FinishReason.LENGTH });
      expect((await holders[1]?.ended)?.error?.code).toBe(Code.Aborted);
      // The step in flight when the request came was the preempted request's last.
      expect(whileWaiting).toEqual([]);
      holders[0]?.stop();
      await holders[0]?.ended;
    },
  );

  it("keeps a batch request's tokens out of the batch that evaluates an interactive prompt", async () => {
    const loaded = sidecar.models[0];
    if (loaded === undefined) throw new Error("no model loaded");
    const batch = call("batch", Priority.BATCH, 3000);
    await batch.decoding;
    const withPrompts: number[][] = [];
    watchBatches(loaded, (tokens) => {
      if (tokens.some((n) => n > 1)) withPrompts.push(tokens);
    });
    const interactive = call("interactive", Priority.INTERACTIVE, 3);
    expect(await interactive.ended).toEqual({ finish: FinishReason.LENGTH });
    const [start] = interactive.events.filter((e) => e.case === "start").map((e) => e.value);
    // One batch evaluated the interactive prompt (all of it but a cached BOS), the batch request's step not in it.
    expect(withPrompts).toEqual([[(start?.promptTokens ?? 0) - (start?.cachedTokens ?? 0)]]);
    batch.stop();
    await batch.ended;
  });

  it("preempts nothing while a sequence is free", async () => {
    const preemptedBefore = sidecar.metrics.generationsPreempted;
    const batch = call("batch", Priority.BATCH, 3000);
    await batch.decoding;
    const interactive = call("i", Priority.INTERACTIVE, 3);
    expect(await interactive.ended).toEqual({ finish: FinishReason.LENGTH });
    expect(sidecar.metrics.generationsPreempted).toBe(preemptedBefore);
    expect(await metric("sidecar_batch_requests_running")).toBe(1);
    batch.stop();
    expect((await batch.ended).error?.code).toBe(Code.Canceled);
  });

  it("reports batch requests apart from the interactive load an edge routes by (ListModels active)", async () => {
    const batch = call("batch", Priority.BATCH, 3000);
    await batch.decoding;
    const interactive = call("i", Priority.INTERACTIVE, 3000);
    await interactive.decoding;
    const [info] = (await client.listModels({})).models;
    expect([info?.active, info?.queued]).toEqual([1, 0]);
    expect(await metric("sidecar_sequences_busy")).toBe(2);
    batch.stop();
    interactive.stop();
    await Promise.all([batch.ended, interactive.ended]);
  });
});

describe("PRIORITY_BATCH embeddings", () => {
  it("runs an interactive Embed call waiting before a batch one that came first, with the same vectors", async () => {
    const loaded = sidecar.models[0];
    if (loaded === undefined) throw new Error("no model loaded");
    const signal = new AbortController().signal;
    const order: string[] = [];
    const text = (value: string) => create(EmbedInputSchema, { input: { case: "text", value } });
    const embed = (name: string, batch: boolean) =>
      loaded.embedder.embed([text("Once upon a time")], signal, batch).then((vectors) => {
        order.push(name);
        return vectors;
      });
    const [running, batch, interactive] = [embed("running", false), embed("batch", true), embed("interactive", false)];
    const vectors = await Promise.all([running, batch, interactive]);
    expect(order).toEqual(["running", "interactive", "batch"]);
    expect(vectors[1]).toEqual(vectors[0]);
    const { embeddings } = await client.embed({ inputs: [text("Once upon a time")], priority: Priority.BATCH });
    expect(embeddings[0]?.values).toHaveLength(vectors[0]?.[0]?.values.length ?? 0);
  });
});

describe("PRIORITY_BATCH calls waiting for a model's load", () => {
  it("wait outside the interactive limit (sequences + --max-queue)", async () => {
    // One sequence and no queue: one interactive call may wait for the load.
    const catalogue = await startCatalogue(["scripted", "random-tiny"], { sequences: 1, maxQueue: 0 });
    try {
      const signal = new AbortController().signal;
      const acquire = (batch: boolean) => catalogue.registry.acquire("random-tiny", { signal, batch });
      const batch = [acquire(true), acquire(true), acquire(true)];
      const interactive = acquire(false);
      await expect(acquire(false).catch((e: unknown) => ConnectError.from(e).code)).resolves.toBe(
        Code.ResourceExhausted,
      );
      const leases = await Promise.all([...batch, interactive]);
      expect(leases.map((lease) => lease.model.id)).toEqual([
        "random-tiny",
        "random-tiny",
        "random-tiny",
        "random-tiny",
      ]);
      for (const lease of leases) lease.release();
    } finally {
      await catalogue.stop();
    }
  });
});
