// The Open Responses compliance tests (vendored at a pinned revision:
// test/vendor/openresponses/README.md), run through their own runner against the edge on Node
// and under workerd, in front of real sidecars: the `scripted` model (any chat → CHAT_REPLY) and,
// for tool calling, the `tools` model (calls get_weather when tools are offered), and for image input the
// `gemma3-vision` twin with its projector (its reply names the image's colour). Each upstream
// test is one `it`, and its result is also checked for the model's exact reply. Where the specification and OpenAI's
// API differ, this server follows OpenAI (docs/contract.md, "OpenAI Responses"); the one difference
// these tests meet (reasoning event names) is asserted exactly below.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startNodeEdge, type RunningEdge } from "../../edge/hosts/node/main.js";
import { ensureModels, modelPath } from "../../gguf/models.js";
import type { RunningSidecar } from "../../sidecar/start-sidecar.js";
import { CHAT_REPLY, VISION_RED } from "../support/scripted.js";
import { socketNotFound } from "../support/contract.js";
import { sealCompaction } from "../../edge/protocols/openai-responses/compaction/compaction-prompt.js";
import { startTestSidecar } from "../support/sidecar.js";
import WebSocket from "ws";
import { startWrangler, type Wrangler } from "../support/wrangler.js";
import {
  runAllTests,
  testTemplates,
  type TestConfig,
  type TestResult,
  type TestTemplate,
} from "../vendor/openresponses/src/lib/compliance-tests.js";

/** Every test of the pinned upstream revision, in its order: a new or renamed one shows here. */
const UPSTREAM_IDS = [
  "basic-response",
  "assistant-phase",
  "response-output-phase-schema",
  "streaming-response",
  "websocket-response",
  "websocket-sequential-responses",
  "websocket-continuation",
  "websocket-reconnect-store-false-recovery",
  "websocket-previous-response-not-found",
  "websocket-failed-continuation-evicts-cache",
  "websocket-compact-new-chain",
  "system-prompt",
  "tool-calling",
  "image-input",
  "multi-turn",
  "compact-response",
  "compact-missing-model",
];

/** The models the tests run against (each behind its own sidecar). */
type TestModel = "scripted" | "tools" | "gemma3-vision";

/** The model each applicable test runs against, and what its result must hold beyond passing. */
const EXPECTED: Readonly<Record<string, { readonly model: TestModel; check(response: unknown): void }>> = {
  "basic-response": { model: "scripted", check: scriptedReply },
  "assistant-phase": { model: "scripted", check: scriptedReply },
  // Validates an upstream fixture against the schema; it sends nothing.
  "response-output-phase-schema": {
    model: "scripted",
    check: (response) => expect(response).toMatchObject({ id: "resp_phase_schema" }),
  },
  "streaming-response": { model: "scripted", check: scriptedReply },
  // The WebSocket mode (docs/contract.md, "Responses WebSocket mode"); the runner's response is
  // the final Response of each turn, or the turn's error message.
  "websocket-response": { model: "scripted", check: scriptedReply },
  "websocket-sequential-responses": { model: "scripted", check: (responses) => scriptedReplies(responses, 2) },
  "websocket-continuation": { model: "scripted", check: (responses) => scriptedReplies(responses, 2) },
  "websocket-reconnect-store-false-recovery": {
    model: "scripted",
    check: (responses) => {
      const [first, missing, recovered] = responses as unknown[];
      scriptedReply(first);
      expect(missing).toEqual(socketNotFound((first as { id: string }).id));
      scriptedReply(recovered);
    },
  },
  "websocket-previous-response-not-found": {
    model: "scripted",
    check: (response) =>
      expect(response).toMatchObject({
        type: "error",
        status: 400,
        error: {
          type: "invalid_request_error",
          code: "previous_response_not_found",
          message: expect.stringMatching(/^Previous response with id 'resp_openresponses_missing_\d+' not found\.$/),
          param: "previous_response_id",
        },
      }),
  },
  // A /v1/responses/compact answer is the input of a new chain on the socket ("Compaction").
  "websocket-compact-new-chain": {
    model: "scripted",
    check: (response) => {
      const { compact, websocket } = response as { compact: unknown; websocket: unknown };
      expect(compact).toMatchObject({
        object: "response.compaction",
        output: [
          {
            type: "message",
            role: "user",
            content: [{ type: "input_text", text: "Remember the compaction code word: slate." }],
          },
          {
            type: "message",
            role: "user",
            content: [{ type: "input_text", text: "Compress this conversation for later continuation." }],
          },
          { type: "compaction", encrypted_content: sealCompaction(CHAT_REPLY) },
        ],
      });
      scriptedReply(websocket);
    },
  },
  "websocket-failed-continuation-evicts-cache": {
    model: "scripted",
    check: (responses) => {
      const [first, failed, evicted] = responses as unknown[];
      scriptedReply(first);
      expect(failed).toMatchObject({
        type: "error",
        status: 400,
        error: { type: "invalid_request_error", param: "input[0].call_id" },
      });
      expect(evicted).toEqual(socketNotFound((first as { id: string }).id));
    },
  },
  "system-prompt": { model: "scripted", check: scriptedReply },
  "tool-calling": { model: "tools", check: weatherCall },
  // Its image is a red heart on white: mostly red, so the vision twin's reply is VISION_RED.
  "image-input": { model: "gemma3-vision", check: (response) => modelReply(response, "gemma3-vision", VISION_RED) },
  "multi-turn": { model: "scripted", check: scriptedReply },
  // The scripted model's summary is its one reply (docs/contract.md, "Compaction").
  "compact-response": {
    model: "scripted",
    check: (response) =>
      expect(response).toMatchObject({
        object: "response.compaction",
        output: [
          {
            type: "message",
            role: "user",
            content: [{ type: "input_text", text: "We agreed to launch on Tuesday and notify support first." }],
          },
          { type: "compaction", id: expect.stringMatching(/^cmp_/), encrypted_content: sealCompaction(CHAT_REPLY) },
        ],
      }),
  },
  // Upstream accepts 400 or 422 with any body; model is required as OpenAI requires it.
  "compact-missing-model": {
    model: "scripted",
    check: (response) => expect(response).toEqual(openAIError("Missing required parameter: 'model'.", "model", null)),
  },
};

