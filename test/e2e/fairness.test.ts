// Keys take turns in the sidecar's queue, end to end: the edge passes each caller's key id and a
// burst from one key does not hold back another key's single request (one sequence, so everything
// queues; the scripted model's song is as long as max_tokens asks). The first request of the burst
// is a long stream left only once everything is queued, so the order does not depend on how fast
// the machine is.
import { describe, expect, it } from "vitest";
import { startStack } from "../support/edge.js";

const post = (
  baseURL: string,
  key: string,
  maxTokens: number,
  extra: Record<string, unknown> = {},
  signal?: AbortSignal,
) =>
  fetch(`${baseURL}/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ prompt: "Let us sing. Sing", max_tokens: maxTokens, ...extra }),
    ...(signal ? { signal } : {}),
  });

describe("fairness by key", () => {
  it("serves another key's request right after the request in progress, not after the burst", async () => {
    const stack = await startStack(
      { sequences: 1, contextSize: 4096, maxQueue: 32 },
      { access: { apiKeys: "key-a,key-b" } },
    );
    const pool = stack.sidecar.models[0]!.pool;
    const waitQueued = async (n: number) => {
      while (pool.queued < n) await new Promise((r) => setTimeout(r, 5));
    };
    const finished: string[] = [];
    const send = (key: string, name: string) =>
      post(stack.baseURL, key, 40).then(async (response) => {
        expect(response.status).toBe(200);
        await response.json();
        finished.push(name);
      });
    try {
      const leave = new AbortController();
      const first = await post(stack.baseURL, "key-a", 3500, { stream: true }, leave.signal);
      const reader = first.body!.getReader();
      await reader.read();
      const burst = Array.from({ length: 5 }, (_, i) => send("key-a", `a${i + 1}`));
      await waitQueued(5);
      const single = send("key-b", "b");
      await waitQueued(6);
      // The sequence is freed with everything queued: b goes first, before the rest of the burst.
      leave.abort();
      await Promise.all([...burst, single]);
      expect(finished[0]).toBe("b");
      expect(finished.slice(1).sort()).toEqual(["a1", "a2", "a3", "a4", "a5"]);
    } finally {
      await stack.stop();
    }
  });
});
