// The Responses WebSocket mode (docs/contract.md, "Responses WebSocket mode") on Node and under
// workerd, in front of real sidecars (the scripted model for exact replies, the 60M random model
// for a generation cut short), with API keys: the official `openai` client's ResponsesWS, and a
// plain `ws` client for the exact messages.
import OpenAI from "openai";
import { ResponsesWS } from "openai/resources/responses/ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { startNodeEdge } from "../../edge/hosts/node/main.js";
import { ensureModels } from "../../gguf/models.js";
import type { RunningSidecar } from "../../sidecar/start-sidecar.js";
import { CHAT_REPLY } from "../support/scripted.js";
import { socketNotFound } from "../support/contract.js";
import { readMetrics, startTestSidecar } from "../support/sidecar.js";
import { startWrangler } from "../support/wrangler.js";

const KEY = "sk-websocket-test";
const AUTH = { authorization: `Bearer ${KEY}` };
type Message = Record<string, unknown> & { type: string };

interface Edge {
  /** What clients talk to (under workerd wrangler dev's proxy, as `npm start` serves). */
  readonly url: string;
  /**
   * The Worker's own socket under workerd (docs/decisions.md, "Cancellation under wrangler dev"); the same URL on Node.
   */
  readonly direct: string;
  stop(): Promise<void>;
}

const runtimes: Record<string, (sidecarUrls: string) => Promise<Edge>> = {
  node: async (urls) => {
    const edge = await startNodeEdge({ sidecarUrls: urls.split(","), port: 0, access: { apiKeys: KEY } });
    return { url: edge.url, direct: edge.url, stop: () => edge.close() };
  },
  workerd: async (urls) => {
    const wrangler = await startWrangler({ SIDECAR_URLS: urls, API_KEYS: KEY }, { workerSocket: true });
    return { url: wrangler.url, direct: wrangler.workerUrl ?? wrangler.url, stop: () => wrangler.stop() };
  },
};

let scripted: RunningSidecar;
let random: RunningSidecar;
beforeAll(async () => {
  const { "random-60m": model } = await ensureModels("models", ["random-60m"]);
  [scripted, random] = await Promise.all([
    startTestSidecar(),
    startTestSidecar({ model, sequences: 1, contextSize: 4096 }),
  ]);
}, 120_000);
afterAll(async () => {
  await Promise.all([scripted?.stop(), random?.stop()]);
});

/** A plain WebSocket client: messages as they come, parsed. */
class Client {
  private readonly received: Message[] = [];
  private waiting: (() => void) | undefined;
  readonly socket: WebSocket;

  constructor(url: string, headers: Record<string, string> = AUTH) {
    this.socket = new WebSocket(`${url.replace(/^http/, "ws")}/v1/responses`, { headers });
    this.socket.on("message", (data) => {
      this.received.push(JSON.parse(data.toString()) as Message);
      this.waiting?.();
    });
  }

  opened(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.socket.once("open", () => resolve());
      this.socket.once("error", reject);
    });
  }

  create(body: Record<string, unknown>): void {
    this.socket.send(JSON.stringify({ type: "response.create", ...body }));
  }

  /** The messages up to a terminal event or an error, taken off the queue. */
  async turn(): Promise<Message[]> {
    const ends = (m: Message) =>
      ["response.completed", "response.incomplete", "response.failed", "error"].includes(m.type);
    while (!this.received.some(ends)) await new Promise<void>((resolve) => (this.waiting = resolve));
    return this.received.splice(0, this.received.findIndex(ends) + 1);
  }

  async first(type: string): Promise<Message> {
    for (;;) {
      const found = this.received.find((m) => m.type === type);
      if (found !== undefined) return found;
      await new Promise<void>((resolve) => (this.waiting = resolve));
    }
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.socket.once("close", () => resolve());
      this.socket.close();
    });
  }
}

async function connected(url: string): Promise<Client> {
  const client = new Client(url);
  await client.opened();
  return client;
}

const responseOf = (turn: Message[]) => (turn.at(-1) as unknown as { response: Record<string, unknown> }).response;

