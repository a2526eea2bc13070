// Resumable streams through the edge on Node and the real sidecar (scripted model), on every
// protocol: numbered events, `x-stream-id`, a replay byte for byte equal to the original, a
// dropped stream resumed after event N whose pieces join into the uninterrupted stream, a resume
// through a restarted edge, and Responses' own form through the official client.
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningSidecar } from "../../sidecar/start-sidecar.js";
import { startNodeEdge, type RunningEdge } from "../../edge/hosts/node/main.js";
import { modelPath } from "../../gguf/models.js";
import { startStack } from "../support/edge.js";
import { readMetrics, startTestSidecar } from "../support/sidecar.js";

let sidecar: RunningSidecar;
let edge: RunningEdge;
beforeAll(async () => {
  sidecar = await startTestSidecar({ sequences: 2, contextSize: 4096 });
  edge = await startNodeEdge({ sidecarUrl: sidecar.url, port: 0 });
}, 60_000);
afterAll(async () => {
  await edge?.close();
  await sidecar?.stop();
});

/** The SSE events of a body (keep-alive comments left out), each with its blank line. */
const eventsOf = (text: string): string[] =>
  text
    .split(/(?<=\n\n)/)
    .map((e) => e.replace(/^(?::[^\n]*\n)+/, ""))
    .filter((e) => e.trim() !== "");

