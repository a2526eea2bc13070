// A seeded hostile-client run inside npm test: a few hundred generated bodies per endpoint against
// the edge on Node with the real sidecar and the demo model. Every answer keeps the contract
// (test/support/fuzz.ts), nothing hangs, and both still answer a normal request exactly afterwards.
// `npm run fuzz` runs the same with 10,000 bodies per endpoint and a fresh seed, printed; a
// failing case is replayed with FUZZ_SEED=<seed> (and FUZZ_RUNS) on the same command.
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { modelPath } from "../../gguf/models.js";
import { startStack, type Stack } from "../support/edge.js";
import { bodyArbitrary, ENDPOINTS, send } from "../support/fuzz.js";

const SEED =
  process.env["FUZZ_SEED"] !== undefined
    ? Number(process.env["FUZZ_SEED"])
    : process.env["FUZZ_RUNS"] !== undefined
      ? Date.now() % 2 ** 31
      : 20261125;
const RUNS = Number(process.env["FUZZ_RUNS"] ?? 300);
/** Each endpoint's run is bounded: bodies are answered in milliseconds, so this is generous. */
const TIME_LIMIT_MS = Math.max(120_000, RUNS * 60);

describe("hostile bodies (seeded fuzz)", () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ model: modelPath("demo"), sequences: 4, contextSize: 512, maxQueue: 32 });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it.each(ENDPOINTS.map((e) => [e.name, e] as const))(
    "%s: every answer keeps the contract",
    async (_name, endpoint) => {
      console.log(
        `fuzz ${endpoint.name}: ${RUNS} bodies, seed ${SEED} (replay: FUZZ_SEED=${SEED} FUZZ_RUNS=${RUNS} npm run ` +
          `fuzz)`,
      );
      await fc.assert(
        fc.asyncProperty(bodyArbitrary(endpoint), async (body) => {
          const problem = await send(stack.edge.url, endpoint, body, 15_000);
          expect(problem).toBeUndefined();
        }),
        { seed: SEED, numRuns: RUNS, endOnFailure: true, interruptAfterTimeLimit: TIME_LIMIT_MS },
      );
    },
    TIME_LIMIT_MS + 30_000,
  );

  it("leaves the edge and the sidecar answering normally", async () => {
    const response = await fetch(`${stack.baseURL}/chat/completions`, {
      method: "POST",
      body: JSON.stringify({ messages: [{ role: "user", content: "Hello!" }] }),
    });
    expect(
      ((await response.json()) as { choices: { message: { content: string } }[] }).choices[0]?.message.content,
    ).toBe("Hi there");
  });
});
