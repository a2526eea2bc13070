import { Code, ConnectError } from "@connectrpc/connect";
import type { LlamaContext, LlamaContextSequence, Token } from "node-llama-cpp";
import { setMaxListeners } from "node:events";
import { describe, expect, it } from "vitest";
import { savedWhenTaken } from "../../sidecar/engine/llama/kv-tier.js";
import { RUN_COST_TOKENS, SequencePool } from "../../sidecar/engine/llama/sequence-pool.js";

/** Sequences that only know their cached tokens: enough for the pool's choices. */
function fakeContext(caches: number[][]): LlamaContext {
  const sequences = caches.map(
    (tokens, id) =>
      ({
        id,
        nextTokenIndex: tokens.length,
        compareContextTokens(prompt: number[]) {
          let i = 0;
          while (i < tokens.length && i < prompt.length && tokens[i] === prompt[i]) i++;
          return { firstDifferentIndex: i };
        },
      }) as unknown as LlamaContextSequence,
  );
  return {
    get sequencesLeft() {
      return sequences.length;
    },
    getSequence: () => sequences.shift(),
  } as unknown as LlamaContext;
}

const tokens = (...ids: number[]) => ids as unknown as Token[];
const idOf = (s: LlamaContextSequence) => (s as unknown as { id: number }).id;
const codeOf = (e: unknown) => ConnectError.from(e).code;

describe("SequencePool", () => {
  it("takes the free sequence with the longest shared prefix", async () => {
    const pool = new SequencePool(
      fakeContext([
        [1, 5, 6],
        [1, 2, 3, 4],
        [1, 2],
      ]),
      { maxQueue: 0, queueTimeoutMs: 1000 },
    );
    const signal = new AbortController().signal;
    expect(idOf(await pool.acquire(tokens(1, 2, 3, 9), signal))).toBe(1);
    expect(idOf(await pool.acquire(tokens(1, 2, 7), signal))).toBe(2);
  });

  it("takes over a sequence whose tokens a saved state keeps before one whose tokens it would lose", async () => {
    // Sequence 0 holds 8 tokens of another conversation, kept by the KV tier; 1 holds 4 not kept.
    const caches = [
      [30, 31, 32, 33, 34, 35, 36, 37],
      [40, 41, 42, 43],
    ];
    const signal = new AbortController().signal;
    const prompt = tokens(1, 2, 3);
    const without = new SequencePool(fakeContext(caches), { maxQueue: 0, queueTimeoutMs: 1000 });
    expect(idOf(await without.acquire(prompt, signal))).toBe(1);
    const kept = new SequencePool(fakeContext(caches), {
      maxQueue: 0,
      queueTimeoutMs: 1000,
      kept: (sequence) => idOf(sequence) === 0,
    });
    expect(idOf(await kept.acquire(prompt, signal))).toBe(0);
  });

  it(
    "takes an empty sequence rather than throw away another conversation's cache for a short shared " + "header",
    async () => {
      // Sequence 0 holds a conversation (a 3-token template header, then its own 6 tokens); 1 is empty.
      const pool = new SequencePool(fakeContext([[1, 2, 3, 10, 11, 12, 13, 14, 15], []]), {
        maxQueue: 0,
        queueTimeoutMs: 1000,
      });
      const signal = new AbortController().signal;
      const other = await pool.acquire(tokens(1, 2, 3, 20, 21, 22), signal);
      expect(idOf(other)).toBe(1);
      pool.release(other);
      // The first conversation's next turn still finds its cache.
      expect(idOf(await pool.acquire(tokens(1, 2, 3, 10, 11, 12, 13, 14, 15, 16), signal))).toBe(0);
    },
  );

  it("takes a sequence sharing most of the prompt if the KV tier saves what it loses, an empty one else", async () => {
    // Sequence 0 holds a 32-token line, its own ending (2 tokens) and a reply of 48; 1 is empty. The new prompt is the
    // line with another ending: 32 tokens shared, 50 lost.
    const line = Array.from({ length: 32 }, (_, i) => 100 + i);
    const caches = [[...line, 7, 8, ...Array.from({ length: 48 }, (_, i) => 300 + i)], []];
    const prompt = tokens(...line, 9, 8);
    const signal = new AbortController().signal;
    const saves = savedWhenTaken;
    const lose = new SequencePool(fakeContext(caches), { maxQueue: 0, queueTimeoutMs: 1000 });
    expect(idOf(await lose.acquire(prompt, signal))).toBe(1);
    const save = new SequencePool(fakeContext(caches), { maxQueue: 0, queueTimeoutMs: 1000, saves });
    expect(idOf(await save.acquire(prompt, signal))).toBe(0);
    // A short shared header of a long conversation: the empty one still, saved or not.
    const long = [[1, 2, 3, ...Array.from({ length: 200 }, (_, i) => 500 + i)], []];
    const header = new SequencePool(fakeContext(long), { maxQueue: 0, queueTimeoutMs: 1000, saves });
    expect(idOf(await header.acquire(tokens(1, 2, 3, 20, 21), signal))).toBe(1);
    // Where the prompt keeps more than half of what a sequence holds, the tier saves nothing: its loss counts whole.
    const most = [[...line, ...Array.from({ length: 20 }, (_, i) => 600 + i)], line.slice(0, 24)];
    const unsaved = new SequencePool(fakeContext(most), { maxQueue: 0, queueTimeoutMs: 1000, saves });
    expect(idOf(await unsaved.acquire(tokens(...line, 9, 10), signal))).toBe(1);
  });

  it(
    "takes the sequence holding the whole prompt and its earlier reply over an empty one (the prompt asked " + "again)",
    async () => {
      // Sequence 0 holds the prompt 1..4 and a reply of 6 tokens; 1 is empty.
      const pool = new SequencePool(fakeContext([[1, 2, 3, 4, 30, 31, 32, 33, 34, 35], []]), {
        maxQueue: 0,
        queueTimeoutMs: 1000,
      });
      const signal = new AbortController().signal;
      expect(idOf(await pool.acquire(tokens(1, 2, 3, 4), signal))).toBe(0);
    },
  );

  it("refuses at once with RESOURCE_EXHAUSTED when the queue is full, and serves waiters in order", async () => {
    const pool = new SequencePool(fakeContext([[]]), { maxQueue: 2, queueTimeoutMs: 10_000 });
    const signal = new AbortController().signal;
    const first = await pool.acquire(tokens(1), signal);
    const order: string[] = [];
    const a = pool.acquire(tokens(1), signal).then((s) => {
      order.push("a");
      return s;
    });
    const b = pool.acquire(tokens(1), signal).then((s) => {
      order.push("b");
      return s;
    });
    await expect(pool.acquire(tokens(1), signal).catch(codeOf)).resolves.toBe(Code.ResourceExhausted);
    expect(pool.queued).toBe(2);
    pool.release(first);
    pool.release(await a);
    await b;
    expect(order).toEqual(["a", "b"]);
  });

  it("lets a cancelled waiter leave the queue at once, and never hands it a sequence", async () => {
    const pool = new SequencePool(fakeContext([[]]), { maxQueue: 4, queueTimeoutMs: 10_000 });
    const held = await pool.acquire(tokens(1), new AbortController().signal);
    const leaving = new AbortController();
    const cancelled = pool.acquire(tokens(1), leaving.signal).catch(codeOf);
    const staying = pool.acquire(tokens(1), new AbortController().signal);
    leaving.abort();
    await expect(cancelled).resolves.toBe(Code.Canceled);
    expect(pool.queued).toBe(1);
    pool.release(held);
    expect(await staying).toBe(held);
  });

  it("times a waiter out with DEADLINE_EXCEEDED", async () => {
    const pool = new SequencePool(fakeContext([[]]), { maxQueue: 4, queueTimeoutMs: 30 });
    await pool.acquire(tokens(1), new AbortController().signal);
    await expect(pool.acquire(tokens(1), new AbortController().signal).catch(codeOf)).resolves.toBe(
      Code.DeadlineExceeded,
    );
    expect(pool.queued).toBe(0);
  });
});