/** POSTs a resumable stream and reads `stopAfter` events of it (then drops it), or all. */
async function open(
  url: string,
  path: string,
  body: unknown,
  stopAfter = Infinity,
  headers: Record<string, string> = {},
) {
  const drop = new AbortController();
  const response = await fetch(`${url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-resumable": "true", ...headers },
    body: JSON.stringify(body),
    signal: drop.signal,
  });
  const streamId = response.headers.get("x-stream-id") ?? "";
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
    if (eventsOf(text).length >= stopAfter) {
      drop.abort();
      break;
    }
  }
  const events = eventsOf(text).slice(0, stopAfter);
  return { status: response.status, streamId, events };
}

async function resume(url: string, streamId: string, lastEventId?: number, headers: Record<string, string> = {}) {
  const response = await fetch(`${url}/v1/streams/${streamId}`, {
    headers: { ...(lastEventId === undefined ? {} : { "last-event-id": String(lastEventId) }), ...headers },
  });
  return { status: response.status, type: response.headers.get("content-type"), text: await response.text() };
}

const CASES = [
  [
    "/v1/chat/completions",
    {
      model: "m",
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: "user", content: "Hello!" }],
    },
  ],
  ["/v1/completions", { model: "m", stream: true, prompt: "Once upon a time" }],
  ["/v1/messages", { model: "m", stream: true, max_tokens: 256, messages: [{ role: "user", content: "Hello!" }] }],
  ["/v1/responses", { model: "m", stream: true, input: "Hello!" }],
] as const;

describe.each(CASES)("resumable %s", (path, body) => {
  it("numbers every event from 0, names the stream, and replays it byte for byte", async () => {
    const original = await open(edge.url, path, body);
    expect(original.status).toBe(200);
    expect(original.streamId).toMatch(/^strm_[A-Za-z0-9_-]{22}\.[0-9a-f]{12}$/);
    expect(original.events.map((e) => /^(?:event: [^\n]*\n)?id: (\d+)\n/.exec(e)?.[1])).toEqual(
      original.events.map((_, i) => String(i)),
    );
    const replay = await resume(edge.url, original.streamId);
    expect(replay.type).toBe("text/event-stream; charset=utf-8");
    expect(eventsOf(replay.text)).toEqual(original.events);
  });

  it("dropped after 3 events and resumed after the last one it had: the pieces are the whole stream", async () => {
    const first = await open(edge.url, path, body, 3);
    expect(first.events).toHaveLength(3);
    const rest = await resume(edge.url, first.streamId, 2);
    const whole = await resume(edge.url, first.streamId);
    expect([...first.events, ...eventsOf(rest.text)]).toEqual(eventsOf(whole.text));
    expect(eventsOf(whole.text).length).toBeGreaterThan(4);
  });
});

describe("resumable streams", () => {
  it("resume through a restarted edge (the sidecar holds the stream)", async () => {
    const other = await startNodeEdge({ sidecarUrl: sidecar.url, port: 0 });
    const first = await open(other.url, "/v1/chat/completions", CASES[0][1], 2);
    await other.close();
    const again = await startNodeEdge({ sidecarUrl: sidecar.url, port: 0 });
    try {
      const rest = await resume(again.url, first.streamId, 1);
      const whole = await resume(edge.url, first.streamId);
      expect([...first.events, ...eventsOf(rest.text)]).toEqual(eventsOf(whole.text));
      expect(whole.text).toContain("data: [DONE]");
    } finally {
      await again.close();
    }
  });

  it("an unknown stream is a 404 in OpenAI's shape; a bad Last-Event-ID a 400", async () => {
    const unknown = await resume(edge.url, "strm_AAAAAAAAAAAAAAAAAAAAAA");
    expect(unknown.status).toBe(404);
    expect(JSON.parse(unknown.text)).toMatchObject({
      error: { message: expect.stringContaining("unknown or has expired") },
    });
    const first = await open(edge.url, "/v1/completions", CASES[1][1]);
    const bad = await resume(edge.url, first.streamId, undefined, { "last-event-id": "x" });
    expect(bad.status).toBe(400);
  });

  it("a stream that did not ask is not numbered and has no stream id", async () => {
    const response = await fetch(`${edge.url}/v1/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(CASES[1][1]),
    });
    expect(response.headers.get("x-stream-id")).toBeNull();
    expect(await response.text()).not.toMatch(/^id:/m);
  });

  it("Responses: a background job through the official client: queued at once, polled to completion", async () => {
    const client = new OpenAI({ baseURL: `${edge.url}/v1`, apiKey: "none", maxRetries: 0 });
    const queued = await client.responses.create({ model: "m", input: "Hello!", background: true });
    expect(queued).toMatchObject({ object: "response", status: "queued", background: true, output: [], usage: null });
    let polled = await client.responses.retrieve(queued.id);
    for (let i = 0; i < 200 && polled.status !== "completed"; i++) {
      expect(["queued", "in_progress"]).toContain(polled.status);
      await new Promise((resolve) => setTimeout(resolve, 25));
      polled = await client.responses.retrieve(queued.id);
    }
    expect(polled).toMatchObject({
      id: queued.id,
      status: "completed",
      background: true,
      output_text: "It is sunny in Tokyo, 22°C. ☀️",
      usage: { output_tokens: 16 },
    });
    const refused = await client.responses
      .create({ model: "m", input: "Hello!", background: true, conversation: "conv_x" })
      .catch((e: unknown) => e as { status: number; param?: string });
    expect(refused).toMatchObject({ status: 400, param: "background" });
    // The same Response as its stream would have ended with.
    const streamed = await client.responses.retrieve(queued.id, { stream: true });
    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of streamed) if (event.type === "response.completed") completed = event.response;
    expect(completed).toEqual(polled);
  });

  it(
    "Responses: cancel a background job through the official client; polled before, it is in progress with its " +
      "output so " +
      "far; then cancelled, its sequence freed",
    async () => {
      // Random weights: a reply that runs to its token limit, long enough to be caught in progress.
      // Greedy, so that it is the same reply every run (sampled, it could meet an end token early).
      const random = await startStack({ model: modelPath("random-tiny"), sequences: 1, contextSize: 4096 });
      try {
        const client = new OpenAI({ baseURL: random.baseURL, apiKey: "none", maxRetries: 0 });
        const job = await client.responses.create({
          model: "m",
          input: "Hello!",
          max_output_tokens: 3000,
          temperature: 0,
          background: true,
        });
        let polled = await client.responses.retrieve(job.id);
        for (let i = 0; i < 400 && polled.output_text === ""; i++) polled = await client.responses.retrieve(job.id);
        expect(polled).toMatchObject({
          status: "in_progress",
          completed_at: null,
          usage: null,
          output: [{ type: "message", status: "in_progress" }],
        });
        expect(polled.output_text).not.toBe("");
        const cancelled = await client.responses.cancel(job.id);
        expect(cancelled).toMatchObject({ id: job.id, status: "cancelled", background: true });
        expect(cancelled.output_text.startsWith(polled.output_text)).toBe(true);
        await expect
          .poll(async () => (await readMetrics(random.sidecar.url)).sidecar_generations_active, { timeout: 10_000 })
          .toBe(0);
        expect((await client.responses.retrieve(job.id)).status).toBe("cancelled");
        const other = await client.completions.create({ model: "m", prompt: "Once", max_tokens: 1 });
        expect(
          await client.responses
            .cancel(other.id.replace(/^cmpl-/, "resp_"))
            .catch((e: unknown) => (e as { status?: number }).status),
        ).toBe(404);
      } finally {
        await random.stop();
      }
    },
  );

  it(
    "Responses: background + stream through the official client, then retrieve with stream and " + "starting_after",
    async () => {
      const client = new OpenAI({ baseURL: `${edge.url}/v1`, apiKey: "none", maxRetries: 0 });
      const stream = await client.responses.create({ model: "m", input: "Hello!", stream: true, background: true });
      const seen: { type: string; sequence_number: number }[] = [];
      let id = "";
      for await (const event of stream) {
        seen.push(event);
        if (event.type === "response.created") id = event.response.id;
        if (seen.length === 4) break;
      }
      expect(seen.map((e) => e.sequence_number)).toEqual([0, 1, 2, 3]);
      const rest = await client.responses.retrieve(id, { stream: true, starting_after: 3 });
      const after: { type: string; sequence_number: number }[] = [];
      let final: OpenAI.Responses.Response | undefined;
      for await (const event of rest) {
        after.push(event);
        if (event.type === "response.completed") final = event.response;
      }
      expect(after[0]?.sequence_number).toBe(4);
      expect(after.map((e) => e.sequence_number)).toEqual(after.map((_, i) => 4 + i));
      expect(final).toMatchObject({
        id,
        status: "completed",
        background: true,
        output_text: "It is sunny in Tokyo, 22°C. ☀️",
      });
    },
  );
});
