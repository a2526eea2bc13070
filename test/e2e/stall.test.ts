// A real sidecar process stopped with SIGSTOP: the edge (Node and workerd) ends a stream with the
// protocol's error event and a JSON request with 504 once the stall deadline passes, instead of
// waiting for ever; after SIGCONT it answers again.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startNodeEdge } from "../../edge/hosts/node/main.js";
import { modelPath } from "../../gguf/models.js";
import { startSidecarProcess, type Started } from "../support/processes.js";
import { startWrangler } from "../support/wrangler.js";

const STALL_MS = 1500;
const chat = { messages: [{ role: "user", content: "Hi" }] };

function sidecarProcess(): Promise<Started> {
  return startSidecarProcess(modelPath("scripted"), [
    "--sequences",
    "1",
    "--context-size",
    "512",
    "--heartbeat-ms",
    "300",
  ]);
}

describe.each([
  [
    "node",
    async (sidecarUrl: string) => {
      const edge = await startNodeEdge({ port: 0, sidecarUrl, sidecarStallMs: STALL_MS });
      return { url: edge.url, stop: () => edge.close() };
    },
  ],
  [
    "workerd",
    async (sidecarUrl: string) => {
      const wrangler = await startWrangler({ SIDECAR_URL: sidecarUrl, SIDECAR_STALL_MS: String(STALL_MS) });
      return { url: wrangler.url, stop: () => wrangler.stop() };
    },
  ],
] as const)("a stopped sidecar behind the edge on %s", (_name, startEdge) => {
  let sidecar: Started;
  let edge: { url: string; stop(): Promise<void> };
  beforeAll(async () => {
    sidecar = await sidecarProcess();
    edge = await startEdge(sidecar.url);
  }, 90_000);
  afterAll(async () => {
    sidecar?.child.kill("SIGCONT");
    await edge?.stop();
    sidecar?.child.kill("SIGKILL");
  });

  it("is answered 504 / the error event after the deadline, and serves again once it resumes", async () => {
    sidecar.child.kill("SIGSTOP");
    try {
      const began = Date.now();
      const json = await fetch(`${edge.url}/v1/chat/completions`, { method: "POST", body: JSON.stringify(chat) });
      expect(json.status).toBe(504);
      expect(await json.json()).toMatchObject({ error: { code: "sidecar_stalled" } });
      expect(Date.now() - began).toBeLessThan(STALL_MS * 4);
    } finally {
      sidecar.child.kill("SIGCONT");
    }
    const again = await fetch(`${edge.url}/v1/chat/completions`, { method: "POST", body: JSON.stringify(chat) });
    expect(again.status).toBe(200);
  });
});
