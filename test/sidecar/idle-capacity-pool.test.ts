// The sequence pool's batch lane with fake sequences (sidecar/engine/llama/idle-capacity.ts): batch
// waiters behind interactive ones, outside --max-queue and the queue timeout; an interactive waiter
// preempts the batch request that took its sequence last, and a collecting batch request gives
// back what it holds. The same through a real model and gRPC: idle-capacity.test.ts.
import { Code, ConnectError } from "@connectrpc/connect";
import type { LlamaContext, LlamaContextSequence, Token } from "node-llama-cpp";
import { describe, expect, it } from "vitest";
import { SequencePool } from "../../sidecar/engine/llama/sequence-pool.js";
import { OneAtATime } from "../../sidecar/engine/llama/one-at-a-time.js";

function fakeContext(count: number): LlamaContext {
  const sequences = Array.from(
    { length: count },
    (_, id) =>
      ({
        id,
        nextTokenIndex: 0,
        compareContextTokens: () => ({ firstDifferentIndex: 0 }),
      }) as unknown as LlamaContextSequence,
  );
  return {
    get sequencesLeft() {
      return sequences.length;
    },
    getSequence: () => sequences.shift(),
  } as unknown as LlamaContext;
}

const prompt = [1] as unknown as Token[];
const codeOf = (e: unknown) => ConnectError.from(e).code;

/** A batch claim that records its preemption under `name`. */
function claim(name: string, preempted: string[]) {
  return { preempt: () => preempted.push(name) };
}

describe("SequencePool: batch requests in idle capacity", () => {
  it(
    "serves every interactive waiter before any batch waiter, each lane in order; batch waiters are outside " +
      "--max-queue",
    async () => {
      const pool = new SequencePool(fakeContext(1), { maxQueue: 1, queueTimeoutMs: 10_000 });
      const signal = new AbortController().signal;
      const held = await pool.acquire(prompt, signal);
      const order: string[] = [];
      const note = (name: string) => (s: LlamaContextSequence) => {
        order.push(name);
        return s;
      };
      const batch = [1, 2, 3].map((i) => pool.acquire(prompt, signal, "", claim(`b${i}`, [])).then(note(`b${i}`)));
      const interactive = pool.acquire(prompt, signal).then(note("i"));
      await expect(pool.acquire(prompt, signal).catch(codeOf)).resolves.toBe(Code.ResourceExhausted);
      expect([pool.queued, pool.queuedBatch]).toEqual([1, 3]);
      pool.release(held);
      for (const next of [interactive, ...batch]) pool.release(await next);
      expect(order).toEqual(["i", "b1", "b2", "b3"]);
      expect(pool.batchRunning).toEqual({ requests: 0, sequences: 0 });
    },
  );

  it("never times a batch waiter out", async () => {
    const pool = new SequencePool(fakeContext(1), { maxQueue: 4, queueTimeoutMs: 20 });
    const signal = new AbortController().signal;
    const held = await pool.acquire(prompt, signal);
    const batch = pool.acquire(prompt, signal, "", claim("b", []));
    await expect(pool.acquire(prompt, signal).catch(codeOf)).resolves.toBe(Code.DeadlineExceeded);
    expect(pool.queuedBatch).toBe(1);
    pool.release(held);
    expect(await batch).toBe(held);
  });

  it(
    "preempts the batch request that took its sequence last, once per interactive waiter, never an interactive " +
      "one",
    async () => {
      const pool = new SequencePool(fakeContext(3), { maxQueue: 4, queueTimeoutMs: 10_000 });
      const signal = new AbortController().signal;
      const preempted: string[] = [];
      const first = await pool.acquire(prompt, signal, "", claim("first", preempted));
      await pool.acquire(prompt, signal);
      const last = await pool.acquire(prompt, signal, "", claim("last", preempted));
      expect(pool.batchRunning).toEqual({ requests: 2, sequences: 2 });
      const waiting = pool.acquire(prompt, signal);
      expect(preempted).toEqual(["last"]);
      // A batch waiter preempts nothing.
      const batch = pool.acquire(prompt, signal, "", claim("waiting", preempted));
      expect(preempted).toEqual(["last"]);
      pool.release(last);
      expect(await waiting).toBe(last);
      const second = pool.acquire(prompt, signal);
      expect(preempted).toEqual(["last", "first"]);
      pool.release(first);
      expect(await second).toBe(first);
      expect(pool.batchRunning).toEqual({ requests: 0, sequences: 0 });
      expect(pool.queuedBatch).toBe(1);
      pool.release(await second);
      expect(await batch).toBe(first);
    },
  );

  it("preempts nothing when a sequence is free", async () => {
    const pool = new SequencePool(fakeContext(2), { maxQueue: 4, queueTimeoutMs: 10_000 });
    const signal = new AbortController().signal;
    const preempted: string[] = [];
    await pool.acquire(prompt, signal, "", claim("batch", preempted));
    await pool.acquire(prompt, signal);
    expect(preempted).toEqual([]);
    expect(pool.batchRunning).toEqual({ requests: 1, sequences: 1 });
  });

  it("takes back what a batch request collecting sequences holds when an interactive request waits", async () => {
    const pool = new SequencePool(fakeContext(2), { maxQueue: 4, queueTimeoutMs: 10_000 });
    const signal = new AbortController().signal;
    const held = await pool.acquire(prompt, signal);
    const many = pool.acquireMany(prompt, signal, "", 2, claim("many", []));
    expect([pool.busy, pool.queuedBatch]).toEqual([2, 1]);
    const interactive = await pool.acquire(prompt, signal);
    expect(interactive).not.toBe(held);
    expect([pool.queued, pool.queuedBatch]).toEqual([0, 1]);
    pool.release(held);
    pool.release(interactive);
    expect(new Set(await many)).toEqual(new Set([held, interactive]));
    expect(pool.batchRunning).toEqual({ requests: 1, sequences: 2 });
  });
});

describe("OneAtATime: batch calls", () => {
  it("runs every interactive call waiting before a batch one; batch calls are outside its bound", async () => {
    const queue = new OneAtATime(1, "embedding");
    const order: string[] = [];
    const work = (name: string) => async () => {
      order.push(name);
    };
    const calls = [
      queue.run(work("i1")),
      queue.run(work("b1"), true),
      queue.run(work("b2"), true),
      queue.run(work("i2")),
    ];
    expect(() => queue.run(work("i3"))).toThrow(expect.objectContaining({ code: Code.ResourceExhausted }));
    await Promise.all(calls);
    expect(order).toEqual(["i1", "i2", "b1", "b2"]);
  });
});
