// The two coding agents users point at local servers, installed at pinned versions into
// .cache/agents (not project dependencies: together they are ~800 MB of native binaries), and
// run headless against a base URL with a private home and every telemetry, update and
// non-essential traffic switch off.
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "vitest";
import { startRecordingProxy, type RecordedRequest } from "./recording-proxy.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const DIR = join(ROOT, ".cache", "agents");

/** The versions the tests pin (docs/clients.md, "Coding agents"). */
export const AGENTS = { "@anthropic-ai/claude-code": "2.1.331", "@openai/codex": "0.169.0" } as const;

function installedVersion(name: string): string | undefined {
  const file = join(DIR, "node_modules", name, "package.json");
  return existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as { version: string }).version : undefined;
}

/** Installs the agents once (about 20 s from the registry); a no-op when the pinned ones are there. */
export function ensureAgents(): void {
  if (Object.entries(AGENTS).every(([name, version]) => installedVersion(name) === version)) return;
  mkdirSync(DIR, { recursive: true });
  // Claude Code's install script puts its platform's native binary in place (it downloads nothing).
  writeFileSync(
    join(DIR, "package.json"),
    JSON.stringify({ name: "agents", private: true, allowScripts: { "@anthropic-ai/claude-code": true } }),
  );
  const specs = Object.entries(AGENTS).map(([name, version]) => `${name}@${version}`);
  execFileSync("npm", ["install", "--no-audit", "--no-fund", "--no-package-lock", ...specs], {
    cwd: DIR,
    stdio: "pipe",
    timeout: 600_000,
  });
}

export interface AgentRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Every CLI run's bound: a run that hangs is killed, and its test fails on the exit code. A run
 * takes 15–40 s on 2 idle cores (a cold 44,000-token prompt is most of it); the bound leaves room
 * for a loaded machine.
 */
export const AGENT_TIMEOUT_MS = 180_000;

/**
 * No network but the server: every other connection goes to a proxy on a closed port of
 * 127.0.0.1 (the CLIs honour these variables), and loopback is reached directly.
 */
const NO_NETWORK = {
  HTTPS_PROXY: "http://127.0.0.1:9",
  HTTP_PROXY: "http://127.0.0.1:9",
  ALL_PROXY: "http://127.0.0.1:9",
  https_proxy: "http://127.0.0.1:9",
  http_proxy: "http://127.0.0.1:9",
  NO_PROXY: "127.0.0.1,localhost",
  no_proxy: "127.0.0.1,localhost",
};

