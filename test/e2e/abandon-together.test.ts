// Four streams whose clients leave together 400 ms after they were sent, in five rounds, under
// workerd: every generation that started is cancelled, in every round (the cancellation chain of
// docs/architecture.md, "When the client leaves"). The clients talk to the Worker's own socket:
// `wrangler dev`'s local proxy in front of it can keep reading a stream whose client left, and
// then stops forwarding requests (docs/decisions.md, "Cancellation under wrangler dev"), which is
// wrangler's, not the edge's. The scripted model sings " la" until max_tokens, so a generation
// that was not cancelled runs to its limit.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningSidecar } from "../../sidecar/start-sidecar.js";
import { startTestSidecar } from "../support/sidecar.js";
import { startWrangler, type Wrangler } from "../support/wrangler.js";

const MAX_TOKENS = 4000;
const ROUNDS = 5;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("four streams left together under workerd", () => {
  let sidecar: RunningSidecar;
  let wrangler: Wrangler;
  beforeAll(async () => {
    sidecar = await startTestSidecar({ sequences: 4, contextSize: 8192 });
    wrangler = await startWrangler({ SIDECAR_URL: sidecar.url }, { workerSocket: true });
  }, 120_000);
  afterAll(async () => {
    await wrangler?.stop();
    await sidecar?.stop();
  });

  /** One round: the streams sent, their clients gone 400 ms later; what the sidecar then did. */
  async function round(url: string): Promise<{ started: number; aborted: number; tokens: number }> {
    const metrics = sidecar.metrics;
    const before = {
      started: metrics.requestsStarted,
      aborted: metrics.generationsAborted,
      tokens: metrics.tokensGenerated,
    };
    const body = JSON.stringify({ prompt: "Let us sing. Sing", max_tokens: MAX_TOKENS, stream: true });
    const leaving = Array.from({ length: 4 }, () => new AbortController());
    const streams = leaving.map((client) =>
      fetch(`${url}/v1/completions`, { method: "POST", body, signal: client.signal })
        .then((response) => response.arrayBuffer())
        .catch(() => undefined),
    );
    await sleep(400);
    for (const client of leaving) client.abort();
    await Promise.all(streams);
    while (metrics.generationsActive > 0) await sleep(20);
    return {
      started: metrics.requestsStarted - before.started,
      aborted: metrics.generationsAborted - before.aborted,
      tokens: metrics.tokensGenerated - before.tokens,
    };
  }

  it("cancels every stream that started, in every round", async () => {
    const url = wrangler.workerUrl ?? "";
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    let startedInAll = 0;
    for (let i = 0; i < ROUNDS; i++) {
      const { started, aborted, tokens } = await round(url);
      expect({ round: i, aborted }).toEqual({ round: i, aborted: started });
      expect(tokens).toBeLessThan(started * MAX_TOKENS);
      startedInAll += started;
    }
    expect(startedInAll).toBeGreaterThan(0);
  }, 120_000);
});
