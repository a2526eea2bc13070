// The coding agents' image turns, unmodified, on the gemma3-vision twin behind the edge on Node and the real sidecar:
// Claude Code with an image pasted beside a question (an Anthropic `image` block, read from stream-json input) and
// Codex with `--image` (a Responses `input_image` data: URL) each finish their turn with the twin's exact reply for
// that image, the image's bytes in the request that reached the edge.
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureModels } from "../../gguf/models.js";
import {
  agentDirs,
  AGENT_TIMEOUT_MS,
  ensureAgents,
  recorded,
  runClaudeCodeBlocks,
  runCodex,
  type AgentDirs,
} from "../support/agents.js";
import { startStack, type Stack } from "../support/edge.js";
import { BLUE, RED, solidPng } from "../support/images.js";
import { VISION_BLUE, VISION_RED } from "../support/scripted.js";

describe("coding agents' image turns on the gemma3-vision twin", () => {
  let stack: Stack;
  const dirs: AgentDirs[] = [];
  beforeAll(async () => {
    ensureAgents();
    const { "gemma3-vision": model } = await ensureModels("models", ["gemma3-vision"]);
    stack = await startStack({ model, contextSize: 16384, sequences: 1, threads: 2 });
  }, 600_000);
  afterAll(async () => {
    await stack?.stop();
    for (const d of dirs) for (const dir of Object.values(d)) rmSync(dir, { recursive: true, force: true });
  });
  const own = () => {
    const made = agentDirs();
    dirs.push(made);
    return made;
  };

  it(
    "Claude Code: an image block beside a question gets the twin's reply for it",
    async () => {
      const red = await solidPng(RED);
      const content = [
        { type: "image", source: { type: "base64", media_type: "image/png", data: red.toString("base64") } },
        { type: "text", text: "Which colour is this?" },
      ];
      const { run, posts } = await recorded(stack.edge.url, (url) => runClaudeCodeBlocks(url, content, own()));
      expect(run.code, run.stderr).toBe(0);
      const events = run.stdout
        .split("\n")
        .filter((line) => line.trim() !== "")
        .map((line) => JSON.parse(line) as { type: string; result?: string; is_error?: boolean });
      expect(events.at(-1)).toMatchObject({ type: "result", is_error: false, result: VISION_RED });
      const sent = posts.filter((p) => p.path.startsWith("/v1/messages?") || p.path === "/v1/messages");
      expect(sent.some((p) => JSON.stringify(p.body).includes(red.toString("base64")))).toBe(true);
    },
    AGENT_TIMEOUT_MS,
  );

  it(
    "Codex: --image gets the twin's reply for it",
    async () => {
      const dir = own();
      const file = join(dir.work, "blue.png");
      writeFileSync(file, await solidPng(BLUE));
      const { run, posts } = await recorded(stack.edge.url, (url) =>
        runCodex(url, "Which colour is this?", dir, "gemma3-vision", { images: [file] }),
      );
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout.trim().split("\n").at(-1)).toBe(VISION_BLUE);
      expect(posts.some((p) => p.path === "/v1/responses" && JSON.stringify(p.body).includes('"input_image"'))).toBe(
        true,
      );
    },
    AGENT_TIMEOUT_MS,
  );
});
