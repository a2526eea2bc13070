// Traces from the edge to the sidecar (docs/decisions.md, "Traces"): the real edge on Node and a
// real sidecar with the scripted model, both exporting to a local OTLP receiver over each OTLP/HTTP
// protocol; one trace id from the client's `traceparent` through the sidecar's steps, the GenAI
// attributes, and no prompt or reply text unless content capture is on.
import OpenAI from "openai";
import { beforeAll, describe, expect, it } from "vitest";
import { startNodeEdge, type RunningEdge } from "../../edge/hosts/node/main.js";
import type { RunningSidecar } from "../../sidecar/start-sidecar.js";
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from "../support/otlp-receiver.js";
import { CHAT_REPLY, CHAT_REPLY_TOKENS, STORY, chatPromptTokens } from "../support/scripted.js";
import { clientsFor, collect, startTestSidecar } from "../support/sidecar.js";
import { ensureModels } from "../../gguf/models.js";
import { startWrangler } from "../support/wrangler.js";

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const CLIENT_SPAN = "00f067aa0ba902b7";
const USER = "What is the weather in Tokyo?";
const [SERVER, CLIENT] = [2, 3];

interface Run {
  readonly spans: ReceivedSpan[];
  readonly contentTypes: string[];
  readonly chatId: string;
  readonly traceresponse: string | null;
  readonly promptTokens: number;
  /** The embeddings call's `usage.prompt_tokens`. */
  readonly embeddingTokens: number;
}

type Runtime = "node" | "workerd";
type Protocol = "http/protobuf" | "http/json";

/** The edge on `runtime`, tracing to `receiver` (under workerd through its variables, as a deployment sets them). */
async function tracedEdge(
  runtime: Runtime,
  sidecarUrl: string,
  receiver: OtlpReceiver,
  protocol: Protocol,
  captureContent: boolean,
): Promise<RunningEdge> {
  if (runtime === "node")
    return startNodeEdge({
      sidecarUrl,
      port: 0,
      trace: { url: `${receiver.url}/v1/traces`, protocol, serviceName: "llm-edge", captureContent },
    });
  const wrangler = await startWrangler({
    SIDECAR_URL: sidecarUrl,
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
    OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: String(captureContent),
  });
  return { url: wrangler.url, access: "", close: () => wrangler.stop() };
}

/**
 * Until `count` GenAI spans of the edge have come (sent within a second on Node; within each request's waitUntil by
 * the Worker).
 */
async function edgeSpansIn(receiver: OtlpReceiver, count = 4): Promise<void> {
  const ended = () =>
    receiver.spans.filter((span) => span.service === "llm-edge" && span.kind === CLIENT).length >= count;
  for (let waited = 0; !ended() && waited < 30_000; waited += 50)
    await new Promise((resolve) => setTimeout(resolve, 50));
}

/** One streamed chat, one text completion and one prompt too long for the context, traced; then both flushed. */
async function tracedRun(runtime: Runtime, protocol: Protocol, captureContent: boolean): Promise<Run> {
  const receiver: OtlpReceiver = await startOtlpReceiver();
  const sidecar: RunningSidecar = await startTestSidecar({
    trace: { url: `${receiver.url}/v1/traces`, protocol, serviceName: "llm-sidecar" },
  });
  const edge = await tracedEdge(runtime, sidecar.url, receiver, protocol, captureContent);
  try {
    const openai = new OpenAI({ baseURL: `${edge.url}/v1`, apiKey: "none", maxRetries: 0 });
    const headers = { traceparent: `00-${TRACE_ID}-${CLIENT_SPAN}-01` };
    const body = {
      model: "scripted",
      messages: [{ role: "user" as const, content: USER }],
      max_tokens: 40,
      temperature: 0.7,
      top_p: 0.9,
      seed: 7,
    };
    const { data: stream, response } = await openai.chat.completions
      .create({ ...body, stream: true }, { headers })
      .withResponse();
    let chatId = "";
    for await (const chunk of stream) chatId = chunk.id;
    await openai.completions.create({ model: "scripted", prompt: "Once upon a time", max_tokens: 20 });
    // A prompt longer than the test sidecar's context (256 tokens): the sidecar refuses it.
    const long = [{ role: "user" as const, content: "llama ".repeat(400) }];
    await openai.chat.completions.create({ model: "scripted", messages: long, max_tokens: 1 }).catch(() => undefined);
    const embedded = await openai.embeddings.create({ model: "scripted", input: "Hello" });
    const promptTokens = await chatPromptTokens(sidecar.url, USER);
    await edgeSpansIn(receiver);
    return {
      spans: receiver.spans,
      contentTypes: receiver.contentTypes,
      chatId,
      traceresponse: response.headers.get("traceresponse"),
      promptTokens,
      embeddingTokens: embedded.usage.prompt_tokens,
    };
  } finally {
    await edge.close();
    await sidecar.stop();
    await receiver.close();
  }
}