/** The scripted model's one reply, as a completed Response. */
function scriptedReply(response: unknown): void {
  modelReply(response, "scripted", CHAT_REPLY);
}

/** `model`'s reply `text`, as a completed Response. */
function modelReply(response: unknown, model: TestModel, text: string): void {
  expect(response).toMatchObject({
    status: "completed",
    model,
    output: [
      {
        type: "message",
        role: "assistant",
        status: "completed",
        content: [{ type: "output_text", text, annotations: [] }],
      },
    ],
  });
}

/** `count` completed Responses, each with the scripted reply. */
function scriptedReplies(responses: unknown, count: number): void {
  expect(responses).toHaveLength(count);
  for (const response of responses as unknown[]) scriptedReply(response);
}

/**
 * get_weather calls whose arguments follow the request's schema. The tools model is scripted to
 * call get_weather with {"city":"Tokyo"}; this schema's only key is `location`, which the
 * schema's grammar forces, and past it the model is off its script: the text of the string is not
 * known, nor whether another call follows, and the context may fill before a string ends (then
 * that item and the Response are incomplete).
 */
function weatherCall(response: unknown): void {
  const { output } = response as { output: { status: string; arguments: string }[] };
  expect(output.length).toBeGreaterThan(0);
  for (const item of output) {
    expect(item, JSON.stringify(item).slice(0, 500)).toMatchObject({
      type: "function_call",
      name: "get_weather",
      call_id: expect.stringMatching(/^call_/),
    });
    if (item.status === "completed")
      expect(Object.entries(JSON.parse(item.arguments) as object)).toEqual([["location", expect.any(String)]]);
    else expect(item.arguments).toMatch(/^\{\s*"location"\s*:\s*"/);
  }
}

interface Edge {
  readonly name: string;
  /** The OpenAI-style base URL of the edge in front of the model's sidecar, e.g. http://127.0.0.1:PORT/v1 */
  baseUrl(model: TestModel): string;
}

const sidecars = new Map<TestModel, RunningSidecar>();
const nodeEdges = new Map<TestModel, RunningEdge>();
const wranglers = new Map<TestModel, Wrangler>();
beforeAll(async () => {
  // The runner's WebSocket tests use the global WebSocket with headers (Bun's); Node 20 has no
  // global one, and `ws`'s takes the same (url, {headers}) and dispatches the same events.
  if (globalThis.WebSocket === undefined) vi.stubGlobal("WebSocket", WebSocket);
  await ensureModels("models", ["gemma3-vision"]);
  for (const model of ["scripted", "tools", "gemma3-vision"] as const) {
    const sidecar = await startTestSidecar({ model: modelPath(model), contextSize: 2048 });
    sidecars.set(model, sidecar);
    nodeEdges.set(model, await startNodeEdge({ sidecarUrl: sidecar.url, port: 0 }));
    wranglers.set(model, await startWrangler({ SIDECAR_URL: sidecar.url }));
  }
}, 300_000);
afterAll(async () => {
  for (const wrangler of wranglers.values()) await wrangler.stop();
  for (const edge of nodeEdges.values()) await edge.close();
  for (const sidecar of sidecars.values()) await sidecar.stop();
});

function started<T>(map: ReadonlyMap<TestModel, T>, model: TestModel): T {
  const value = map.get(model);
  if (value === undefined) throw new Error(`nothing started for the ${model} model`);
  return value;
}

const EDGES: Edge[] = [
  { name: "Node", baseUrl: (model) => `${started(nodeEdges, model).url}/v1` },
  { name: "workerd", baseUrl: (model) => `${started(wranglers, model).url}/v1` },
];

function configFor(baseUrl: string, model: TestModel): TestConfig {
  return {
    baseUrl,
    apiKey: "not-needed",
    authHeaderName: "Authorization",
    useBearerPrefix: true,
    model,
    runtime: "server",
  };
}

function template(id: string): TestTemplate {
  const found = testTemplates.find((t) => t.id === id);
  if (!found) throw new Error(`no upstream test ${id}`);
  return found;
}

async function runUpstream(test: TestTemplate, config: TestConfig): Promise<TestResult> {
  const [result] = await runAllTests(config, () => undefined, [test]);
  if (!result) throw new Error(`no result for ${test.id}`);
  return result;
}

it("the pinned revision holds exactly the listed tests, each run", () => {
  expect(testTemplates.map((t) => t.id)).toEqual(UPSTREAM_IDS);
  expect(Object.keys(EXPECTED).sort()).toEqual([...UPSTREAM_IDS].sort());
});

describe.each(EDGES)("Open Responses compliance, edge on $name", (edge) => {
  for (const test of testTemplates) {
    it(`${test.id}: ${test.name}`, async () => {
      const expected = EXPECTED[test.id];
      if (!expected) throw new Error(`${test.id} is neither expected nor listed as not applicable`);
      const result = await runUpstream(test, configFor(edge.baseUrl(expected.model), expected.model));
      expect(result.errors ?? []).toEqual([]);
      expect(result.status).toBe("passed");
      expected.check(result.response);
    });
  }

  it(
    "streaming-response with a reasoning model fails on the reasoning event names alone (OpenAI's, not the " +
      "specification's)",
    async () => {
      const result = await runUpstream(template("streaming-response"), configFor(edge.baseUrl("tools"), "tools"));
      const names = (result.errors ?? []).map((error) => /^Event validation failed for (\S+): /.exec(error)?.[1]);
      // Three reasoning_text deltas ("Checking the forecast." in three tokens), then their done.
      expect(names, JSON.stringify(result.errors)).toEqual([
        "response.reasoning_text.delta",
        "response.reasoning_text.delta",
        "response.reasoning_text.delta",
        "response.reasoning_text.done",
      ]);
      expect(result.response).toMatchObject({
        status: "completed",
        output: [{ type: "reasoning" }, { type: "message", content: [{ text: CHAT_REPLY }] }],
      });
    },
  );
});

/** The error body every refusal here answers with: a 400 in OpenAI's shape. */
function openAIError(message: RegExp | string, param: string | null, code: string | null): unknown {
  return {
    error: {
      message: typeof message === "string" ? message : expect.stringMatching(message),
      type: "invalid_request_error",
      param,
      code,
    },
  };
}

describe("the runner fails when the server breaks the contract", () => {
  // The edge's answers, altered on their way to the runner: a dropped required field must fail it.
  async function runAltered(id: string, alter: (text: string) => string): Promise<TestResult> {
    const baseUrl = EDGES[0]!.baseUrl("scripted");
    const realFetch = globalThis.fetch;
    // The edge on Node runs in this process and calls the sidecar with fetch too: only the
    // runner's requests to the edge are altered.
    const spy = vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
      const response = await realFetch(input, init);
      if (!String(input).startsWith(baseUrl)) return response;
      return new Response(alter(await response.text()), { status: response.status, headers: response.headers });
    });
    try {
      return await runUpstream(template(id), configFor(baseUrl, "scripted"));
    } finally {
      spy.mockRestore();
    }
  }

  it("a Response without completed_at fails basic-response", async () => {
    const result = await runAltered("basic-response", (text) => {
      const { completed_at: _dropped, ...rest } = JSON.parse(text) as Record<string, unknown>;
      return JSON.stringify(rest);
    });
    expect(result.status).toBe("failed");
    expect(result.errors).toEqual(["completed_at: Invalid input"]);
  });

  it("stream events without sequence_number fail streaming-response", async () => {
    const result = await runAltered("streaming-response", (text) => text.replace(/,"sequence_number":\d+/g, ""));
    expect(result.status).toBe("failed");
    expect(result.errors?.length).toBeGreaterThan(0);
    for (const error of result.errors ?? [])
      expect(error).toMatch(/^Event validation failed for response\.[a-z_.]+: .*"sequence_number"/);
  });
});
