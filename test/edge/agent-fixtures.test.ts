// What Claude Code and Codex CLI send (recorded by test/e2e/agents.test.ts, texts redacted),
// replayed without the CLIs against the edge and the fake sidecar: every request is served, and
// reaches the sidecar as the contract says (system messages where they stand, developer input as
// system, the function tools).
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { Role } from "../../proto/gen/inference/v1/inference_pb.js";
import { post, sentChat, testApp } from "../support/app.js";
import type { RecordedRequest } from "../support/recording-proxy.js";

function fixture(name: string): RecordedRequest[] {
  return JSON.parse(readFileSync(new URL(`../fixtures/agents/${name}.json`, import.meta.url), "utf8")) as RecordedRequest[];
}

interface ClaudeBody {
  messages: { role: string }[];
  system: unknown[];
  tools: unknown[];
}

interface CodexBody {
  input: { role?: string }[];
  tools: { type: string; name?: string; tools?: { type: string; name: string }[] }[];
}

describe("Claude Code's requests", () => {
  it.each(fixture("claude-code").map((r, i) => [i, r] as const))("request %d is served, system messages where they stand", async (_i, recorded) => {
    const { app, sidecar } = testApp();
    const response = await post(app, recorded.path.split("?")[0] ?? "", recorded.body, { headers: recorded.headers });
    expect(response.status).toBe(200);
    await response.text();
    const body = recorded.body as ClaudeBody;
    const chat = sentChat(sidecar);
    expect(chat.messages.map((m) => m.role)).toEqual([Role.SYSTEM, ...body.messages.map((m) => (m.role === "system" ? Role.SYSTEM : m.role === "user" ? Role.USER : Role.ASSISTANT))]);
    expect(chat.tools).toHaveLength(body.tools.length);
  });
});

describe("Codex CLI's requests", () => {
  it.each(fixture("codex").map((r, i) => [i, r] as const))("request %d is served, developer input as system", async (_i, recorded) => {
    const { app, sidecar } = testApp();
    const response = await post(app, recorded.path, recorded.body, { headers: recorded.headers });
    expect(response.status).toBe(200);
    await response.text();
    const body = recorded.body as CodexBody;
    const chat = sentChat(sidecar);
    expect(chat.messages.map((m) => m.role)).toEqual(body.input.map((item) => (item.role === "developer" ? Role.SYSTEM : Role.USER)));
    // The function tools, a namespace's (multi_agent_v1's) among them in place; web_search is ignored.
    const offered = body.tools.flatMap((t) => (t.type === "function" ? [t.name] : t.type === "namespace" ? (t.tools ?? []).filter((i) => i.type === "function").map((i) => i.name) : []));
    expect(offered.length).toBeGreaterThan(body.tools.filter((t) => t.type === "function").length);
    expect(chat.tools.map((t) => t.name)).toEqual(offered);
  });
});