const one = (spans: readonly ReceivedSpan[], test: (span: ReceivedSpan) => boolean): ReceivedSpan => {
  const found = spans.filter(test);
  expect(found).toHaveLength(1);
  return found[0] as ReceivedSpan;
};

const RUNS = (["node", "workerd"] as const).flatMap((runtime) =>
  (["http/protobuf", "http/json"] as const).map((protocol) => [runtime, protocol] as const),
);

describe.each(RUNS)("traces from the edge on %s over %s", (runtime, protocol) => {
  let run: Run;
  beforeAll(async () => {
    run = await tracedRun(runtime, protocol, false);
  }, 120_000);

  it("exports in the protocol asked for", () => {
    expect(new Set(run.contentTypes)).toEqual(
      new Set([protocol === "http/json" ? "application/json" : "application/x-protobuf"]),
    );
  });

  it("continues the client's trace: HTTP server span → GenAI span → the sidecar's call and its steps", () => {
    const inTrace = run.spans.filter((span) => span.traceId === TRACE_ID);
    const http = one(inTrace, (span) => span.kind === SERVER && span.service === "llm-edge");
    expect(http).toMatchObject({ name: "POST /v1/chat/completions", parentSpanId: CLIENT_SPAN, statusCode: 0 });
    expect(http.attributes).toEqual({
      "http.request.method": "POST",
      "url.path": "/v1/chat/completions",
      "url.scheme": "http",
      "http.route": "/v1/chat/completions",
      "http.response.status_code": 200,
    });
    expect(run.traceresponse).toBe(`00-${TRACE_ID}-${http.spanId}-01`);
    const genAi = one(inTrace, (span) => span.kind === CLIENT);
    expect(genAi).toMatchObject({ name: "chat scripted", parentSpanId: http.spanId, service: "llm-edge" });
    const call = one(inTrace, (span) => span.service === "llm-sidecar" && span.kind === SERVER);
    expect(call).toMatchObject({ name: "inference.v1.InferenceService/Generate", parentSpanId: genAi.spanId });
    const steps = inTrace.filter((span) => span.parentSpanId === call.spanId);
    expect(steps.map((span) => span.name)).toEqual(["queue wait", "prompt evaluation", "decoding"]);
    const [queue, prompt, decode] = steps as [ReceivedSpan, ReceivedSpan, ReceivedSpan];
    expect([queue.endNs, prompt.endNs]).toEqual([prompt.startNs, decode.startNs]);
    expect(prompt.attributes).toEqual({
      "gen_ai.usage.input_tokens": run.promptTokens,
      "gen_ai.usage.cache_read.input_tokens": 0,
    });
    expect(decode.attributes).toEqual({
      "gen_ai.usage.output_tokens": CHAT_REPLY_TOKENS,
      "gen_ai.usage.reasoning.output_tokens": 0,
    });
    expect(inTrace).toHaveLength(6);
  });

  it("writes the GenAI attributes of the request and the reply", () => {
    const genAi = one(run.spans, (span) => span.name === "chat scripted" && span.traceId === TRACE_ID);
    expect(genAi.attributes).toEqual({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "llama.cpp",
      "gen_ai.request.model": "scripted",
      "gen_ai.request.stream": true,
      "gen_ai.request.max_tokens": 40,
      "gen_ai.request.temperature": 0.7,
      "gen_ai.request.top_p": 0.9,
      "gen_ai.request.seed": 7,
      "gen_ai.response.id": run.chatId,
      "gen_ai.response.model": "scripted",
      "gen_ai.response.finish_reasons": ["stop"],
      "gen_ai.usage.input_tokens": run.promptTokens,
      "gen_ai.usage.output_tokens": CHAT_REPLY_TOKENS,
      "gen_ai.usage.cache_read.input_tokens": 0,
      "gen_ai.usage.reasoning.output_tokens": 0,
    });
  });

  it("names a raw prompt's span text_completion, in a new trace", () => {
    const span = one(run.spans, (s) => s.name === "text_completion scripted");
    expect(span.traceId).not.toBe(TRACE_ID);
    expect(span.attributes).toMatchObject({
      "gen_ai.operation.name": "text_completion",
      "gen_ai.request.stream": false,
      "gen_ai.usage.output_tokens": 11,
    });
    expect(one(run.spans, (s) => s.spanId === span.parentSpanId).name).toBe("POST /v1/completions");
  });

  it("names an Embed call's span embeddings", () => {
    const span = one(run.spans, (s) => s.name === "embeddings scripted");
    expect(span.attributes).toEqual({
      "gen_ai.operation.name": "embeddings",
      "gen_ai.provider.name": "llama.cpp",
      "gen_ai.request.model": "scripted",
      "gen_ai.response.model": "scripted",
      "gen_ai.usage.input_tokens": run.embeddingTokens,
    });
    expect(run.embeddingTokens).toBeGreaterThan(0);
    expect(one(run.spans, (s) => s.spanId === span.parentSpanId).name).toBe("POST /v1/embeddings");
  });

  it("marks a failed request with error.type on both spans", () => {
    const genAi = one(
      run.spans,
      (span) => span.name === "chat scripted" && span.attributes["gen_ai.request.max_tokens"] === 1,
    );
    const http = one(run.spans, (span) => span.spanId === genAi.parentSpanId);
    expect(http.attributes["http.response.status_code"]).toBe(400);
    for (const span of [genAi, http])
      expect([span.statusCode, span.attributes["error.type"]]).toEqual([2, "invalid_request"]);
  });

  it("records no prompt or reply text", () => {
    const values = JSON.stringify(run.spans.map((span) => span.attributes));
    for (const text of [USER, CHAT_REPLY, STORY, "Once upon"]) expect(values).not.toContain(text);
  });
});

