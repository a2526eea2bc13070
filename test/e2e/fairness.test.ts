// Keys take turns in the sidecar's queue, end to end: the edge passes each caller's key id and a
// burst from one key does not hold back another key's single request (one sequence, so everything
// queues; the scripted model's song is as long as max_tokens asks).
import { describe, expect, it } from "vitest";
import { startStack } from "../support/edge.js";

describe("fairness by key", () => {
  it("serves another key's request right after the request in progress, not after the burst", async () => {
    const stack = await startStack({ sequences: 1, contextSize: 512, maxQueue: 32 }, { access: { apiKeys: "key-a,key-b" } });
    const finished: string[] = [];
    const send = (key: string, name: string) =>
      fetch(`${stack.baseURL}/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ prompt: "Let us sing. Sing", max_tokens: 40 }),
      }).then(async (response) => {
        expect(response.status).toBe(200);
        await response.json();
        finished.push(name);
      });
    try {
      const burst = Array.from({ length: 6 }, (_, i) => send("key-a", `a${i}`));
      // The burst is queued before the other key's request arrives.
      while (stack.sidecar.models[0]!.pool.queued < 5) await new Promise((r) => setTimeout(r, 5));
      const single = send("key-b", "b");
      await Promise.all([...burst, single]);
      // a0 held the sequence; b is next, before the rest of the burst.
      expect(finished.slice(0, 2)).toEqual(["a0", "b"]);
      expect(finished).toHaveLength(7);
    } finally {
      await stack.stop();
    }
  });
});
