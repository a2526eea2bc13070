// The model catalogue through the real edge (Node, and workerd under `wrangler dev`) and real
// gRPC-Web (connect-node's adapter, as the sidecar serves it), with two fake sidecars reporting
// their catalogues: the official `openai` client lists and retrieves the merged catalogue with each
// model's status and a loaded one's capabilities; POST /models/load reaches the sidecar with keep_alive and routes the
// next request
// there; a chat's keep_alive crosses the wire; a ModelLoadFailed detail crosses it and is answered
// 500 model_load_failed (OpenAI) and api_error (Anthropic), after failing over to the other sidecar.
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { catalogued, FakeSidecar, finish, loadFailed, start, token } from "../support/fake-sidecar.js";
import { serveOverConnect, type ConnectSidecarServer } from "../support/connect-sidecar.js";
import { describeOnRuntimes } from "../support/runtimes.js";

const fakes = { a: new FakeSidecar(), b: new FakeSidecar() };
const servers: ConnectSidecarServer[] = [];

/**
 * a: demo loaded, coder available; b: coder failed, tiny loading. Set again after every test: an
 * edge's first report (its start's /health) must see this, whatever a test did to the fakes.
 */
function reset(): void {
  fakes.a.models = [
    catalogued("demo", {
      created: 1_700_000_000,
      memoryBytes: 4096,
      expiresAt: 1_700_000_300,
      toolCallSyntax: "qwen3-coder",
      reasoning: true,
    }),
    catalogued("coder", { status: "available" }),
  ];
  fakes.b.models = [
    catalogued("coder", { status: "failed", failure: "too big" }),
    catalogued("tiny", { status: "loading", progress: 0.75, aliases: ["small"] }),
  ];
  for (const [name, fake] of Object.entries(fakes))
    fake.script = [start("coder"), token(name), finish("stop", { completionTokens: 1 })];
}

beforeAll(async () => {
  reset();
  servers.push(await serveOverConnect(fakes.a), await serveOverConnect(fakes.b));
});
afterAll(async () => {
  for (const server of servers) await server.close();
});

const chat = { messages: [{ role: "user" as const, content: "Hi" }] };

describeOnRuntimes(
  "the model catalogue over gRPC-Web",
  () => servers.map((s) => s.url),
  (edge) => {
    const openai = () => new OpenAI({ baseURL: `${edge().url}/v1`, apiKey: "not-needed", maxRetries: 0 });
    afterEach(reset);

    it("models.list() and models.retrieve(): the merged catalogue, each model with its status", async () => {
      const list: OpenAI.Model[] = [];
      for await (const model of openai().models.list()) list.push(model);
      expect(list).toEqual([
        {
          id: "demo",
          object: "model",
          created: 1_700_000_000,
          owned_by: "local",
          status: { value: "loaded" },
          context_length: 4096,
          memory_bytes: 4096,
          aliases: [],
          kind: "generate",
          expires_at: 1_700_000_300,
          // What the sidecar learned from its template.
          capabilities: ["completion", "tools", "thinking"],
          tool_call_syntax: "qwen3-coder",
          // What a loaded model reads (text only: no projector).
          modalities: ["text"],
        },
        {
          id: "coder",
          object: "model",
          created: 0,
          owned_by: "local",
          status: { value: "available" },
          context_length: 4096,
          aliases: [],
          kind: "generate",
        },
        {
          id: "tiny",
          object: "model",
          created: 0,
          owned_by: "local",
          status: { value: "loading", progress: 0.75 },
          context_length: 4096,
          aliases: ["small"],
          kind: "generate",
        },
      ]);
      expect((await openai().models.retrieve("small")).id).toBe("tiny");
      await expect(openai().models.retrieve("nope")).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    });

    it(
      "a load failure crosses the wire: failed over to the other sidecar, then 500 model_load_failed / " + "api_error",
      async () => {
        fakes.a.script = [loadFailed("coder", "the file is truncated")];
        const served = await openai().chat.completions.create({
          model: "coder",
          ...chat,
          keep_alive: "10m",
        } as OpenAI.ChatCompletionCreateParamsNonStreaming);
        expect(served.choices[0]?.message.content).toBe("b");
        expect(fakes.b.lastCall?.request.keepAliveSeconds).toBe(600);
        fakes.b.script = [loadFailed("coder", "the file is truncated")];
        const failed = await openai()
          .chat.completions.create({ model: "coder", ...chat })
          .catch((e: unknown) => e);
        expect(failed).toBeInstanceOf(OpenAI.InternalServerError);
        expect((failed as InstanceType<typeof OpenAI.InternalServerError>).error).toEqual({
          message: "The model 'coder' could not be loaded: the file is truncated",
          type: "server_error",
          param: "model",
          code: "model_load_failed",
        });
        const anthropic = new Anthropic({ baseURL: edge().url, apiKey: "not-needed", maxRetries: 0 });
        const refusal = await anthropic.messages
          .create({ model: "coder", max_tokens: 8, ...chat })
          .catch((e: unknown) => e);
        expect(refusal).toBeInstanceOf(Anthropic.InternalServerError);
        expect((refusal as InstanceType<typeof Anthropic.InternalServerError>).error).toEqual({
          type: "error",
          error: { type: "api_error", message: "The model 'coder' could not be loaded: the file is truncated" },
        });
      },
    );

    it("POST /models/load loads on the sidecar that can, with keep_alive, and answers the model loaded", async () => {
      fakes.a.loadCalls.length = 0;
      const response = await fetch(`${edge().url}/models/load`, {
        method: "POST",
        body: JSON.stringify({ model: "coder", keep_alive: "-1" }),
      });
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({
        id: "coder",
        object: "model",
        created: 0,
        owned_by: "local",
        status: { value: "loaded" },
        context_length: 4096,
        aliases: [],
        // A sidecar that reports no reply syntax: no capabilities are claimed.
        kind: "generate",
      });
      expect(fakes.a.loadCalls.map((c) => [c.model, c.keepAliveSeconds])).toEqual([["coder", -1]]);
    });
  },
);
