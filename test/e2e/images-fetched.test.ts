// Images by http(s) URL, fetched by the edge on Node and under workerd (`wrangler dev`), from a local HTTP server
// that MEDIA_ALLOW_HOSTS lets through: the gemma3-vision twin answers the fetched image's colour on OpenAI chat and
// Anthropic Messages; a redirect to a metadata address, a host not allowed, and a fetch over MEDIA_FETCH_TIMEOUT_MS
// are 400s naming the field.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startNodeEdge } from "../../edge/hosts/node/main.js";
import { ensureModels } from "../../gguf/models.js";
import type { RunningSidecar } from "../../sidecar/start-sidecar.js";
import { RED, solidPng } from "../support/images.js";
import { VISION_RED } from "../support/scripted.js";
import { startTestSidecar } from "../support/sidecar.js";
import { startWrangler } from "../support/wrangler.js";

let sidecar: RunningSidecar;
let server: Server;
let images: string;
beforeAll(async () => {
  const { "gemma3-vision": model } = await ensureModels("models", ["gemma3-vision"]);
  sidecar = await startTestSidecar({ model, contextSize: 1024 });
  const red = await solidPng(RED);
  server = createServer((request, response) => {
    if (request.url === "/red.png") {
      response.writeHead(200, { "content-type": "image/png" });
      response.end(red);
    } else if (request.url === "/moved.png") {
      response.writeHead(302, { location: "/red.png" });
      response.end();
    } else if (request.url === "/to-metadata.png") {
      response.writeHead(302, { location: "http://169.254.169.254/latest/meta-data/" });
      response.end();
    } else if (request.url === "/slow.png") {
      setTimeout(() => response.end(red), 5000).unref();
    } else {
      response.writeHead(404);
      response.end();
    }
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  images = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}, 300_000);
afterAll(async () => {
  server?.closeAllConnections();
  server?.close();
  await sidecar?.stop();
});

const EDGES = [
  {
    name: "node",
    start: async () => {
      const edge = await startNodeEdge({
        sidecarUrl: sidecar.url,
        port: 0,
        media: { allowHosts: ["127.0.0.1"], fetchTimeoutMs: 1000 },
      });
      return { url: edge.url, stop: () => edge.close() };
    },
  },
  {
    name: "workerd",
    start: () =>
      startWrangler({ SIDECAR_URL: sidecar.url, MEDIA_ALLOW_HOSTS: "127.0.0.1", MEDIA_FETCH_TIMEOUT_MS: "1000" }),
  },
];

describe.each(EDGES)("images fetched by the edge ($name)", ({ start }) => {
  let edge: { url: string; stop(): Promise<void> };
  beforeAll(async () => {
    edge = await start();
  }, 120_000);
  afterAll(() => edge?.stop());
  const openai = () => new OpenAI({ baseURL: `${edge.url}/v1`, apiKey: "none", maxRetries: 0 });
  const chat = (url: string) =>
    openai().chat.completions.create({
      model: "gemma3-vision",
      temperature: 0,
      max_tokens: 32,
      messages: [{ role: "user", content: [{ type: "image_url", image_url: { url } }] }],
    });
  const refusal = (promise: Promise<unknown>) =>
    promise.then(
      () => undefined,
      (error: InstanceType<typeof OpenAI.APIError>) => [error.status, error.error],
    );

  it("OpenAI chat and Anthropic Messages: an image by URL (and through a redirect) is fetched and read", async () => {
    expect((await chat(`${images}/red.png`)).choices[0]?.message.content).toBe(VISION_RED);
    expect((await chat(`${images}/moved.png`)).choices[0]?.message.content).toBe(VISION_RED);
    const anthropic = new Anthropic({ baseURL: edge.url, apiKey: "none", maxRetries: 0 });
    const message = await anthropic.messages.create({
      model: "gemma3-vision",
      max_tokens: 32,
      messages: [{ role: "user", content: [{ type: "image", source: { type: "url", url: `${images}/red.png` } }] }],
    });
    expect(message.content).toEqual([{ type: "text", text: VISION_RED }]);
  });

  it("a redirect to a metadata address, a host not allowed and a slow fetch are 400s naming the field", async () => {
    const field = "messages[0].content[0].image_url.url";
    const named = (message: string, code: string) => [
      400,
      { message: `Invalid '${field}': ${message}.`, type: "invalid_request_error", param: field, code },
    ];
    const hostRefused =
      "the image's host is a private, loopback or link-local address, which this server does not fetch from " +
      "(MEDIA_ALLOW_HOSTS lists hosts it may)";
    expect(await refusal(chat(`${images}/to-metadata.png`))).toEqual(named(hostRefused, "image_host_refused"));
    expect(await refusal(chat(`${images.replace("127.0.0.1", "[::1]")}/red.png`))).toEqual(
      named(hostRefused, "image_host_refused"),
    );
    expect(await refusal(chat(`${images}/slow.png`))).toEqual(
      named("fetching the image took over 1000 ms (MEDIA_FETCH_TIMEOUT_MS)", "image_fetch_timeout"),
    );
  });
});