describe("traces with OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true", () => {
  it("records the request's messages and the reply's text on the GenAI span", async () => {
    const run = await tracedRun("node", "http/json", true);
    const genAi = one(run.spans, (span) => span.name === "chat scripted" && span.traceId === TRACE_ID);
    expect(JSON.parse(String(genAi.attributes["gen_ai.input.messages"]))).toEqual([{ role: "user", content: USER }]);
    expect(JSON.parse(String(genAi.attributes["gen_ai.output.messages"]))).toEqual([
      { role: "assistant", parts: [{ type: "text", content: CHAT_REPLY }] },
    ]);
    const story = one(run.spans, (span) => span.name === "text_completion scripted");
    expect(JSON.parse(String(story.attributes["gen_ai.output.messages"]))).toEqual([
      { role: "assistant", parts: [{ type: "text", content: STORY }] },
    ]);
  }, 60_000);
});

describe("traces off (no OTEL_EXPORTER_OTLP_ENDPOINT)", () => {
  it("answers without a traceresponse, the client's traceparent notwithstanding", async () => {
    const sidecar = await startTestSidecar();
    const edge = await startNodeEdge({ sidecarUrl: sidecar.url, port: 0 });
    try {
      const response = await fetch(`${edge.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", traceparent: `00-${TRACE_ID}-${CLIENT_SPAN}-01` },
        body: JSON.stringify({ model: "scripted", messages: [{ role: "user", content: USER }] }),
      });
      expect(response.status).toBe(200);
      expect(response.headers.get("traceresponse")).toBeNull();
      await response.arrayBuffer();
    } finally {
      await edge.close();
      await sidecar.stop();
    }
  }, 60_000);
});

describe("traces of a client that leaves, and of a native gRPC caller", () => {
  it("ends a stream's spans when its client leaves, with the event client_left; the sidecar's call with " +
    "cancelled", async () => {
    const receiver = await startOtlpReceiver();
    const url = `${receiver.url}/v1/traces`;
    const { "random-60m": model } = await ensureModels("models", ["random-60m"]);
    const sidecar = await startTestSidecar({
      model,
      sequences: 1,
      contextSize: 4096,
      trace: { url, protocol: "http/json", serviceName: "llm-sidecar" },
    });
    const edge = await startNodeEdge({
      sidecarUrl: sidecar.url,
      port: 0,
      trace: { url, protocol: "http/json", serviceName: "llm-edge", captureContent: false },
    });
    try {
      const client = new AbortController();
      const body = JSON.stringify({
        model: "m",
        messages: [{ role: "user", content: "Go on" }],
        max_tokens: 2000,
        stream: true,
      });
      const response = await fetch(`${edge.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
        signal: client.signal,
      });
      const reader = response.body?.getReader();
      await reader?.read();
      client.abort();
      await reader?.cancel().catch(() => undefined);
      await edgeSpansIn(receiver, 1); // the spans end once the edge has seen the client leave
    } finally {
      await edge.close();
      await sidecar.stop();
      await receiver.close();
    }
    const genAi = one(receiver.spans, (span) => span.kind === CLIENT);
    const http = one(receiver.spans, (span) => span.spanId === genAi.parentSpanId);
    for (const span of [genAi, http]) expect([span.events, span.statusCode]).toEqual([["client_left"], 0]);
    // The reply never finished: no finish reason and no usage, only the request's attributes and the response's id and
    // model.
    expect(
      Object.keys(genAi.attributes).filter(
        (key) => key.startsWith("gen_ai.usage.") || key === "gen_ai.response.finish_reasons",
      ),
    ).toEqual(["gen_ai.usage.input_tokens"]);
    const call = one(receiver.spans, (span) => span.service === "llm-sidecar" && span.kind === SERVER);
    expect([call.parentSpanId, call.events]).toEqual([genAi.spanId, ["cancelled"]]);
  }, 60_000);

  it("continues the traceparent of a native gRPC call's metadata", async () => {
    const receiver = await startOtlpReceiver();
    const sidecar = await startTestSidecar({
      trace: { url: `${receiver.url}/v1/traces`, protocol: "http/protobuf", serviceName: "llm-sidecar" },
    });
    try {
      const request = {
        model: "scripted",
        input: { case: "prompt" as const, value: "Once upon a time" },
        maxTokens: 4,
      };
      await collect(
        clientsFor(sidecar.url).grpc.generate(request, {
          headers: { traceparent: `00-${TRACE_ID}-${CLIENT_SPAN}-01` },
        }),
      );
    } finally {
      await sidecar.stop();
      await receiver.close();
    }
    const call = one(receiver.spans, (span) => span.kind === SERVER);
    expect(call).toMatchObject({
      traceId: TRACE_ID,
      parentSpanId: CLIENT_SPAN,
      name: "inference.v1.InferenceService/Generate",
    });
    expect(call.attributes).toEqual({
      "rpc.system": "grpc",
      "rpc.service": "inference.v1.InferenceService",
      "rpc.method": "Generate",
      "gen_ai.operation.name": "text_completion",
      "gen_ai.provider.name": "llama.cpp",
      "gen_ai.request.model": "scripted",
    });
  }, 60_000);
});
