// The sidecar process dies in the middle of a stream: the edge ends the stream with an error
// event in the protocol's shape (no [DONE]), keeps running, and answers 503 until it is back.
import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { startNodeEdge } from "../../edge/hosts/node/main.js";
import { modelPath } from "../../gguf/models.js";
import { checkChatStream } from "../support/contract.js";
import { readEvents } from "../support/sse.js";
import { freePort } from "../support/wrangler.js";

describe("a sidecar that dies mid-stream", () => {
  it("ends the stream with event: error, and the edge then answers 503", async () => {
    const port = await freePort();
    // node itself (not the tsx wrapper), so that SIGKILL reaches the process that serves.
    const child = spawn(
      process.execPath,
      ["--import", "tsx", "sidecar/main.ts", "--port", String(port), "--sequences", "1", "--context-size", "4096"],
      {
        env: { ...process.env, MODEL: modelPath("scripted") },
        stdio: ["ignore", "ignore", "pipe"],
      },
    );
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const edge = await startNodeEdge({ sidecarUrl: `http://127.0.0.1:${port}`, port: 0 });
    try {
      await expect.poll(() => stderr.includes("serving scripted"), { timeout: 30_000 }).toBe(true);
      const response = await fetch(`${edge.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ messages: [{ role: "user", content: "Hello!" }], stream: true }),
      });
      expect(checkChatStream(await readEvents(response.body)).done).toBe(true);
      const song = await fetch(`${edge.url}/v1/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ prompt: "Let us sing. Sing", stream: true }),
      });
      const reader = song.body!.getReader();
      const decoder = new TextDecoder();
      let text = decoder.decode((await reader.read()).value, { stream: true });
      child.kill("SIGKILL");
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
      }
      const events = text.split("\n\n").filter((e) => e.trim() !== "");
      const last = events.at(-1) ?? "";
      expect(last).toMatch(/^event: error\ndata: /);
      const data = JSON.parse(last.split("\ndata: ")[1] ?? "{}") as Record<string, unknown>;
      expect(data).toMatchObject({ type: "server_error", error: { type: "server_error" } });
      expect(text).not.toContain("[DONE]");

      const after = await fetch(`${edge.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ messages: [{ role: "user", content: "Hello!" }] }),
      });
      expect(after.status).toBe(503);
      expect(await after.json()).toMatchObject({ error: { type: expect.any(String), message: expect.any(String) } });
      const health = await fetch(`${edge.url}/health`);
      expect(health.status).toBe(503);
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
      await edge.close();
    }
  });
});
