// Abandoned requests free their sequences promptly on both runtimes, on all six generation
// endpoints (Ollama's two among them): four non-streaming requests whose clients leave together
// (under workerd a closed connection shows only when written to, so JSON answers that take a while
// write spaces: see edge/core/patient-json.ts), and four streams dropped together; under workerd the
// clients talk to the Worker's own socket, behind wrangler dev's proxy. The 60M-parameter random model
// decodes slowly enough (and almost never picks its end token) that nothing ends by itself while
// the test watches.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startNodeEdge } from "../../edge/hosts/node/main.js";
import { ensureModels } from "../../gguf/models.js";
import type { RunningSidecar } from "../../sidecar/start-sidecar.js";
import { readMetrics, startTestSidecar } from "../support/sidecar.js";
import { startWrangler } from "../support/wrangler.js";

const LONG = 4_000;
const chat = [{ role: "user", content: "Tell me everything." }];
const ENDPOINTS: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
  ["/v1/completions", { prompt: "Tell me everything.", max_tokens: LONG }],
  ["/v1/chat/completions", { messages: chat, max_tokens: LONG }],
  ["/v1/responses", { input: "Tell me everything.", max_output_tokens: LONG }],
  ["/v1/messages", { model: "m", messages: chat, max_tokens: LONG }],
  // Ollama's: streamed as NDJSON (no keep-alive line: the tokens are what is written), or one answer.
  ["/api/chat", { model: "m", messages: chat, options: { num_predict: LONG } }],
  ["/api/generate", { model: "m", prompt: "Tell me everything.", options: { num_predict: LONG } }],
];

type Runtime = (sidecarUrl: string) => Promise<{ url: string; stop(): Promise<void> }>;
const runtimes: ReadonlyArray<readonly [string, Runtime]> = [
  [
    "node",
    async (sidecarUrl) => {
      const edge = await startNodeEdge({ sidecarUrl, port: 0 });
      return { url: edge.url, stop: () => edge.close() };
    },
  ],
  [
    "workerd",
    async (sidecarUrl) => {
      // The Worker's own socket: wrangler dev's local proxy can keep reading a stream whose client
      // left (docs/decisions.md, "Cancellation under wrangler dev").
      const wrangler = await startWrangler({ SIDECAR_URL: sidecarUrl }, { workerSocket: true });
      return { url: wrangler.workerUrl ?? wrangler.url, stop: () => wrangler.stop() };
    },
  ],
];

async function until(check: () => Promise<boolean>, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return check();
}

describe.each(runtimes)("abandoned requests on %s", (_name, startEdge) => {
  let sidecar: RunningSidecar;
  let edge: Awaited<ReturnType<Runtime>>;
  beforeAll(async () => {
    const { "random-60m": model } = await ensureModels("models", ["random-60m"]);
    sidecar = await startTestSidecar({ model, sequences: 4, contextSize: 4096 });
    edge = await startEdge(sidecar.url);
  }, 90_000);
  afterAll(async () => {
    await edge?.stop();
    await sidecar?.stop();
  });

  const active = async () => (await readMetrics(sidecar.url))["sidecar_generations_active"] ?? -1;

  describe.each([false, true])("stream %s", (stream) => {
    it.each(ENDPOINTS)("%s: four clients that leave together free their sequences at once", async (path, body) => {
      expect(await until(async () => (await active()) === 0, 10_000)).toBe(true);
      const aborted = sidecar.metrics.generationsAborted;
      const leaving = Array.from({ length: 4 }, () => new AbortController());
      const requests = leaving.map((controller) =>
        fetch(`${edge.url}${path}`, {
          method: "POST",
          body: JSON.stringify({ ...body, stream }),
          signal: controller.signal,
        })
          .then((response) => response.arrayBuffer())
          .catch(() => undefined),
      );
      expect(await until(async () => (await active()) === 4, 10_000)).toBe(true);
      await new Promise((r) => setTimeout(r, 300)); // generating, with nothing written yet for JSON
      for (const controller of leaving) controller.abort();
      await Promise.all(requests);
      // Freed within about a second: an abandoned generation would run for a minute or more.
      expect(await until(async () => (await active()) === 0, 2_000)).toBe(true);
      // Cancelled, not finished: the random model may pick its end token by itself, rarely.
      expect(sidecar.metrics.generationsAborted - aborted).toBeGreaterThanOrEqual(3);
    });
  });
});