describe("SequencePool: busy sequences side by side", () => {
  // Eight sequences holding other conversations; sequence 0 holds the fewest tokens, so it loses
  // least, and the pool takes it by tokens alone.
  const caches = (): number[][] =>
    Array.from({ length: 8 }, (_, id) => Array.from({ length: id === 0 ? 4 : 8 }, (_, k) => 100 * (id + 1) + k));
  const signal = new AbortController().signal;
  const withIds = () => new SequencePool(fakeContext(caches()), { maxQueue: 0, queueTimeoutMs: 1000, idOf });

  it("takes a sequence beside a busy one over one apart, though the one apart would lose fewer tokens", async () => {
    const pool = withIds();
    // The prompt continuing sequence 5's conversation takes sequence 5.
    expect(idOf(await pool.acquire(tokens(600, 601, 602, 603, 604, 605, 606, 607, 1), signal))).toBe(5);
    expect([4, 6]).toContain(idOf(await pool.acquire(tokens(9, 9, 9), signal)));
    const byTokens = new SequencePool(fakeContext(caches()), { maxQueue: 0, queueTimeoutMs: 1000 });
    await byTokens.acquire(tokens(600, 601, 602, 603, 604, 605, 606, 607, 1), signal);
    expect(idOf(await byTokens.acquire(tokens(9, 9, 9), signal))).toBe(0);
  });

  it("takes the sequence that joins two runs of busy ones", async () => {
    // Sequences 2 and 4 hold long conversations that come back, each to its own sequence.
    const held = caches().map((cache, id) =>
      id === 2 || id === 4 ? Array.from({ length: 2 * RUN_COST_TOKENS }, (_, k) => 1000 * id + k) : cache,
    );
    const pool = new SequencePool(fakeContext(held), { maxQueue: 0, queueTimeoutMs: 1000, idOf });
    expect(idOf(await pool.acquire(tokens(...(held[2] ?? []), 1), signal))).toBe(2);
    expect(idOf(await pool.acquire(tokens(...(held[4] ?? []), 1), signal))).toBe(4);
    expect(idOf(await pool.acquire(tokens(9, 9, 9), signal))).toBe(3);
  });

  it(`still takes a sequence apart when it holds more than ${RUN_COST_TOKENS} tokens of the prompt more`, async () => {
    const long = Array.from({ length: RUN_COST_TOKENS + 10 }, (_, k) => 7000 + k);
    const pool = new SequencePool(fakeContext([...caches().slice(0, 7), long]), {
      maxQueue: 0,
      queueTimeoutMs: 1000,
      idOf,
    });
    await pool.acquire(tokens(200, 201, 202, 203, 204, 205, 206, 207), signal);
    expect(idOf(await pool.acquire(tokens(...long, 1), signal))).toBe(7);
  });
});

