// vLLM's render API on the edge's render port, as llm-d's endpoint picker uses it for precise prefix-cache routing
// (support/llmd-picker.ts): its token-producer's request, byte for byte as it sends it; the block keys it works out
// from the ids answered; and the keys its index builds from the real sidecar's KV-cache events once the same request
// has been served through the edge (as the picker forwards it). They must be the same keys, every full block of the
// prompt, or the picker would score no pod as holding the prefix. The `tools` model (ChatML, tools in its template)
// and the `gemma3-vision` twin (an image's positions: ids above the vocabulary, drawn from its bytes).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startNodeEdge, type RunningEdge } from "../../edge/hosts/node/main.js";
import { ensureModels } from "../../gguf/models.js";
import { blockHash } from "../../sidecar/engine/llama/kv-blocks.js";
import type { RunningSidecar } from "../../sidecar/start-sidecar.js";
import { KvSubscriber } from "../support/kv-subscriber.js";
import { goJson, indexKeys, llmdBlockKeys, renderAsPicker } from "../support/llmd-picker.js";
import { promptOf } from "../support/sidecar.js";
import { startCatalogue } from "../support/catalogue.js";
import { dataUrl, RED, solidPng } from "../support/images.js";

const POD = "10.1.2.3:8080";
const MODEL = "tools";
const VISION = "gemma3-vision";
const BLOCK = 16;

let sidecar: RunningSidecar;
let edge: RunningEdge;
let subscriber: KvSubscriber;

beforeAll(async () => {
  const paths = await ensureModels("models", [MODEL, VISION]);
  subscriber = await KvSubscriber.bound("tcp://127.0.0.1:*");
  sidecar = await startCatalogue([paths[MODEL], paths[VISION]], {
    sequences: 2,
    contextSize: 2048,
    kvEvents: { endpoint: subscriber.endpoint, replay: "tcp://127.0.0.1:*", pod: POD, blockSize: BLOCK },
  });
  subscriber.replayEndpoint = sidecar.kvEvents?.replayEndpoint ?? "";
  edge = await startNodeEdge({ sidecarUrl: sidecar.url, port: 0, renderPort: 0, publicDir: false });
}, 180_000);
afterAll(async () => {
  await edge?.close();
  await subscriber?.close();
  await sidecar?.stop();
});

const renderUrl = (): string => edge.renderUrl ?? "";

