// Claude Code and Codex CLI, unmodified, headless against the edge on Node and the `agent`
// scripted model (gguf/models.ts): each exits 0 with the model's reply, on a plain prompt (Claude Code's also with
// `return_progress` added to its requests: the prompt_progress events are skipped) and on
// a tool loop through one of its own tools (Claude Code's Read of a file in its private working
// folder; Codex's get_goal); Codex past its auto-compact limit, compacting mid-way (docs/contract.md,
// "Compaction"), locally and through the server; under workerd (wrangler dev), the plain prompt of
// each. The recording proxy in front of the edge shows what arrives: the agent's tool result goes
// back with the call's id. With RECORD_AGENT_FIXTURES=1 the requests are saved, texts redacted, to
// test/fixtures/agents/ for the unit tests (test/edge/agent-fixtures.test.ts).
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AGENT_SUMMARY, ensureModels } from "../../gguf/models.js";
import { sealCompaction } from "../../edge/protocols/openai-responses/compaction/compaction-prompt.js";
import {
  AGENT_TIMEOUT_MS,
  agentDirs,
  ensureAgents,
  NOTES,
  recorded,
  runClaudeCode,
  runCodex,
  type AgentDirs,
  type AgentRun,
  type ClaudeBlock,
  type CodexItem,
} from "../support/agents.js";
import { startStack, type Stack } from "../support/edge.js";
import { redact, type RecordedRequest } from "../support/recording-proxy.js";
import { startWrangler, type Wrangler } from "../support/wrangler.js";

const RESULT = "Done, the tool call worked.";

function saveFixture(name: string, requests: readonly RecordedRequest[]): void {
  if (process.env["RECORD_AGENT_FIXTURES"] !== "1") return;
  const dir = new URL("../fixtures/agents/", import.meta.url);
  mkdirSync(dir, { recursive: true });
  const redacted = requests.map(({ method, path, headers, body }) => ({ method, path, headers, body: redact(body) }));
  writeFileSync(new URL(`${name}.json`, dir), `${JSON.stringify(redacted, null, 2)}\n`);
}

interface ClaudeResult {
  is_error: boolean;
  result: string;
  num_turns: number;
  usage: { input_tokens: number; cache_creation_input_tokens: number; cache_read_input_tokens: number };
}
interface ClaudeBody {
  messages: { role: string; content: string | ClaudeBlock[] }[];
}

const lastLine = (stdout: string): string | undefined => stdout.trim().split("\n").at(-1);