async function until(check: () => Promise<boolean>, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return check();
}

describe.each(Object.entries(runtimes))("the Responses WebSocket mode on %s", (_name, start) => {
  let edge: Edge;
  beforeAll(async () => {
    edge = await start(`${scripted.url},${random.url}`);
  }, 120_000);
  afterAll(async () => {
    await edge?.stop();
  });

  it("the official client's ResponsesWS gets the same events as the HTTP stream, numbered from 0", async () => {
    const openai = new OpenAI({ baseURL: `${edge.url}/v1`, apiKey: KEY, maxRetries: 0 });
    const socket = new ResponsesWS(openai);
    const events: { type: string; sequence_number?: number; response?: unknown }[] = [];
    const completed = new Promise<void>((resolve, reject) => {
      socket.on("event", (event) => {
        events.push(event);
        if (event.type === "response.completed") resolve();
      });
      socket.on("error", reject);
    });
    socket.send({ type: "response.create", model: "scripted", input: "Hello!", store: false });
    await completed;
    socket.close();
    const http: string[] = [];
    for await (const event of await openai.responses.create({
      model: "scripted",
      input: "Hello!",
      store: false,
      stream: true,
    }))
      http.push(event.type);
    expect(events.map((event) => event.type)).toEqual(http);
    expect(events.map((event) => event.sequence_number)).toEqual(http.map((_, i) => i));
    expect(events.at(-1)?.response).toMatchObject({
      status: "completed",
      store: false,
      previous_response_id: null,
      output_text: CHAT_REPLY,
    });
  });

  it(
    "continues a store: false response on the socket, with its context, as the same conversation sent " + "whole",
    async () => {
      const client = await connected(edge.url);
      client.create({ model: "scripted", input: "Hello!", store: false });
      const first = responseOf(await client.turn());
      client.create({ model: "scripted", input: "And tomorrow?", store: false, previous_response_id: first["id"] });
      const second = responseOf(await client.turn());
      await client.close();
      expect(second).toMatchObject({
        status: "completed",
        store: false,
        previous_response_id: first["id"],
        output_text: CHAT_REPLY,
      });
      // The same context sent whole over HTTP: the same prompt, so the same input tokens.
      const input = [
        { type: "message", role: "user", content: "Hello!" },
        ...(first["output"] as unknown[]),
        { type: "message", role: "user", content: "And tomorrow?" },
      ];
      const whole = await fetch(`${edge.url}/v1/responses`, {
        method: "POST",
        headers: { ...AUTH, "content-type": "application/json" },
        body: JSON.stringify({ model: "scripted", input, store: false }),
      });
      const { usage } = (await whole.json()) as { usage: { input_tokens: number } };
      expect((second["usage"] as { input_tokens: number }).input_tokens).toBe(usage.input_tokens);
    },
  );

  it(
    "answers an unknown previous_response_id, a failed continuation and a bad message with error messages, and goes " +
      "on",
    async () => {
      const client = await connected(edge.url);
      client.create({ model: "scripted", input: "Hi", store: false, previous_response_id: "resp_unknown" });
      expect(await client.turn()).toEqual([socketNotFound("resp_unknown")]);
      client.create({ model: "scripted", input: "Hello!", store: false });
      const first = responseOf(await client.turn());
      const id = first["id"] as string;
      client.create({
        model: "scripted",
        store: false,
        previous_response_id: id,
        input: [{ type: "function_call_output", call_id: "call_missing", output: "x" }],
      });
      const [failed] = await client.turn();
      expect(failed).toMatchObject({
        type: "error",
        status: 400,
        error: { type: "invalid_request_error", param: "input[0].call_id" },
      });
      client.create({ model: "scripted", input: "Again", store: false, previous_response_id: id });
      expect(await client.turn()).toEqual([socketNotFound(id)]);
      client.socket.send("not json");
      expect(await client.turn()).toEqual([
        {
          type: "error",
          status: 400,
          error: {
            type: "invalid_request_error",
            code: "invalid_json",
            message: "The message is not valid JSON.",
            param: null,
          },
        },
      ]);
      client.socket.send(JSON.stringify({ type: "response.cancel" }));
      expect(await client.turn()).toEqual([
        {
          type: "error",
          status: 400,
          error: {
            type: "invalid_request_error",
            code: "unknown_event_type",
            message: 'Unknown event type "response.cancel": this socket takes `response.create` messages.',
            param: "type",
          },
        },
      ]);
      client.create({ model: "scripted", input: "Hello!", store: false, generate: false });
      expect(await client.turn()).toEqual([
        {
          type: "error",
          status: 400,
          error: {
            type: "invalid_request_error",
            code: "unsupported_parameter",
            message:
              "generate: false (a warm-up without output) is not supported by this server; send the turn itself.",
            param: "generate",
          },
        },
      ]);
      client.create({ model: "scripted", input: "Hello!", store: false });
      expect(responseOf(await client.turn())).toMatchObject({ status: "completed", output_text: CHAT_REPLY });
      await client.close();
    },
  );

  it("answers turns sent at once one after the other, in order", async () => {
    const client = await connected(edge.url);
    client.create({ model: "scripted", input: "One", store: false, metadata: { turn: "1" } });
    client.create({ model: "scripted", input: "Two", store: false, metadata: { turn: "2" } });
    const [first, second] = [await client.turn(), await client.turn()];
    await client.close();
    expect(first.map((m) => m.sequence_number)).toEqual(first.map((_, i) => i));
    expect(second.map((m) => m.sequence_number)).toEqual(second.map((_, i) => i));
    expect(responseOf(first)).toMatchObject({ status: "completed", metadata: { turn: "1" }, output_text: CHAT_REPLY });
    expect(responseOf(second)).toMatchObject({ status: "completed", metadata: { turn: "2" }, output_text: CHAT_REPLY });
  });

  it("refuses an upgrade without the key with the HTTP 401 and OpenAI's error, and opens no socket", async () => {
    const socket = new WebSocket(`${edge.url.replace(/^http/, "ws")}/v1/responses`, {
      headers: { authorization: "Bearer sk-wrong" },
    });
    const refused = await new Promise<{ status: number | undefined; body: string }>((resolve, reject) => {
      socket.on("unexpected-response", (_request, response) => {
        let body = "";
        response.on("data", (chunk: Buffer) => (body += chunk.toString()));
        response.on("end", () => resolve({ status: response.statusCode, body }));
      });
      socket.on("open", () => reject(new Error("the socket opened")));
    });
    expect(refused.status).toBe(401);
    expect(JSON.parse(refused.body)).toEqual({
      error: {
        message: "Incorrect API key provided.",
        type: "invalid_request_error",
        param: null,
        code: "invalid_api_key",
      },
    });
  });

  it("stops the generation when the socket closes mid-reply", async () => {
    expect(
      await until(async () => ((await readMetrics(random.url))["sidecar_generations_active"] ?? -1) === 0, 10_000),
    ).toBe(true);
    const aborted = random.metrics.generationsAborted;
    const client = await connected(edge.direct);
    client.create({ model: "random-60m", input: "Tell me everything.", max_output_tokens: 4000, store: false });
    await client.first("response.created"); // sent once the sidecar has started
    await client.close();
    // Freed within about a second: a generation left running would go on for a minute or more.
    expect(
      await until(async () => ((await readMetrics(random.url))["sidecar_generations_active"] ?? -1) === 0, 2_000),
    ).toBe(true);
    expect(random.metrics.generationsAborted - aborted).toBe(1);
  });
});

describe("the Responses WebSocket mode's message limit on Node", () => {
  it("closes the socket (1009) on a message over MAX_BODY_BYTES", async () => {
    const edge = await startNodeEdge({
      sidecarUrl: scripted.url,
      port: 0,
      access: { apiKeys: KEY },
      maxBodyBytes: 1024,
    });
    try {
      const client = await connected(edge.url);
      const closed = new Promise<number>((resolve) => client.socket.once("close", (code) => resolve(code)));
      client.create({ model: "scripted", input: "x".repeat(2048) });
      expect(await closed).toBe(1009);
    } finally {
      await edge.close();
    }
  });
});