describe("SequencePool: several sequences for one request", () => {
  it(
    "takes them all at once, by the same score as one: the longest shared prefix first, then what loses " + "least",
    async () => {
      const pool = new SequencePool(fakeContext([[1, 5], [1, 2, 3], [], [9]]), { maxQueue: 0, queueTimeoutMs: 1000 });
      const taken = await pool.acquireMany(tokens(1, 2, 3, 4), new AbortController().signal, "", 3);
      expect(taken.map(idOf)).toEqual([1, 2, 3]);
      expect(pool.busy).toBe(3);
    },
  );

  it("refuses more than the pool has with INVALID_ARGUMENT", async () => {
    const pool = new SequencePool(fakeContext([[], []]), { maxQueue: 4, queueTimeoutMs: 1000 });
    await expect(pool.acquireMany(tokens(1), new AbortController().signal, "", 3).catch(codeOf)).resolves.toBe(
      Code.InvalidArgument,
    );
  });

  it("waits while too few are free, collecting the freed ones ahead of later waiters, then has them all", async () => {
    const pool = new SequencePool(fakeContext([[], [], []]), { maxQueue: 4, queueTimeoutMs: 10_000 });
    const signal = new AbortController().signal;
    const [a, b] = [await pool.acquire(tokens(1), signal), await pool.acquire(tokens(1), signal)];
    const many = pool.acquireMany(tokens(1), signal, "x", 3);
    // It holds the free one already: a single request after it waits behind it.
    expect([pool.busy, pool.queued]).toEqual([3, 1]);
    const single = pool.acquire(tokens(1), signal, "y");
    expect(pool.queued).toBe(2);
    pool.release(a as LlamaContextSequence);
    expect(pool.queued).toBe(2);
    pool.release(b as LlamaContextSequence);
    const taken = await many;
    expect(taken).toHaveLength(3);
    expect(new Set(taken.map(idOf)).size).toBe(3);
    expect(pool.queued).toBe(1);
    pool.release(taken[0] as LlamaContextSequence);
    expect(await single).toBe(taken[0]);
  });

  it("frees what a waiter collected when it leaves, for the next one", async () => {
    const pool = new SequencePool(fakeContext([[], []]), { maxQueue: 4, queueTimeoutMs: 10_000 });
    const held = await pool.acquire(tokens(1), new AbortController().signal);
    const leaving = new AbortController();
    const cancelled = pool.acquireMany(tokens(1), leaving.signal, "", 2).catch(codeOf);
    const next = pool.acquire(tokens(1), new AbortController().signal);
    expect(pool.busy).toBe(2);
    leaving.abort();
    await expect(cancelled).resolves.toBe(Code.Canceled);
    // The sequence it had collected goes to the waiter after it.
    expect(idOf(await next)).not.toBe(idOf(held));
    expect([pool.busy, pool.queued]).toEqual([2, 0]);
  });
});

describe("SequencePool fairness", () => {
  it("lets clients take turns: one client's burst does not hold back another's request", async () => {
    const pool = new SequencePool(fakeContext([[]]), { maxQueue: 100, queueTimeoutMs: 10_000 });
    const signal = new AbortController().signal;
    setMaxListeners(100, signal);
    const held = await pool.acquire(tokens(1), signal, "key_a");
    const order: string[] = [];
    const waiting = [
      ...Array.from({ length: 60 }, (_, i) =>
        pool.acquire(tokens(1), signal, "key_a").then((s) => {
          order.push(`a${i}`);
          return s;
        }),
      ),
      pool.acquire(tokens(1), signal, "key_b").then((s) => {
        order.push("b");
        return s;
      }),
      pool.acquire(tokens(1), signal, "key_c").then((s) => {
        order.push("c0");
        return s;
      }),
      pool.acquire(tokens(1), signal, "key_c").then((s) => {
        order.push("c1");
        return s;
      }),
    ];
    // One sequence: each release hands it to the next waiter, who gives it back at once.
    for (let i = 0; i < waiting.length; i++) {
      pool.release(held);
      await new Promise((r) => setImmediate(r));
    }
    await Promise.all(waiting);
    // key_a holds the sequence: b and c, who had no turn yet, go first; then a and c alternate;
    // then the rest of a's burst, in order.
    expect(order.slice(0, 5)).toEqual(["b", "c0", "a0", "c1", "a1"]);
    expect(order.slice(5)).toEqual(Array.from({ length: 58 }, (_, i) => `a${i + 2}`));
  });
});