/** The request as the picker forwards it to the pod's edge: the body re-marshaled, the client's model kept. */
async function serve(path: string, clientBody: Readonly<Record<string, unknown>>): Promise<void> {
  const response = await fetch(`${edge.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: goJson(clientBody),
  });
  expect(response.status).toBe(200);
  await response.text();
}

/** Waits (10 s at most) until the index holds every key of `keys` for `model`; answers the keys it holds. */
async function indexed(keys: readonly bigint[], model: string): Promise<bigint[]> {
  const deadline = Date.now() + 10_000;
  const held = () => indexKeys(subscriber.view(POD, model), model, BLOCK);
  while (!keys.every((key) => held().has(key)) && subscriber.errors.length === 0 && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 25));
  expect(subscriber.errors).toEqual([]);
  const index = held();
  return keys.filter((key) => index.has(key));
}

/** The sidecar's own keys (engine hashes) of the full blocks of `tokens`. */
function engineKeys(tokens: readonly number[]): string[] {
  const keys: string[] = [];
  let parent: bigint | undefined;
  for (let end = BLOCK; end <= tokens.length; end += BLOCK) {
    parent = blockHash(parent, tokens.slice(end - BLOCK, end) as never);
    keys.push(`GPU:${parent}`);
  }
  return keys;
}

/** Renders as the picker does, checks the keys are not held yet, serves the request, and compares. */
async function renderThenServe(
  renderPath: "/v1/chat/completions/render" | "/v1/completions/render",
  servePath: string,
  clientBody: Readonly<Record<string, unknown>>,
  idsOf: (json: unknown) => number[],
): Promise<number[]> {
  // The client names the model by its catalogue name (the topic's); the picker's modelName names it too.
  const model = String(clientBody["model"]);
  const rendered = await renderAsPicker(renderUrl(), renderPath, clientBody, model);
  expect(rendered.status).toBe(200);
  const tokens = idsOf(rendered.json);
  const keys = llmdBlockKeys(tokens, model, BLOCK);
  expect(keys.length).toBeGreaterThanOrEqual(4);
  expect(indexKeys(subscriber.view(POD, model), model, BLOCK).has(keys[0] as bigint)).toBe(false);
  await serve(servePath, clientBody);
  expect(await indexed(keys, model)).toEqual(keys);
  const view = subscriber.view(POD, model);
  expect(engineKeys(tokens).filter((key) => !view.has(key))).toEqual([]);
  // The same ids under another request model (a client naming the model otherwise): no key matches.
  const index = indexKeys(view, model, BLOCK);
  expect(llmdBlockKeys(tokens, "gpt-4o", BLOCK).filter((key) => index.has(key))).toEqual([]);
  return tokens;
}

describe("vLLM's render API for llm-d's token-producer", () => {
  it("a chat (tools included): the picker's block keys are the ones the sidecar's KV events give it", async () => {
    const chat = {
      model: MODEL,
      messages: [
        { role: "system", content: "Answer in one line & be <brief>." },
        { role: "user", content: promptOf(1, 60) },
      ],
      tools: [
        {
          type: "function",
          function: {
            name: "get_weather",
            description: "The weather in a city",
            parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
          },
        },
      ],
      max_tokens: 4,
      temperature: 0,
      stream: true,
    };
    const rendered = await renderAsPicker(renderUrl(), "/v1/chat/completions/render", chat, MODEL);
    expect(rendered.json).toMatchObject({
      request_id: expect.stringMatching(/^chatcmpl-/),
      features: null,
      model: MODEL,
      stream: true,
    });
    await renderThenServe("/v1/chat/completions/render", "/v1/chat/completions", chat, (json) => {
      return (json as { token_ids: number[] }).token_ids;
    });
  });

  it("a completion: the same, the answer a list of one", async () => {
    const completion = { model: MODEL, prompt: promptOf(2, 60), max_tokens: 4, temperature: 0 };
    const rendered = await renderAsPicker(renderUrl(), "/v1/completions/render", completion, MODEL);
    expect(rendered.json).toMatchObject([
      { request_id: expect.stringMatching(/^cmpl-/), features: null, model: MODEL },
    ]);
    await renderThenServe("/v1/completions/render", "/v1/completions", completion, (json) => {
      const list = json as { token_ids: number[] }[];
      expect(list).toHaveLength(1);
      return list[0]?.token_ids ?? [];
    });
  });

  it("a chat with an image: its positions are ids of their own, the same in the answer and in the events", async () => {
    const image = dataUrl(await solidPng(RED));
    const text = (t: string) => ({ type: "text", text: t });
    const chat = {
      model: VISION,
      messages: [
        {
          role: "user",
          content: [text("Which colour?"), { type: "image_url", image_url: { url: image } }, text(promptOf(3, 120))],
        },
      ],
      max_tokens: 4,
      temperature: 0,
    };
    const tokens = await renderThenServe("/v1/chat/completions/render", "/v1/chat/completions", chat, (json) => {
      expect(json).toMatchObject({ features: null });
      return (json as { token_ids: number[] }).token_ids;
    });
    // Placeholders (the vocabulary's size plus 30 bits of the image's hash, one per position), in a full block.
    const at = tokens.findIndex((t) => t > 1_000_000);
    expect(at).toBeGreaterThanOrEqual(0);
    expect(at).toBeLessThan(Math.floor(tokens.length / BLOCK) * BLOCK);
  });

  it("with API keys: the main port wants one (401 in vLLM's shape), the render port none", async () => {
    const keyed = await startNodeEdge({
      sidecarUrl: sidecar.url,
      port: 0,
      renderPort: 0,
      publicDir: false,
      access: { apiKeys: "sk-render-test" },
    });
    try {
      const chat = { model: MODEL, messages: [{ role: "user", content: "Hi" }] };
      const main = await renderAsPicker(keyed.url, "/v1/chat/completions/render", chat, MODEL);
      expect(main).toMatchObject({ status: 401, json: { error: { type: "Unauthorized", code: 401 } } });
      const open = await renderAsPicker(keyed.renderUrl ?? "", "/v1/chat/completions/render", chat, MODEL);
      expect(open).toMatchObject({ status: 200, json: { token_ids: expect.any(Array), features: null } });
      const keyHolder = await fetch(`${keyed.url}/v1/chat/completions/render`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: "Bearer sk-render-test" },
        body: goJson(chat),
      });
      const ids = (open.json as { token_ids: number[] }).token_ids;
      expect(await keyHolder.json()).toMatchObject({ token_ids: ids });
    } finally {
      await keyed.close();
    }
  });

  it("a bad request: 400 in vLLM's error shape, on either path; any other path 404", async () => {
    expect(await renderAsPicker(renderUrl(), "/v1/chat/completions/render", { messages: "Hi" }, MODEL)).toEqual({
      status: 400,
      json: { error: { message: expect.any(String), type: "BadRequestError", param: "messages", code: 400 } },
    });
    const infill = { prompt: "def f(", suffix: "):" };
    expect(await renderAsPicker(renderUrl(), "/v1/completions/render", infill, MODEL)).toEqual({
      status: 400,
      json: {
        error: {
          message: "suffix is not supported by the render endpoint",
          type: "BadRequestError",
          param: "suffix",
          code: 400,
        },
      },
    });
    const elsewhere = await fetch(`${renderUrl()}/v1/chat/completions`, { method: "POST", body: "{}" });
    expect([elsewhere.status, ((await elsewhere.json()) as { error: { type: string } }).error.type]).toEqual([
      404,
      "NotFoundError",
    ]);
  });
});
