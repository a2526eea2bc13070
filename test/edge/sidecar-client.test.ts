// The real gRPC-Web client (createSidecarClient) against a test gRPC-Web server
// that fronts the fake sidecar: the same transcripts come out as with the fake
// alone, errors keep their codes, and cancellation crosses the HTTP hop. Each case runs on the
// global fetch (workerd's way) and on the Node edge's own (edge/hosts/node/fetch.ts).
import { Code, ConnectError } from "@connectrpc/connect";
import { afterEach, describe, expect, it } from "vitest";
import { createApp } from "../../edge/http/app.js";
import { sidecarFetch } from "../../edge/hosts/node/fetch.js";
import { createSidecarClient, type FetchImpl } from "../../edge/upstream/connection.js";
import { FIXED_NOW_MS, FIXED_ID, post } from "../support/app.js";
import { delay, fail, FakeSidecar, finish, start, token, type Step } from "../support/fake-sidecar.js";
import { serveGrpcWeb, type GrpcWebTestServer } from "../support/grpc-web-server.js";
import { parseText } from "../support/sse.js";
import { checkChatStream } from "../support/contract.js";

let server: GrpcWebTestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function edgeOver(script: Step[], fetchImpl?: FetchImpl) {
  const fake = new FakeSidecar(script);
  server = await serveGrpcWeb(fake);
  const app = createApp({
    sidecar: createSidecarClient(server.url, fetchImpl),
    newId: () => FIXED_ID,
    now: () => FIXED_NOW_MS,
    onUnexpectedError: () => undefined,
    access: { allowOpen: true },
  });
  return { app, fake };
}

const chat = { messages: [{ role: "user", content: "Hello!" }], stream: true };
const emoji = new Uint8Array([0xf0, 0x9f, 0xa6, 0x99]);
const script: Step[] = [
  start("tiny-llama", 9),
  token("Hi", {
    logprob: -0.1,
    top: [
      ["Hi", -0.1],
      ["Hello", -2.3],
    ],
  }),
  token("", { piece: emoji.subarray(0, 2), logprob: -0.5 }),
  token("🦙", { piece: emoji.subarray(2), logprob: -0.75 }),
  finish("stop", { promptTokens: 9, completionTokens: 3 }),
];

const fetches: [string, FetchImpl | undefined][] = [
  ["the global fetch", undefined],
  ["the Node edge's fetch", sidecarFetch()],
];

describe.each(fetches)("createSidecarClient on %s", (_name, fetchImpl) => {
  it("streams a chat identical to the in-process fake (float32 logprobs printed short)", async () => {
    const direct = new FakeSidecar(script);
    const directApp = createApp({
      sidecar: direct,
      newId: () => FIXED_ID,
      now: () => FIXED_NOW_MS,
      access: { allowOpen: true },
    });
    const expected = await (
      await post(directApp, "/v1/chat/completions", { ...chat, logprobs: true, top_logprobs: 2 })
    ).text();

    const { app, fake } = await edgeOver(script, fetchImpl);
    const response = await post(app, "/v1/chat/completions", { ...chat, logprobs: true, top_logprobs: 2 });
    const text = await response.text();
    expect(text).toBe(expected);
    expect(checkChatStream(parseText(text)).text).toBe("Hi🦙");
    // the request crossed the wire intact
    expect(fake.lastCall?.request.input).toEqual({
      case: "chat",
      value: expect.objectContaining({ messages: [expect.objectContaining({ content: "Hello!" })] }) as unknown,
    });
    expect(fake.lastCall?.request.topLogprobs).toBe(2);
  });

  it("makes every call with redirect: manual (workerd has no redirect: error)", async () => {
    const seen: (RequestRedirect | undefined)[] = [];
    const spy: FetchImpl = (input, init) => {
      seen.push(init?.redirect);
      return (fetchImpl ?? fetch)(input, init);
    };
    const { app } = await edgeOver(script, spy);
    await (await post(app, "/v1/completions", { prompt: "x" })).text();
    expect(seen).toEqual(["manual"]);
  });

  it("keeps the sidecar's status codes: refusal → event: error, busy → 429", async () => {
    const refused = await edgeOver(
      [fail(Code.InvalidArgument, "the prompt does not fit the context (5000 > 4096)")],
      fetchImpl,
    );
    const r1 = await post(refused.app, "/v1/chat/completions", chat);
    expect(r1.status).toBe(200);
    const events = parseText(await r1.text());
    expect(events.map((e) => e.event)).toEqual(["error"]);
    expect(JSON.parse(events[0]?.data ?? "")).toMatchObject({
      message: "the prompt does not fit the context (5000 > 4096)",
    });
    await server?.close();

    const busy = await edgeOver([fail(Code.ResourceExhausted, "queue full")], fetchImpl);
    const r2 = await post(busy.app, "/v1/chat/completions", chat);
    expect(r2.status).toBe(429);
    expect(r2.headers.get("retry-after")).toBe("1");
  });

  it("a failure after start ends the stream with a server_error event", async () => {
    const { app } = await edgeOver([start(), token("Hi"), fail(Code.Internal, "the engine failed")], fetchImpl);
    const events = parseText(await (await post(app, "/v1/chat/completions", chat)).text());
    expect(events.at(-1)?.event).toBe("error");
    expect(JSON.parse(events.at(-1)?.data ?? "")).toMatchObject({ type: "server_error", message: "the engine failed" });
  });

  it("an unreachable sidecar is Code.Unavailable (→ 503)", async () => {
    const client = createSidecarClient("http://127.0.0.1:1", fetchImpl);
    const error = await client.listModels({}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectError);
    expect((error as ConnectError).code).toBe(Code.Unavailable);
    const app = createApp({ sidecar: client, access: { allowOpen: true } });
    expect((await post(app, "/v1/chat/completions", chat)).status).toBe(503);
  });

  it("client cancellation crosses the gRPC-Web hop to the sidecar", async () => {
    const { app, fake } = await edgeOver([start(), token("Hi"), delay(60_000), finish()], fetchImpl);
    const client = new AbortController();
    const response = await app.fetch(
      new Request("http://edge.test/v1/chat/completions", {
        method: "POST",
        body: JSON.stringify(chat),
        signal: client.signal,
      }),
    );
    const reader = response.body!.getReader();
    await reader.read();
    await reader.read();
    client.abort();
    const deadline = Date.now() + 2000;
    while (fake.lastCall?.signal?.aborted !== true && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    expect(fake.lastCall?.signal?.aborted).toBe(true);
  });

  it("lists models and answers /health through the real client", async () => {
    const { app } = await edgeOver(script, fetchImpl);
    const health = await app.fetch(new Request("http://edge.test/health"));
    expect(await health.json()).toEqual({ status: "ok", sidecar: "ok", models: ["fake-model"] });
  });
});
