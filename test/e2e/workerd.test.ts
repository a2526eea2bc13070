// The edge under workerd (`wrangler dev`) in front of a real sidecar and the scripted model:
// the official client streams through it, and a client that leaves stops generation (docs/decisions.md, "Cancellation
// chain").
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningSidecar } from "../../sidecar/start-sidecar.js";
import { checkChatStream } from "../support/contract.js";
import { clientsFor, readMetrics, startTestSidecar } from "../support/sidecar.js";
import { readEvents } from "../support/sse.js";
import { startWrangler, type Wrangler } from "../support/wrangler.js";

let sidecar: RunningSidecar;
let wrangler: Wrangler;
beforeAll(async () => {
  sidecar = await startTestSidecar({ sequences: 2, contextSize: 4096 });
  wrangler = await startWrangler({ SIDECAR_URL: sidecar.url });
}, 90_000);
afterAll(async () => {
  await wrangler?.stop();
  await sidecar?.stop();
});

describe("the edge under wrangler dev with the real sidecar", () => {
  it("streams the chat contract to the official client", async () => {
    const client = new OpenAI({ baseURL: `${wrangler.url}/v1`, apiKey: "not-needed", maxRetries: 0 });
    const stream = await client.chat.completions.create({
      model: "local-model",
      messages: [{ role: "user", content: "Hello!" }],
      stream: true,
    });
    let text = "";
    let first: unknown;
    let finish: string | null = null;
    for await (const chunk of stream) {
      first ??= chunk.choices[0]?.delta;
      text += chunk.choices[0]?.delta.content ?? "";
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(first).toEqual({ role: "assistant" });
    expect(text).toBe("It is sunny in Tokyo, 22°C. ☀️");
    expect(finish).toBe("stop");
    const completion = await client.completions.create({ model: "m", prompt: "Once upon a time" });
    expect(completion.choices[0]?.text).toBe(" there lived a tiny llama (🦙).");
  });

  it("streams Anthropic Messages and OpenAI Responses to their official clients", async () => {
    const anthropic = new Anthropic({ baseURL: wrangler.url, apiKey: "not-needed", maxRetries: 0 });
    const message = await anthropic.messages
      .stream({ model: "m", max_tokens: 256, messages: [{ role: "user", content: "Hello!" }] })
      .finalMessage();
    expect(message).toMatchObject({
      content: [{ type: "text", text: "It is sunny in Tokyo, 22°C. ☀️" }],
      stop_reason: "end_turn",
      usage: { output_tokens: 16 },
    });
    const openai = new OpenAI({ baseURL: `${wrangler.url}/v1`, apiKey: "not-needed", maxRetries: 0 });
    const response = await openai.responses
      .stream({ model: "m", input: "Hello!", max_output_tokens: 3 })
      .finalResponse();
    expect(response).toMatchObject({ status: "incomplete", output_text: "It is sunny", usage: { output_tokens: 3 } });
  });

  it("embeds through the official client, the base64 form decoding to the sidecar's own vectors", async () => {
    const openai = new OpenAI({ baseURL: `${wrangler.url}/v1`, apiKey: "not-needed", maxRetries: 0 });
    const answer = await openai.embeddings.create({ model: "m", input: ["Hello!", "Once upon a time"] });
    const rpc = await clientsFor(sidecar.url).grpc.embed({
      inputs: [{ input: { case: "text", value: "Hello!" } }, { input: { case: "text", value: "Once upon a time" } }],
    });
    expect(answer.data.map((d) => d.embedding)).toEqual(rpc.embeddings.map((e) => e.values));
    expect(answer.usage.prompt_tokens).toBe(rpc.promptTokens);
  });

  it("streams a forced tool call to the official client (the sidecar's grammar writes it)", async () => {
    const client = new OpenAI({ baseURL: `${wrangler.url}/v1`, apiKey: "not-needed", maxRetries: 0 });
    const parameters = { type: "object", properties: { city: { enum: ["Tokyo"] } }, required: ["city"] };
    const completion = await client.chat.completions
      .stream({
        model: "m",
        messages: [{ role: "user", content: "Weather in Tokyo?" }],
        tools: [{ type: "function", function: { name: "get_weather", parameters } }],
        tool_choice: "required",
        parallel_tool_calls: false,
        max_tokens: 64,
      })
      .finalChatCompletion();
    const call = completion.choices[0]?.message.tool_calls?.[0];
    expect(completion.choices[0]?.finish_reason).toBe("tool_calls");
    if (call?.type !== "function") throw new Error("no function call");
    expect(call.function.name).toBe("get_weather");
    expect(JSON.parse(call.function.arguments)).toEqual({ city: "Tokyo" });
  });

  it("resumes a dropped stream (x-resumable) after its last event, the pieces joining into the whole", async () => {
    const drop = new AbortController();
    const body = JSON.stringify({ model: "m", stream: true, messages: [{ role: "user", content: "Hello!" }] });
    const response = await fetch(`${wrangler.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-resumable": "true" },
      body,
      signal: drop.signal,
    });
    const streamId = response.headers.get("x-stream-id") ?? "";
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = "";
    while ((text.match(/\n\n/g) ?? []).length < 2)
      text += decoder.decode((await reader.read()).value, { stream: true });
    drop.abort();
    const first = text.split(/(?<=\n\n)/).slice(0, 2);
    expect(first.map((e) => /id: (\d+)/.exec(e)?.[1])).toEqual(["0", "1"]);
    const rest = await (
      await fetch(`${wrangler.url}/v1/streams/${streamId}`, { headers: { "last-event-id": "1" } })
    ).text();
    const whole = await (await fetch(`${wrangler.url}/v1/streams/${streamId}`)).text();
    expect(first.join("") + rest).toBe(whole);
    expect(whole).toContain("data: [DONE]");
  });

  it("keeps the frame order on the raw stream", async () => {
    const response = await fetch(`${wrangler.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        messages: [{ role: "user", content: "Hello!" }],
        stream: true,
        stream_options: { include_usage: true },
      }),
    });
    const summary = checkChatStream(await readEvents(response.body));
    expect(summary).toMatchObject({ text: "It is sunny in Tokyo, 22°C. ☀️", finishReason: "stop", done: true });
    expect(summary.usage).toMatchObject({ completion_tokens: 16 });
  });

  it("stops the sidecar's generation when the client disconnects", async () => {
    const before = await readMetrics(sidecar.url);
    await new Promise<void>((resolve, reject) => {
      const req = httpRequest(
        `${wrangler.url}/v1/completions`,
        { method: "POST", headers: { "content-type": "application/json" } },
        (res) => {
          res.once("data", () => {
            req.destroy();
            resolve();
          });
        },
      );
      req.on("error", () => undefined);
      req.end(JSON.stringify({ prompt: "Let us sing. Sing", stream: true }));
      setTimeout(() => reject(new Error("no data within 10 s")), 10_000);
    });
    await expect
      .poll(async () => (await readMetrics(sidecar.url)).sidecar_generations_active, { timeout: 10_000 })
      .toBe(0);
    const after = await readMetrics(sidecar.url);
    expect(after.sidecar_generations_aborted_total).toBe((before.sidecar_generations_aborted_total ?? 0) + 1);
    // Left alone, the song would have run to the end of a 4,096-token context.
    expect((after.sidecar_tokens_generated_total ?? 0) - (before.sidecar_tokens_generated_total ?? 0)).toBeLessThan(
      3000,
    );
  });
});
