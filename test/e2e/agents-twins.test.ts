// Claude Code and Codex CLI, unmodified, finish a tool loop on family twins (gguf/models.ts), each
// through the edge on Node and the real sidecar: `qwen3-coder` (Qwen's real tokenizer and
// template, tagged arguments), `devstral` (Mistral's `[TOOL_CALLS]name[ARGS]{…}`) and `gpt-oss`
// (o200k_harmony, Harmony's channels: reasoning, then the call on the commentary channel). The model
// calls one of the agent's own tools in its family's syntax (Claude Code's Read of notes.txt,
// Codex's get_goal), the agent runs it and sends the result back, the model answers. The agents'
// prompts (35,000–45,000 tokens, their tools) are rendered by each twin's own template.
import { rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  AGENT_READ_INPUT,
  ensureModels,
  FAMILY_TWIN_FACTS,
  FAMILY_TWINS,
  TWIN_GOAL_PROMPT,
  TWIN_READ_PROMPT,
} from "../../gguf/models.js";
import { QWEN3_CODER_ANSWER } from "../../gguf/twins/parts.js";
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

/** The twins the agents run on (FAMILY_TWIN_FACTS' `agents`), with the input their call of Read gives. */
const TWINS = FAMILY_TWINS.filter((model) => FAMILY_TWIN_FACTS[model].agents).map((model) => ({
  model,
  // Tagged arguments are read as the model writes them: the path alone. JSON arguments follow the
  // tool's schema grammar, which asks for every property.
  readInput: FAMILY_TWIN_FACTS[model].calls === "qwen3-coder" ? { file_path: "notes.txt" } : AGENT_READ_INPUT,
}));

describe.each(TWINS)("coding agents on the $model twin", ({ model, readInput }) => {
  let stack: Stack;
  let dirs: AgentDirs[] = [];
  beforeAll(async () => {
    ensureAgents();
    const paths = await ensureModels("models", [model]);
    stack = await startStack({ model: paths[model], contextSize: "auto", sequences: 2, threads: 2 });
  }, 600_000);
  afterAll(async () => {
    await stack?.stop();
    for (const d of dirs) for (const dir of Object.values(d)) rmSync(dir, { recursive: true, force: true });
    dirs = [];
  });

  /** The agent's run in working folders of its own, and the bodies of the POSTs that reached the edge. */
  async function recordedIn(agent: (url: string, own: AgentDirs) => Promise<AgentRun>) {
    const own = agentDirs();
    dirs.push(own);
    const { run, posts } = await recorded(stack.edge.url, (url) => agent(url, own));
    return { run, bodies: posts.map((p) => p.body) };
  }

  it(
    "Claude Code: the model calls Read in its own syntax, Claude Code reads the file and sends it back, the model " +
      "answers",
    async () => {
      const { run, bodies } = await recordedIn((url, own) => runClaudeCode(url, TWIN_READ_PROMPT, own, model));
      expect(run.code, run.stderr).toBe(0);
      const result = JSON.parse(run.stdout) as { is_error: boolean; result: string; num_turns: number };
      expect([result.is_error, result.result, result.num_turns]).toEqual([false, QWEN3_CODER_ANSWER, 2]);
      const messages = (bodies[1] as { messages: { role: string; content: ClaudeBlock[] }[] }).messages;
      const [call] = messages.at(-2)?.content ?? [];
      const [output] = messages.at(-1)?.content ?? [];
      expect([call?.type, call?.name, call?.input]).toEqual(["tool_use", "Read", readInput]);
      expect([output?.type, output?.tool_use_id, output?.content]).toEqual(["tool_result", call?.id, `1\t${NOTES}2\t`]);
    },
    AGENT_TIMEOUT_MS + 10_000,
  );

  it(
    "Codex CLI: the model calls get_goal in its own syntax, Codex runs it and sends the output back, the model answers",
    async () => {
      const { run, bodies } = await recordedIn((url, own) => runCodex(url, TWIN_GOAL_PROMPT, own, model));
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout.trim().split("\n").at(-1)).toBe(QWEN3_CODER_ANSWER);
      const [call, output] = (bodies[1] as { input: CodexItem[] }).input.slice(-2);
      expect([call?.type, call?.name, call?.arguments]).toEqual(["function_call", "get_goal", "{}"]);
      expect([output?.type, output?.call_id]).toEqual(["function_call_output", call?.call_id]);
    },
    AGENT_TIMEOUT_MS + 10_000,
  );
});