function run(
  command: string,
  args: readonly string[],
  env: Record<string, string>,
  cwd: string,
  input?: string,
): Promise<AgentRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(join(DIR, "node_modules", ".bin", command), args, {
      cwd,
      env: { PATH: process.env["PATH"] ?? "", ...NO_NETWORK, ...env },
      stdio: [input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
    });
    if (input !== undefined) child.stdin?.end(input);
    let stdout = "";
    let stderr = "";
    child.stdout?.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), AGENT_TIMEOUT_MS);
    child.once("error", reject);
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** What `notes.txt` holds in the private working folder (the agent model reads it with Claude Code's Read). */
export const NOTES = "The meeting moved to Friday.\n";

/** A private home and working folder (holding `notes.txt`) for an agent's runs. */
export interface AgentDirs {
  readonly home: string;
  readonly work: string;
}

export function agentDirs(): AgentDirs {
  const home = mkdtempSync(join(tmpdir(), "agent-home-"));
  const work = mkdtempSync(join(tmpdir(), "agent-work-"));
  writeFileSync(join(work, "notes.txt"), NOTES);
  return { home, work };
}

/**
 * `claude -p <prompt> --output-format json` against an Anthropic base URL, in the default
 * permission mode: as root Claude Code refuses to skip permissions, and reading a file of the
 * working folder needs none. Runs that share their folders share their prompt's prefix (the
 * system prompt names the home and the working folder), which the server's prefix cache keeps. `env`: more of its
 * settings (e.g. CLAUDE_CODE_EXTRA_BODY, fields added to every request's body).
 */
export function runClaudeCode(
  baseUrl: string,
  prompt: string,
  dirs: AgentDirs = agentDirs(),
  model = "agent",
  env: Readonly<Record<string, string>> = {},
): Promise<AgentRun> {
  return runClaude(baseUrl, ["-p", prompt, "--output-format", "json", "--model", model], dirs, undefined, env);
}

/**
 * `claude -p` with one user message of content blocks (an image pasted beside a question) read from standard input
 * as stream-json, its events written as stream-json.
 */
export function runClaudeCodeBlocks(
  baseUrl: string,
  content: readonly object[],
  dirs: AgentDirs = agentDirs(),
  model = "agent",
): Promise<AgentRun> {
  const args = ["-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose", "--model", model];
  const line = JSON.stringify({ type: "user", message: { role: "user", content } });
  return runClaude(baseUrl, args, dirs, `${line}\n`);
}

function runClaude(
  baseUrl: string,
  args: readonly string[],
  { home, work }: AgentDirs,
  input?: string,
  env: Readonly<Record<string, string>> = {},
) {
  return run(
    "claude",
    args,
    {
      HOME: home,
      ANTHROPIC_BASE_URL: baseUrl,
      ANTHROPIC_API_KEY: "sk-local-agent",
      DISABLE_TELEMETRY: "1",
      DISABLE_AUTOUPDATER: "1",
      DISABLE_ERROR_REPORTING: "1",
      DISABLE_BUG_COMMAND: "1",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      // No per-prompt attribution block at the head of the system prompt: the prompt prefix then
      // stays the same from one session to the next, and the server's prefix cache takes it.
      CLAUDE_CODE_ATTRIBUTION_HEADER: "0",
      ...env,
    },
    work,
    input,
  );
}

/**
 * More of Codex's configuration: top-level lines (e.g. `model_auto_compact_token_limit = 30000`), the provider's name.
 */
export interface CodexOptions {
  readonly settings?: readonly string[];
  /** The provider's `name`: Codex compacts through the server (remote compaction) only for "OpenAI"'s. */
  readonly providerName?: string;
  /** Image files attached to the prompt (`--image`). */
  readonly images?: readonly string[];
}

/** Codex's config.toml: the server as a Responses provider, analytics, feedback and update checks off. */
export function codexConfig(
  baseUrl: string,
  model: string,
  { settings = [], providerName = "llm-edge" }: CodexOptions = {},
): string {
  return [
    `model = "${model}"`,
    `model_provider = "local"`,
    `check_for_update_on_startup = false`,
    ...settings,
    `[model_providers.local]`,
    `name = "${providerName}"`,
    `base_url = "${baseUrl}/v1"`,
    `wire_api = "responses"`,
    `env_key = "LOCAL_API_KEY"`,
    `[analytics]`,
    `enabled = false`,
    `[feedback]`,
    `enabled = false`,
    `[otel]`,
    `exporter = "none"`,
    "",
  ].join("\n");
}

/**
 * `codex exec <prompt>` with a custom model provider whose base_url is the server's /v1, in a private working folder.
 */
export function runCodex(
  baseUrl: string,
  prompt: string,
  { home, work }: AgentDirs = agentDirs(),
  model = "agent",
  options: CodexOptions = {},
): Promise<AgentRun> {
  writeFileSync(join(home, "config.toml"), codexConfig(baseUrl, model, options));
  return run(
    "codex",
    ["exec", "--skip-git-repo-check", ...(options.images ?? []).map((file) => `--image=${file}`), prompt],
    { HOME: home, CODEX_HOME: home, LOCAL_API_KEY: "sk-local-agent" },
    work,
  );
}

/** A content block of a request Claude Code sends (what the tests read of it). */
export interface ClaudeBlock {
  type: string;
  id?: string;
  name?: string;
  input?: unknown;
  tool_use_id?: string;
  content?: unknown;
}

/** An input item of a request Codex sends (what the tests read of it). */
export interface CodexItem {
  type?: string;
  role?: string;
  name?: string;
  arguments?: string;
  call_id?: string;
  output?: string;
}

/** Runs an agent through a recording proxy in front of `target`; the POSTs that reached it. */
export async function recorded(
  target: string,
  agent: (url: string) => Promise<AgentRun>,
): Promise<{ run: AgentRun; posts: RecordedRequest[] }> {
  const proxy = await startRecordingProxy(target);
  const run = await agent(proxy.url).finally(() => proxy.close());
  const posts = proxy.requests.filter((r) => r.method === "POST");
  // Every request the agent made was answered (a retried one would show here as a second POST).
  expect(posts.map((p) => p.status)).toEqual(posts.map(() => 200));
  return { run, posts };
}
