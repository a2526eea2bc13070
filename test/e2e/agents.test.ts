// Claude Code and Codex CLI, unmodified, headless against the edge on Node and the demo model:
// each exits 0 with the model's reply. Claude Code's first request is ~44,000 tokens with a system
// message inside `messages`; Codex's ~25,000 on the Responses API. With RECORD_AGENT_FIXTURES=1
// the requests they send are saved, redacted, to test/fixtures/agents/ for the unit tests.
import { mkdirSync, writeFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { modelPath } from "../../gguf/models.js";
import { ensureAgents, runClaudeCode, runCodex } from "../support/agents.js";
import { startStack, type Stack } from "../support/edge.js";
import { redact, startRecordingProxy, type RecordingProxy } from "../support/recording-proxy.js";

function saveFixture(name: string, proxy: RecordingProxy): void {
  if (process.env["RECORD_AGENT_FIXTURES"] !== "1") return;
  const dir = new URL("../fixtures/agents/", import.meta.url);
  mkdirSync(dir, { recursive: true });
  const requests = proxy.requests.filter((r) => r.method === "POST").map((r) => ({ ...r, body: redact(r.body) }));
  writeFileSync(new URL(`${name}.json`, dir), `${JSON.stringify(requests, null, 2)}\n`);
}

describe("coding agents against the server", () => {
  let stack: Stack;
  beforeAll(async () => {
    ensureAgents();
    stack = await startStack({ model: modelPath("demo"), contextSize: "auto", sequences: 2 });
  }, 600_000);
  afterAll(async () => {
    await stack?.stop();
  });

  it("Claude Code (claude -p) answers with the model's reply", async () => {
    const proxy = await startRecordingProxy(stack.edge.url);
    const run = await runClaudeCode(proxy.url, "Say hi").finally(() => proxy.close());
    saveFixture("claude-code", proxy);
    expect(run.code, run.stderr).toBe(0);
    const result = JSON.parse(run.stdout) as { is_error: boolean; result: string; usage: { input_tokens: number } };
    expect(result.is_error).toBe(false);
    expect(result.result).toBe("Hi there");
    expect(result.usage.input_tokens).toBeGreaterThan(20_000);
  }, 300_000);

  it("Codex CLI (codex exec) answers with the model's reply", async () => {
    const proxy = await startRecordingProxy(stack.edge.url);
    const run = await runCodex(proxy.url, "Say hi").finally(() => proxy.close());
    saveFixture("codex", proxy);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.trim().split("\n").at(-1)).toBe("Hi there");
  }, 300_000);
});