describe("coding agents against the server (Node edge)", () => {
  let stack: Stack;
  // One private home and working folder per CLI for all its runs, as a user has.
  let claude: AgentDirs;
  let codex: AgentDirs;
  beforeAll(async () => {
    [claude, codex] = [agentDirs(), agentDirs()];
    ensureAgents();
    const { agent } = await ensureModels("models", ["agent"]);
    stack = await startStack({ model: agent, contextSize: "auto", sequences: 2, threads: 2 });
  }, 600_000);
  afterAll(async () => {
    await stack?.stop();
    for (const dirs of [claude, codex])
      for (const dir of Object.values(dirs ?? {})) rmSync(dir, { recursive: true, force: true });
  });

  it(
    "Claude Code (claude -p): a plain prompt gets the model's reply, its system message inside messages accepted",
    async () => {
      const { run, posts } = await recorded(stack.edge.url, (url) => runClaudeCode(url, "Say hi", claude));
      saveFixture("claude-code", posts);
      expect(run.code, run.stderr).toBe(0);
      const result = JSON.parse(run.stdout) as ClaudeResult;
      expect([result.is_error, result.result, result.num_turns]).toEqual([false, "Hi there", 1]);
      // Its breakpoints (the system prompt, and the system message that ends the messages) mark the
      // whole prompt: Claude Code shows it as written to the cache, all but the last token.
      const { input_tokens: input, cache_creation_input_tokens: written, cache_read_input_tokens: read } = result.usage;
      expect(input + written + read).toBeGreaterThan(30_000);
      expect(input).toBe(1);
      expect(posts.map((p) => p.path)).toEqual(["/v1/messages?beta=true"]);
      expect((posts[0]!.body as ClaudeBody).messages.map((m) => m.role)).toEqual(["user", "system"]);
    },
    AGENT_TIMEOUT_MS + 10_000,
  );

  it(
    "Claude Code with return_progress (CLAUDE_CODE_EXTRA_BODY): the prompt_progress events before its reply skipped",
    async () => {
      // Folders of its own: the system prompt differs from the other runs' early on, so most of it is evaluated anew.
      const dirs = agentDirs();
      const env = { CLAUDE_CODE_EXTRA_BODY: JSON.stringify({ return_progress: true }) };
      try {
        const { run, posts } = await recorded(stack.edge.url, (url) =>
          runClaudeCode(url, "Say hi", dirs, "agent", env),
        );
        expect(run.code, run.stderr).toBe(0);
        const result = JSON.parse(run.stdout) as ClaudeResult;
        expect([result.is_error, result.result, result.num_turns]).toEqual([false, "Hi there", 1]);
        expect(posts.map((p) => [p.path, (p.body as { return_progress?: boolean }).return_progress])).toEqual([
          ["/v1/messages?beta=true", true],
        ]);
        // Tens of thousands of tokens evaluated: a progress event per 512 of them reached Claude Code.
        expect(result.usage.cache_creation_input_tokens + result.usage.input_tokens).toBeGreaterThan(10 * 512);
      } finally {
        for (const dir of Object.values(dirs)) rmSync(dir, { recursive: true, force: true });
      }
    },
    AGENT_TIMEOUT_MS + 10_000,
  );

  it(
    "Claude Code: a tool loop — the model calls Read, Claude Code reads the file and sends the result back, the " +
      "model answers",
    async () => {
      const { run, posts } = await recorded(stack.edge.url, (url) => runClaudeCode(url, "Read notes.txt", claude));
      saveFixture("claude-code-tools", posts);
      expect(run.code, run.stderr).toBe(0);
      const result = JSON.parse(run.stdout) as ClaudeResult;
      expect([result.is_error, result.result, result.num_turns]).toEqual([false, RESULT, 2]);
      expect(posts.map((p) => p.path)).toEqual(["/v1/messages?beta=true", "/v1/messages?beta=true"]);
      const messages = (posts[1]!.body as ClaudeBody).messages;
      const [call] = messages.at(-2)!.content as ClaudeBlock[];
      const [output] = messages.at(-1)!.content as ClaudeBlock[];
      expect([messages.at(-2)?.role, call?.type, call?.name, call?.input]).toEqual([
        "assistant",
        "tool_use",
        "Read",
        { file_path: "notes.txt", offset: 1, limit: 5, pages: "", allow_large: false },
      ]);
      expect(call?.id).toMatch(/^call_/);
      expect([messages.at(-1)?.role, output?.type, output?.tool_use_id, output?.content]).toEqual([
        "user",
        "tool_result",
        call?.id,
        `1\t${NOTES}2\t`,
      ]);
    },
    AGENT_TIMEOUT_MS + 10_000,
  );

  it(
    "Codex CLI (codex exec): a plain prompt gets the model's reply",
    async () => {
      const { run, posts } = await recorded(stack.edge.url, (url) => runCodex(url, "Say hi", codex));
      saveFixture("codex", posts);
      expect(run.code, run.stderr).toBe(0);
      expect(lastLine(run.stdout)).toBe("Hi there");
      expect(posts.map((p) => p.path)).toEqual(["/v1/responses"]);
    },
    AGENT_TIMEOUT_MS + 10_000,
  );

  it(
    "Codex CLI: a tool loop — the model calls get_goal, Codex runs it and sends the output back, the model answers",
    async () => {
      const { run, posts } = await recorded(stack.edge.url, (url) => runCodex(url, "What is the current goal?", codex));
      saveFixture("codex-tools", posts);
      expect(run.code, run.stderr).toBe(0);
      expect(lastLine(run.stdout)).toBe(RESULT);
      expect(posts.map((p) => p.path)).toEqual(["/v1/responses", "/v1/responses"]);
      const input = (posts[1]!.body as { input: CodexItem[] }).input;
      const [call, output] = input.slice(-2);
      expect([call?.type, call?.name, call?.arguments]).toEqual(["function_call", "get_goal", "{}"]);
      expect(call?.call_id).toMatch(/^call_/);
      expect([output?.type, output?.call_id]).toEqual(["function_call_output", call?.call_id]);
      expect(JSON.parse(output?.output ?? "")).toEqual({
        goal: null,
        remainingTokens: null,
        completionBudgetReport: null,
      });
    },
    AGENT_TIMEOUT_MS + 10_000,
  );

  /**
   * Codex with an auto-compact limit below its first prompt (~44,000 tokens): the posts' paths and input item types.
   */
  async function compactingCodex(
    providerName?: string,
  ): Promise<{ run: AgentRun; posts: RecordedRequest[]; shapes: string[] }> {
    const settings = ["model_context_window = 65536", "model_auto_compact_token_limit = 30000"];
    const dirs = agentDirs();
    const options = { settings, ...(providerName === undefined ? {} : { providerName }) };
    const { run, posts } = await recorded(stack.edge.url, (url) =>
      runCodex(url, "What is the current goal?", dirs, "agent", options),
    ).finally(() => {
      for (const dir of Object.values(dirs)) rmSync(dir, { recursive: true, force: true });
    });
    const shapes = posts.map(
      (p) => `${p.path} ${((p.body as { input?: CodexItem[] }).input ?? []).map((i) => i.type ?? "message").join(",")}`,
    );
    expect(run.code, `${run.stderr}\n${shapes.join("\n")}`).toBe(0);
    expect(lastLine(run.stdout), shapes.join("\n")).toBe(RESULT);
    return { run, posts, shapes };
  }

  it(
    "Codex CLI past its auto-compact limit, its own provider: it compacts locally (its prompt, the served model's " +
      "summary) mid-way, then completes",
    async () => {
      const { posts, shapes } = await compactingCodex();
      expect(shapes).toEqual([
        "/v1/responses message,message,message,message",
        "/v1/responses message,message,message,message,function_call,function_call_output,message",
        "/v1/responses message,message,message,message,message",
      ]);
      const summary = (posts[2]!.body as { input: { content: { text: string }[] }[] }).input.at(-1)?.content[0]?.text;
      expect(summary?.endsWith(`\n${AGENT_SUMMARY}`)).toBe(true);
    },
    AGENT_TIMEOUT_MS + 10_000,
  );

  it(
    "Codex CLI past its auto-compact limit, OpenAI's provider name: it compacts through the server " +
      "(compaction_trigger → one compaction item), sends the item back, completes",
    async () => {
      const { posts, shapes } = await compactingCodex("OpenAI");
      expect(shapes).toEqual([
        "/v1/responses message,message,message,message",
        "/v1/responses message,message,message,message,function_call,function_call_output,compaction_trigger",
        "/v1/responses message,message,message,message,compaction",
      ]);
      const item = (posts[2]!.body as { input: Record<string, unknown>[] }).input.at(-1);
      expect(item).toMatchObject({ type: "compaction", encrypted_content: sealCompaction(AGENT_SUMMARY) });
    },
    AGENT_TIMEOUT_MS + 10_000,
  );

  describe("under workerd (wrangler dev), the same sidecar", () => {
    let wrangler: Wrangler;
    beforeAll(async () => {
      wrangler = await startWrangler({ SIDECAR_URL: stack.sidecar.url });
    }, 90_000);
    afterAll(async () => {
      await wrangler?.stop();
    });

    it(
      "Claude Code: a plain prompt gets the model's reply",
      async () => {
        const { run, posts } = await recorded(wrangler.url, (url) => runClaudeCode(url, "Say hi", claude));
        expect(run.code, run.stderr).toBe(0);
        const result = JSON.parse(run.stdout) as ClaudeResult;
        expect([result.is_error, result.result, result.num_turns]).toEqual([false, "Hi there", 1]);
        expect(
          posts.map((p) => p.path),
          wrangler.output().slice(-4000),
        ).toEqual(["/v1/messages?beta=true"]);
      },
      AGENT_TIMEOUT_MS + 10_000,
    );

    it(
      "Codex CLI: a plain prompt gets the model's reply",
      async () => {
        const { run, posts } = await recorded(wrangler.url, (url) => runCodex(url, "Say hi", codex));
        expect(run.code, run.stderr).toBe(0);
        expect(lastLine(run.stdout)).toBe("Hi there");
        expect(
          posts.map((p) => p.path),
          wrangler.output().slice(-4000),
        ).toEqual(["/v1/responses"]);
      },
      AGENT_TIMEOUT_MS + 10_000,
    );
  });
});
