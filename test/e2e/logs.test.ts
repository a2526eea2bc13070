// The request log as each runtime writes it: JSON lines from the Node edge's process (pino, on
// stdout) and from the Worker under `wrangler dev` (console.log), with the key's id, the
// endpoint, the tokens and the outcome — and neither the key nor the prompt nor the reply.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeSidecar, finish, start, token } from "../support/fake-sidecar.js";
import { serveGrpcWeb, type GrpcWebTestServer } from "../support/grpc-web-server.js";
import { startProcess } from "../support/processes.js";
import { startWrangler } from "../support/wrangler.js";

const KEY = "sk-logged-key-99";
const PROMPT = "a private prompt about llamas";

interface LoggingEdge {
  readonly url: string;
  output(): string;
  stop(): Promise<void>;
}

async function nodeEdgeProcess(sidecarUrl: string): Promise<LoggingEdge> {
  const edge = await startProcess(
    "node_modules/.bin/tsx",
    ["edge/hosts/node/main.ts"],
    { SIDECAR_URL: sidecarUrl, EDGE_PORT: "0", API_KEYS: KEY },
    /edge listening on (\S+)/,
    30_000,
  );
  return {
    url: edge.url,
    output: edge.output,
    stop: async () => {
      const exited = new Promise((r) => edge.child.once("exit", r));
      edge.child.kill("SIGTERM");
      await exited;
    },
  };
}

async function workerdEdge(sidecarUrl: string): Promise<LoggingEdge> {
  const wrangler = await startWrangler({ SIDECAR_URL: sidecarUrl, API_KEYS: KEY });
  return { url: wrangler.url, output: () => wrangler.output(), stop: () => wrangler.stop() };
}

/** The JSON lines of `text` that are request log lines. */
function logLines(text: string): Array<Record<string, unknown>> {
  return text
    .split("\n")
    .map((line) => line.slice(line.indexOf("{")))
    .filter((line) => line.startsWith("{") && line.includes('"request_id"'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe.each([
  ["node", nodeEdgeProcess],
  ["workerd", workerdEdge],
])("request logs on %s", (_name, startEdge) => {
  let sidecar: GrpcWebTestServer;
  let edge: LoggingEdge;
  beforeAll(async () => {
    sidecar = await serveGrpcWeb(
      new FakeSidecar([
        start("fake-model", 9),
        token("Llamas"),
        token(" hum."),
        finish("stop", { completionTokens: 2 }),
      ]),
    );
    edge = await startEdge(sidecar.url);
  }, 90_000);
  afterAll(async () => {
    await edge?.stop();
    await sidecar?.close();
  });

  it("writes one JSON line per request, without the key, the prompt or the reply", async () => {
    const response = await fetch(`${edge.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${KEY}` },
      body: JSON.stringify({ messages: [{ role: "user", content: PROMPT }], stream: true }),
    });
    expect(await response.text()).toContain("Llamas");
    const chatLines = () => logLines(edge.output()).filter((line) => line["endpoint"] === "/v1/chat/completions");
    const deadline = Date.now() + 10_000;
    while (chatLines().length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const lines = chatLines();
    expect(lines, JSON.stringify(lines)).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      key_id: expect.stringMatching(/^key_/),
      status: 200,
      outcome: "completed",
      model: "fake-model",
      prompt_tokens: 9,
      completion_tokens: 2,
    });
    expect(edge.output()).not.toContain(KEY);
    expect(edge.output()).not.toContain(PROMPT);
    expect(edge.output()).not.toContain("Llamas");
  });
});
